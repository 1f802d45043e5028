"""The storyboard: scenes that tile the song, each with the visual prompt and seed it is drawn with.

`storyboard.json` is the one file a user edits to change the video, so loading it checks every rule
and names the field that breaks one. The format: docs/storyboard.md.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from musicvid.errors import UserError
from musicvid.files import check_file, invalid, json_number, json_share, json_string, parse_json, resolved
from musicvid.lyrics.transcript import UNSURE_BELOW, Line
from musicvid.picks import KeyframePick, parse_pick
from musicvid.settings import SongRequest
from vipe_core.atomic import write_json
from vipe_core.context import SCENE_KINDS

VERSION = 1
MIN_INTRO_SECONDS = 1.0  # a shorter lead-in belongs to the first line
# Without the audio at hand, longer instrumental stretches are split for variety; a storyboard made of a song
# cuts them with its music instead (musicvid.passages).
MAX_INSTRUMENTAL_SECONDS = 20.0
TIME_TOLERANCE = 1e-3
# Scenes a storyboard may have: each is a form reading, an elaboration and a keyframe. Lyrics hold at most
# two lines a second (musicvid.lyrics.known), and each line may be followed by a break: four scenes a second
# (2.5 frames each at 10 fps) is more than any song's storyboard, and 5,000 more than an hour-long song's.
MAX_SCENES_PER_SECOND = 4
MAX_SCENES = 5_000
# The parts of a song a scene can be in (musicvid.form); a scene without words is in its kind's.
SECTIONS = ("intro", "verse", "chorus", "bridge", "break", "outro")
# Why a scene without words starts inside its passage (musicvid.passages): the music changes there, or a
# passage's bars were counted out.
CUTS = ("music", "bars")


@dataclass
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
    section: str | None = None  # one of SECTIONS; None until the song's form is read (musicvid.form)
    motif: str | None = None  # shared by every return of a chorus line: one seed, one prompt
    mood: str | None = None  # a passage without words: how it sounds, in a few words ViPE reads
    reference: str | None = None  # a picture whose look the scene takes (IP-Adapter), instead of --reference's
    pick: KeyframePick | None = None  # the kept keyframe candidate and its scores (musicvid.picks)
    cut: str | None = None  # one of CUTS: why a scene without words starts inside its passage

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
        return {key: value for key, value in data.items() if value is not None}


@dataclass
class Storyboard:
    audio: dict[str, Any]  # path, sha256, duration
    title: str
    artist: str
    language: str
    settings: dict[str, Any]
    scenes: list[Scene] = field(default_factory=list)
    version: int = VERSION

    @property
    def duration(self) -> float:
        return float(self.audio["duration"])

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "audio": self.audio,
            "title": self.title,
            "artist": self.artist,
            "language": self.language,
            "settings": self.settings,
            "scenes": [s.to_json() for s in self.scenes],
        }

    def save(self, path: Path) -> None:
        """Written only if its own loader would take it back (a rerun must never be refused its own file)."""
        data = self.to_json()
        parse_storyboard(data, str(path))
        write_json(path, data)


def scene_seed(seed: int, index: int | str) -> int:
    """A seed per scene (by its index) or per motif (by its name: every return of a chorus line is drawn
    from the same noise), derived from the render seed; stable across runs and machines."""
    digest = hashlib.sha256(f"musicvid:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _instrumental(kind: str, start: float, end: float, max_length: float) -> list[Scene]:
    """One scene of `kind`, or several equal ones where the stretch is long."""
    parts = max(1, math.ceil((end - start) / max_length - 1e-9))
    step = (end - start) / parts
    bounds = [start + i * step for i in range(parts)] + [end]
    return [Scene(-1, kind, bounds[i], bounds[i + 1]) for i in range(parts)]


def plan_scenes(
    lines: list[Line],
    duration: float,
    break_seconds: float = SongRequest.break_seconds,
    max_instrumental: float = MAX_INSTRUMENTAL_SECONDS,
) -> list[Scene]:
    """Scenes that tile [0, duration]: intro, one lyric scene per line, breaks, outro.

    A lyric scene lasts until the next line starts; if the gap after the line's end is at least
    `break_seconds`, the gap becomes a break (or the outro, after the last line). Lines that start
    together (overlapping or zero-length Whisper segments) share one scene. No lines: an
    instrumental storyboard.
    """
    if duration <= 0:
        raise UserError("the song has no duration")
    # Lines with monotone starts inside the song; lines starting together are merged.
    merged: list[Line] = []
    for line in lines:
        start = min(max(line.start, merged[-1].start if merged else 0.0), duration)
        end = min(max(line.end, start), duration)
        if merged and start - merged[-1].start < TIME_TOLERANCE:
            merged[-1] = Line(
                merged[-1].start,
                max(merged[-1].end, end),
                f"{merged[-1].text} {line.text}".strip(),
                _join(merged[-1].text_en, line.text_en),
                confidence=_least(merged[-1].confidence, line.confidence),
            )
        elif start < duration:
            merged.append(Line(start, end, line.text, line.text_en, confidence=line.confidence))
    if not merged:
        return numbered(_instrumental("intro", 0.0, duration, max_instrumental))

    scenes: list[Scene] = []
    if merged[0].start >= MIN_INTRO_SECONDS:
        scenes += _instrumental("intro", 0.0, merged[0].start, max_instrumental)
    else:
        merged[0].start = 0.0
    for i, line in enumerate(merged):
        last = i + 1 == len(merged)
        following = duration if last else merged[i + 1].start
        sung_until = min(max(line.end, line.start), following)
        if following - sung_until >= break_seconds and sung_until > line.start:
            scenes.append(
                Scene(-1, "lyric", line.start, sung_until, line.text, text_en=line.text_en, confidence=line.confidence)
            )
            scenes += _instrumental("outro" if last else "break", sung_until, following, max_instrumental)
        else:
            scenes.append(
                Scene(-1, "lyric", line.start, following, line.text, text_en=line.text_en, confidence=line.confidence)
            )
    return numbered(scenes)


def _join(a: str | None, b: str | None) -> str | None:
    return " ".join(x for x in (a, b) if x) or None


def _least(a: float | None, b: float | None) -> float | None:
    return min((x for x in (a, b) if x is not None), default=None)


def numbered(scenes: list[Scene]) -> list[Scene]:
    for i, scene in enumerate(scenes):
        scene.index = i
    return scenes


# --- loading and checking a storyboard file --------------------------------------------------------


def parse_storyboard(data: Any, source: str = "") -> Storyboard:
    """Check every rule of the storyboard format (docs/storyboard.md) and build the storyboard,
    or name the field and the reason."""
    document = f"storyboard {source}"
    if not isinstance(data, dict):
        raise invalid(document, "the file", "must hold a JSON object")
    if data.get("version") != VERSION:
        raise invalid(document, "version", f"must be {VERSION}, got {data.get('version')!r}")
    for key in ("audio", "scenes"):
        if key not in data:
            raise invalid(document, key, "is missing")
    audio = data["audio"]
    if not isinstance(audio, dict) or "duration" not in audio:
        raise invalid(document, "audio.duration", "is missing")
    duration = json_number(audio["duration"], document, "audio.duration")
    if duration <= 0:
        raise invalid(document, "audio.duration", "must be positive")
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise invalid(document, "settings", "must be an object")
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
        raise invalid(
            document, f"scenes[{len(scenes) - 1}].end", f"must equal audio.duration ({duration}), got {scenes[-1].end}"
        )
    return Storyboard(
        audio=audio,
        title=str(data.get("title") or ""),
        artist=str(data.get("artist") or ""),
        language=str(data.get("language") or "en"),
        settings=settings,
        scenes=scenes,
    )


def _scene(raw: Any, i: int, document: str) -> Scene:
    """Scene `i` of a storyboard, its own fields checked (how it tiles the song is checked by the caller)."""
    at = f"scenes[{i}]"
    if not isinstance(raw, dict):
        raise invalid(document, at, "must be an object")
    for key in ("index", "kind", "start", "end", "text", "prompt", "seed"):
        if key not in raw:
            raise invalid(document, f"{at}.{key}", "is missing")
    if raw["index"] != i:
        raise invalid(document, f"{at}.index", f"must be {i} (scenes are numbered in order), got {raw['index']!r}")
    if raw["kind"] not in SCENE_KINDS:
        raise invalid(document, f"{at}.kind", f"must be one of {', '.join(SCENE_KINDS)}, got {raw['kind']!r}")
    start = json_number(raw["start"], document, f"{at}.start")
    end = json_number(raw["end"], document, f"{at}.end")
    seed = raw["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise invalid(document, f"{at}.seed", f"must be an integer from 0 to 2^32-1, got {seed!r}")
    if end <= start:
        raise invalid(document, f"{at}.end", f"must be after its start ({start}), got {end}")
    text_en = raw.get("text_en")
    if text_en is not None:
        json_string(text_en, document, f"{at}.text_en")
    fallback = raw.get("fallback", False)
    if not isinstance(fallback, bool):
        raise invalid(document, f"{at}.fallback", f"must be true or false, got {fallback!r}")
    picture, reference = raw.get("picture"), raw.get("reference")
    for key, value in (("picture", picture), ("reference", reference)):
        if value is not None and not json_string(value, document, f"{at}.{key}").strip():
            raise invalid(document, f"{at}.{key}", "must name an image file, or be left out")
    section = raw.get("section")
    if section is not None and section not in SECTIONS:
        raise invalid(document, f"{at}.section", f"must be one of {', '.join(SECTIONS)}, got {section!r}")
    cut = raw.get("cut")
    if cut is not None and cut not in CUTS:
        raise invalid(document, f"{at}.cut", f"must be one of {', '.join(CUTS)}, got {cut!r}")
    motif, mood = (raw.get(key) for key in ("motif", "mood"))
    for key, value in (("motif", motif), ("mood", mood)):
        if value is not None:
            json_string(value, document, f"{at}.{key}")
    return Scene(
        i,
        raw["kind"],
        start,
        end,
        json_string(raw["text"], document, f"{at}.text"),
        json_string(raw["prompt"], document, f"{at}.prompt"),
        seed,
        text_en,
        fallback,
        json_share(raw.get("confidence"), document, f"{at}.confidence"),
        picture,
        section,
        motif or None,
        mood or None,
        reference,
        None if raw.get("pick") is None else parse_pick(raw["pick"], document, f"{at}.pick"),
        cut,
    )


def load_storyboard(path: str | Path) -> Storyboard:
    path = Path(path)
    check_file(path, "storyboard")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"storyboard {path} is not UTF-8 text") from None
    storyboard = parse_storyboard(parse_json(text, f"storyboard {path}"), str(path))
    for scene in storyboard.scenes:  # a picture named relative to the file: from its folder
        if scene.picture and not Path(scene.picture).is_absolute():
            scene.picture = str(resolved(path.parent / scene.picture))
        if scene.reference and not Path(scene.reference).is_absolute():
            scene.reference = str(resolved(path.parent / scene.reference))
    return storyboard
