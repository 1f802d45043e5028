"""What to make a storyboard of, and how: everything before the pictures (musicvid.settings.render has
how to draw and encode them). A settings object checks itself when it is made (musicvid.settings.schema)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_SONG_SECONDS, MAX_TEXT_CHARS
from musicvid.settings.front_doors import Settings
from musicvid.settings.render import RenderSettings
from musicvid.settings.schema import option_name, setting
from vipe_core.choose import LENSES
from vipe_core.context import MAX_CONTEXT_SIZE

PLAIN = ".txt"
TIMED = (".lrc", ".srt", ".json")


@dataclass(frozen=True)
class SongRequest(Settings):
    """What to make a storyboard of, and how: everything before the pictures."""

    song: Path = setting(
        dataclasses.MISSING,
        "audio file (mp3, wav, flac, m4a, ogg, ... anything ffmpeg reads)",
        option=None,
        per_song=False,
        group="song",
        affects=("storyboard",),
    )
    title: str | None = setting(
        None,
        "song title (default: the file's tags, then its name)",
        longest=MAX_TEXT_CHARS,
        group="song",
        affects=("storyboard",),
    )
    artist: str | None = setting(
        None, "artist (default: the file's tags)", longest=MAX_TEXT_CHARS, group="song", affects=("storyboard",)
    )
    workdir: Path | None = setting(
        None,
        "work directory (default musicvid-work/<song>-<hash>/)",
        per_song=False,
        group="video",
        affects=("nothing",),
    )
    storyboard_file: Path | None = setting(
        None,
        "render this (edited) storyboard.json instead of making one",
        option="storyboard",
        group="song",
        affects=("storyboard",),
    )
    lyrics_file: Path | None = setting(
        None,
        "the lyrics: timed (.lrc, .srt, transcript .json; Whisper only translates them) or plain lines (.txt; Whisper times them)",
        option="lyrics",
        group="song",
        affects=("storyboard",),
    )
    language: str | None = setting(
        None,
        "the song's language, as Whisper's code or name (pl, polish): Whisper hears, aligns and translates the lyrics "
        "in it (default: Whisper guesses it from the singing)",
        group="song",
        affects=("storyboard",),
    )
    context_size: int | None = setting(
        None,
        "lyric lines before each line that ViPE reads (default: as many as its checkpoint learned to read, 7 for the "
        "released ViPE)",
        low=0,
        high=MAX_CONTEXT_SIZE,
        group="song",
        affects=("storyboard",),
    )
    seed: int = setting(
        0, "seed for prompts and pictures", low=0, high=2**31 - 1, group="song", affects=("storyboard",)
    )
    break_seconds: float = setting(
        4.0,
        "instrumental gaps at least this long (s) become scenes of their own",
        above=0,
        high=MAX_SONG_SECONDS,  # the longest song taken: a longer gap is none, and inf is no JSON number
        option="break",
        group="song",
        affects=("storyboard",),
    )
    bars_per_scene: int = setting(
        4,
        "pictures last at most N bars where nobody sings (more: calmer)",
        low=1,
        high=64,
        group="song",
        affects=("storyboard",),
    )
    candidates: int = setting(
        1,
        "prompt candidates per scene: ViPE elaborations, of which the most concrete (or the one --lens favours) is kept",
        low=1,
        high=64,
        group="song",
        affects=("storyboard",),
    )
    lens: str | None = setting(
        None,
        "the reading of each line the choice among --candidates favours",
        choices=LENSES,
        group="song",
        affects=("storyboard",),
    )
    separate_vocals: bool = setting(
        False,
        "take the band away (Demucs htdemucs) before Whisper listens: for loud mixes",
        group="song",
        affects=("storyboard",),
    )
    overwrite: bool = setting(
        False,
        "replace files at the outputs' names that musicvid did not write for this song (a hand-made .srt, "
        "another song's video); without it they are refused before any work",
        per_song=False,
        group="video",
        affects=("nothing",),
    )
    quiet: bool = setting(False, "no progress bars", short="q", per_song=False, group="video", affects=("nothing",))
    max_seconds: float = setting(
        MAX_SONG_SECONDS,
        "longer songs are refused before they are decoded",
        above=0,
        option=None,
        per_song=False,
        group="song",
        affects=("nothing",),
    )

    def check_together(self) -> None:
        for name, default in (("title", "the file's tags, then its name"), ("artist", "the file's tags")):
            if (text := getattr(self, name)) is not None and not text.strip():  # (the page's empty box: the default)
                raise UserError(f"--{name} is blank: give the song's {name}, or leave it out for {default}")
        if self.lens is not None and self.candidates < 2:
            raise UserError("--lens chooses among several elaborations: add --candidates N (2 or more, e.g. 8)")


# The song (its audio), the storyboard file and the lyrics (karaoke's word times) serve a render of a storyboard; every
# other setting that affects the storyboard alone only makes one (the title and artist ViPE reads: a storyboard file
# holds its own; the seed its scenes' seeds): beside a storyboard file, whose scenes are made, it would do nothing.
MAKING_ONLY = tuple(
    name for name in SongRequest.affecting("storyboard") if name not in ("song", "storyboard_file", "lyrics_file")
)


def making_only(given: Mapping[str, Any]) -> str:
    """The settings `given` (by field name) that only make a storyboard (MAKING_ONLY), said as such ("--seed only
    acts where a storyboard is made"); "" where none is given."""
    options = [f"--{option_name(SongRequest.fields()[n])}" for n in MAKING_ONLY if given.get(n, False) is not False]
    act = "acts" if len(options) == 1 else "act"
    return f"{', '.join(options)} only {act} where a storyboard is made" if options else ""


def inputs_of(request: SongRequest, settings: RenderSettings | None = None) -> dict[str, Path]:
    """The files a request names, by what each is: the song, lyrics, storyboard file and reference picture."""
    inputs = {"song": request.song, "lyrics file": request.lyrics_file, "storyboard": request.storyboard_file}
    inputs["reference picture"] = settings.reference if settings else None
    return {what: path for what, path in inputs.items() if path is not None}
