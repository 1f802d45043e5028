"""The storyboard: scenes that tile the song, each with the visual prompt and seed it is drawn with.

`storyboard.json` is the one file a user edits to change the video, so loading it checks every rule
and names the field that breaks one. The format: docs/storyboard.md.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Collection, Mapping

from musicvid.core.errors import UserError
from musicvid.core.files import JsonFields, as_written, check_json, invalid, parse_json, read_text, resolved
from musicvid.core.paths import file_version
from musicvid.lyrics.known import MAX_LYRICS_CHARS
from musicvid.lyrics.languages import language_code
from musicvid.lyrics.transcript import UNSEEN, UNSURE_BELOW, excerpt, no_controls, short_text
from musicvid.storyboard.made_with import MADE_TEXTS, MadeWith, made_with
from musicvid.storyboard.picks import PICK_FIELDS, KeyframePick, parse_pick
from vipe_core.context import SCENE_KINDS

VERSION = 1
TIME_TOLERANCE = 1e-3
# Scenes a storyboard may have: each is a form reading, an elaboration and a keyframe. Lyrics hold at most
# two lines a second (musicvid.lyrics.known), and each line may be followed by a break: four scenes a second
# (2.5 frames each at 10 fps) is more than any song's storyboard, and 5,000 more than an hour-long song's.
MAX_SCENES_PER_SECOND = 4
MAX_SCENES = 5_000
MAX_NOTES_CHARS = 1_000_000  # a person's own keys in a storyboard, as JSON (each at most MAX_LYRICS_CHARS)
# The parts of a song a scene can be in (musicvid.storyboard.form); a scene without words is in its kind's.
SECTIONS = ("intro", "verse", "chorus", "bridge", "break", "outro")
# Why a scene without words starts inside its passage (musicvid.storyboard.passages): the music changes there, or a
# passage's bars were counted out.
CUTS = ("music", "bars")
# A storyboard file's objects, numbers and strings, checked in one pass (musicvid.core.files.check_json) before the
# rules that tie its fields together; a settings that is no object is refused by made_with, or read as none.
SCENE_FIELDS = JsonFields(
    {
        **dict.fromkeys(("start", "end"), "number"),
        **dict.fromkeys(("text", "prompt"), "string"),
        **dict.fromkeys(("text_en", "picture", "reference", "motif", "mood"), "string?"),
        "confidence": "share",
        "pick": PICK_FIELDS,
    },
    required=("index", "kind", "start", "end", "text", "prompt", "seed"),
)
STORYBOARD_FIELDS = JsonFields(
    {
        "audio": JsonFields({"duration": "number", "path": "string?", "sha256": "string?"}),
        "settings": JsonFields(dict.fromkeys(MADE_TEXTS, "string?"), refused=None),
        "scenes": [SCENE_FIELDS],
        **dict.fromkeys(("title", "artist", "language"), "string?"),
    }
)


@dataclass(frozen=True)
class Scene:
    index: int
    kind: str
    start: float
    end: float
    text: str = ""
    prompt: str = ""
    seed: int = 0
    text_en: str | None = None  # English for ViPE when the lyric is in another language
    fallback: bool = False  # ViPE gave nothing usable, so the prompt is the lyric itself
    confidence: float | None = None  # the recognizer's or aligner's, 0..1, for a lyric scene
    picture: str | None = None  # a pinned picture (an image file): the scene's keyframe, instead of drawn
    section: str | None = None  # one of SECTIONS; None until the song's form is read (musicvid.storyboard.form)
    motif: str | None = None  # shared by every return of a chorus line: one seed, one prompt
    mood: str | None = None  # a passage without words: how it sounds, in a few words ViPE reads
    reference: str | None = None  # a picture whose appearance the scene takes (IP-Adapter), instead of --reference's
    pick: KeyframePick | None = None  # the kept keyframe candidate and its scores (musicvid.storyboard.picks)
    cut: str | None = None  # one of CUTS: why a scene without words starts inside its passage
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)  # a person's own keys, written back as given

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def unsure(self) -> bool:
        """Whether the lyric may be misheard or misplaced (the person should check it)."""
        return self.confidence is not None and self.confidence < UNSURE_BELOW

    @property
    def english(self) -> str:
        return self.text_en or self.text

    def to_json(self) -> dict:
        data = asdict(self)
        data["pick"] = self.pick.to_json() if self.pick else None
        if not data["fallback"]:
            del data["fallback"]
        notes = data.pop("notes")
        return {key: value for key, value in data.items() if value is not None} | notes


@dataclass(frozen=True)
class SongAudio:
    """The song a storyboard is of: its file and that file's SHA-256 where they are known, and its length."""

    duration: float
    path: str | None = None
    sha256: str | None = None
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)  # a person's own keys, written back

    def to_json(self) -> dict:
        known = {"path": self.path, "sha256": self.sha256, "duration": self.duration}
        return {key: value for key, value in known.items() if value is not None} | dict(self.notes)


@dataclass(frozen=True)
class Storyboard:
    audio: SongAudio
    title: str = ""
    artist: str = ""
    language: str = "en"
    settings: MadeWith = MadeWith()
    scenes: tuple[Scene, ...] = ()
    version: int = VERSION
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)  # a person's own keys, written back

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenes", tuple(self.scenes))  # (given as a list too: kept as a tuple)

    @property
    def duration(self) -> float:
        return self.audio.duration

    @property
    def unwritten(self) -> bool:
        """Whether a scene's prompt is empty: ViPE writes it (musicvid.storyboard.elaborate)."""
        return any(not scene.prompt.strip() for scene in self.scenes)

    def picture_files(self) -> dict[str, Path]:
        """The pictures its scenes name, by what each is: pinned pictures and reference pictures."""
        pictures = {}
        for scene in self.scenes:
            pictures[f"pinned picture of scene {scene.index}"] = Path(scene.picture) if scene.picture else None
            pictures[f"reference picture of scene {scene.index}"] = Path(scene.reference) if scene.reference else None
        return {what: path for what, path in pictures.items() if path is not None}

    def with_scenes(self, changed: dict[int, Scene]) -> Storyboard:
        """This storyboard with the scenes of `changed` (by index) in place of its own."""
        return replace(self, scenes=tuple(changed.get(scene.index, scene) for scene in self.scenes))

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "audio": self.audio.to_json(),
            "title": self.title,
            "artist": self.artist,
            "language": self.language,
            "settings": self.settings.to_json(),
            "scenes": [s.to_json() for s in self.scenes],
        } | dict(self.notes)

    def text(self) -> str:
        """As storyboard.json holds it; only if its own loader would take it back (a rerun must never be refused its
        own file)."""
        data = self.to_json()
        parse_storyboard(data)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def scene_seed(seed: int, index: int | str) -> int:
    """A seed per scene (by its index) or per motif (by its name: every return of a chorus line is drawn
    from the same noise), derived from the render seed; stable across runs and machines."""
    digest = hashlib.sha256(f"musicvid:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


# --- loading and checking a storyboard file --------------------------------------------------------


# The keys of the file that are its fields: any other is a person's note (Scene.notes, Storyboard.notes, and the
# notes of a scene's pick, of the audio and of the settings)
SCENE_KEYS = Scene.__dataclass_fields__.keys() - {"notes"}
BOARD_KEYS = Storyboard.__dataclass_fields__.keys() - {"notes"}
AUDIO_KEYS = SongAudio.__dataclass_fields__.keys() - {"notes"}
PICK_KEYS = KeyframePick.__dataclass_fields__.keys() - {"notes"}
SETTINGS_KEYS = MadeWith().to_json().keys()


def parse_storyboard(data: Any, source: str = "") -> Storyboard:
    """Check every rule of the storyboard format (docs/storyboard.md) and build the storyboard,
    or name the field and the reason."""
    document = f"storyboard {source}"
    if not isinstance(data, dict):
        raise invalid(document, "the file", "must hold a JSON object")
    if type(data.get("version")) is not int or data["version"] != VERSION:  # (true and 1.0 are no version)
        raise invalid(document, "version", f"must be {VERSION}, got {as_written(data.get('version'))}")
    for key in ("audio", "scenes"):
        if key not in data:
            raise invalid(document, key, "is missing")
    audio = data["audio"]
    if not isinstance(audio, dict) or "duration" not in audio:
        raise invalid(document, "audio.duration", "is missing")
    for i, raw in enumerate(data["scenes"] if isinstance(data["scenes"], list) else []):
        _check_spelling(raw, document, f"scenes[{i}]")
    check_json(data, STORYBOARD_FIELDS, document)
    duration = float(audio["duration"])
    if duration <= 0:
        raise invalid(document, "audio.duration", "must be positive")
    raw_settings = {} if data.get("settings") is None else data["settings"]
    settings = made_with(raw_settings, document)
    settings = replace(settings, notes=_notes(raw_settings, SETTINGS_KEYS, document, "settings."))
    raw_scenes = data["scenes"]
    if not isinstance(raw_scenes, list) or not raw_scenes:
        raise invalid(document, "scenes", "must be a non-empty list")
    most = min(MAX_SCENES, max(1, math.floor(duration * MAX_SCENES_PER_SECOND)))
    if len(raw_scenes) > most:
        raise invalid(
            document,
            "scenes",
            f"must be at most {most} for {duration:g} s of song ({MAX_SCENES_PER_SECOND} a second, {MAX_SCENES:,} in "
            f"all), got {len(raw_scenes):,}",
        )

    scenes: list[Scene] = []
    for i, raw in enumerate(raw_scenes):
        scene, at = _scene(raw, i, document), f"scenes[{i}]"
        if not scenes and abs(scene.start) > TIME_TOLERANCE:
            raise invalid(document, f"{at}.start", f"must be 0 (the first scene starts the song), got {scene.start}")
        if scenes and abs(scene.start - scenes[-1].end) > TIME_TOLERANCE:
            what = (
                "overlaps the scene before" if scene.start < scenes[-1].end else "leaves a gap after the scene before"
            )
            raise invalid(
                document,
                f"{at}.start",
                f"must equal scenes[{i - 1}].end ({scenes[-1].end}), got {scene.start}: it {what}",
            )
        scenes.append(scene)
    if abs(scenes[-1].end - duration) > TIME_TOLERANCE:
        last = f"scenes[{len(scenes) - 1}].end"  # (either may be the one edited: both named)
        raise UserError(
            f"{document}: audio.duration ({duration:.10g}) is not where the last scene ends ({last}: "
            f"{scenes[-1].end:.10g}): the scenes run to the song's end"
        )
    if audio.get("sha256") and not re.fullmatch(r"[0-9a-f]{64}", audio["sha256"]):  # ("" or none: not recorded)
        raise invalid(
            document, "audio.sha256", f"must be the song's SHA-256 (64 hex digits), got {as_written(audio['sha256'])}"
        )
    notes = _notes(data, BOARD_KEYS, document, "")
    song = SongAudio(duration, audio.get("path"), audio.get("sha256"), _notes(audio, AUDIO_KEYS, document, "audio."))
    picks = [scene.pick.notes for scene in scenes if scene.pick]
    owns = [notes, song.notes, settings.notes, *(scene.notes for scene in scenes), *picks]
    noted = sum(len(json.dumps(own, ensure_ascii=False)) for own in owns)
    if noted > MAX_NOTES_CHARS:  # (each is written back at every run)
        raise invalid(document, "the file", f"holds {noted:,} characters of notes, more than {MAX_NOTES_CHARS:,}")
    return Storyboard(
        audio=song,
        title=_text(data, "title", "", document),
        artist=_text(data, "artist", "", document),
        language=language_code(_text(data, "language", "en", document).strip() or "en", f"{document}: language"),
        settings=settings,
        scenes=scenes,
        notes=notes,
    )


def _notes(raw: dict, known: Collection[str], document: str, at: str) -> dict[str, Any]:
    """A person's own keys beside the fields `known` (a note on a scene): kept, and written back as given, each no
    longer as JSON than a lyric may be (the file is written back at every run)."""
    notes = {key: value for key, value in raw.items() if key not in known}
    for key, value in notes.items():
        if (length := len(json.dumps({key: value}, ensure_ascii=False))) > MAX_LYRICS_CHARS:
            named = key if len(key) <= 40 else f"{excerpt(key)} (a key of {len(key):,} characters)"
            raise invalid(document, f"{at}{named}", f"must be at most {MAX_LYRICS_CHARS:,} characters, got {length:,}")
    return notes


def _check_spelling(raw: Any, document: str, at: str) -> None:
    """Refuse a key that is a scene's field misspelt (`promt`, `Picture`) where that field is not there: an edit that
    would be ignored. Other keys (a person's notes) are left alone."""
    for key in raw.keys() - SCENE_KEYS if isinstance(raw, dict) else ():
        meant = difflib.get_close_matches(str(key).lower(), SCENE_KEYS - raw.keys(), n=1, cutoff=0.8)
        if meant:
            raise invalid(document, f"{at}.{key}", f"is no field of a scene: is it {meant[0]}?")


def _scene(raw: dict, i: int, document: str) -> Scene:
    """Scene `i` of a storyboard, the rules of its own fields checked (their kinds were, by check_json; how it tiles
    the song is checked by the caller)."""
    at = f"scenes[{i}]"
    if type(raw["index"]) is not int or raw["index"] != i:
        raise invalid(
            document, f"{at}.index", f"must be {i} (scenes are numbered in order), got {as_written(raw['index'])}"
        )
    if raw["kind"] not in SCENE_KINDS:
        raise invalid(document, f"{at}.kind", f"must be one of {', '.join(SCENE_KINDS)}, got {as_written(raw['kind'])}")
    start, end = float(raw["start"]), float(raw["end"])
    seed = raw["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise invalid(document, f"{at}.seed", f"must be an integer from 0 to 2^32-1, got {as_written(seed)}")
    if end <= start:
        raise invalid(document, f"{at}.end", f"must be after its start ({start}), got {end}")
    text_en = raw.get("text_en")
    if text_en is not None:
        _lyric(text_en, document, f"{at}.text_en")
    fallback = raw.get("fallback", False)
    if not isinstance(fallback, bool):
        raise invalid(document, f"{at}.fallback", f"must be true or false, got {as_written(fallback)}")
    picture, reference = raw.get("picture"), raw.get("reference")
    for key, value in (("picture", picture), ("reference", reference)):
        if value is not None and not value.strip():
            raise invalid(document, f"{at}.{key}", "must name an image file, or be left out")
    section = raw.get("section") or None  # emptied (""): read from the song again, as an emptied motif or mood
    if section is not None and section not in SECTIONS:
        raise invalid(document, f"{at}.section", f"must be one of {', '.join(SECTIONS)}, got {as_written(section)}")
    cut = raw.get("cut")
    if cut is not None and cut not in CUTS:
        raise invalid(document, f"{at}.cut", f"must be one of {', '.join(CUTS)}, got {as_written(cut)}")
    if cut is not None and raw["kind"] == "lyric":  # (a lyric scene starts where its line is sung)
        raise invalid(
            document, f"{at}.cut", "says why a scene without words starts where it does: leave it out of a lyric scene"
        )
    motif, mood = (raw.get(key) for key in ("motif", "mood"))
    for key, value in (("motif", motif), ("mood", mood)):
        if value is not None:
            _lyric(value, document, f"{at}.{key}")
    return Scene(
        i,
        raw["kind"],
        start,
        end,
        _lyric(raw["text"], document, f"{at}.text"),
        _lyric(raw["prompt"], document, f"{at}.prompt"),
        seed,
        text_en,
        fallback,
        raw.get("confidence"),
        picture,
        section,
        motif or None,
        mood or None,
        reference,
        None if raw.get("pick") is None else _pick(raw["pick"], document, f"{at}.pick"),
        cut,
        _notes(raw, SCENE_KEYS, document, f"{at}."),
    )


def _pick(raw: dict, document: str, at: str) -> KeyframePick:
    return replace(parse_pick(raw, document, at), notes=_notes(raw, PICK_KEYS, document, f"{at}."))


def load_storyboard(path: str | Path) -> Storyboard:
    """The storyboard file at `path`, every field checked, its pictures named from its folder; read once per version
    of the file (file_version) in a process: the run's first step checks it, its storyboard stage takes it."""
    path = Path(path)
    try:
        return _storyboard_file(path, file_version(path.stat()))
    except OSError:  # (read_text's check_file says why, in its words)
        return _storyboard_file(path, None)


@lru_cache(maxsize=16)
def _storyboard_file(path: Path, version: tuple[int, ...] | None) -> Storyboard:
    storyboard = parse_storyboard(parse_json(read_text(path, "storyboard"), f"storyboard {path}"), str(path))

    def from_folder(name: str | None) -> str | None:  # a picture named relative to the file: from its folder
        return str(resolved(path.parent / name)) if name and not Path(name).is_absolute() else name

    return replace(
        storyboard,
        scenes=[
            replace(s, picture=from_folder(s.picture), reference=from_folder(s.reference)) for s in storyboard.scenes
        ],
    )


def _text(data: dict, key: str, default: str, document: str) -> str:
    """The storyboard's title, artist or language: text a person may write (null or left out: `default`)."""
    value = data.get(key)
    return short_text(value, document, key) if value else default


def _lyric(value: Any, document: str, at: str) -> str:
    """A scene's lyric, prompt or mood: text, no longer than lyrics may be and without their control characters
    (musicvid.lyrics.known), and with no UNSEEN character, as every lyric read (a bidi override turned a caption)."""
    if len(value) > MAX_LYRICS_CHARS:
        raise invalid(document, at, f"must be at most {MAX_LYRICS_CHARS:,} characters, got {len(value):,}")
    return UNSEEN.sub("", no_controls(value, document, at))
