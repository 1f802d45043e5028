"""Real recordings for the lyric benchmarks and tests, and the figures they are judged by.

Debian's `fretsonfire-songs-muldjord` holds four metal songs by Muldjord (sung; CC BY-SA 3.0) and
`fretsonfire-songs-sectoid` four instrumentals by Sectoid, each as the game's stems: `song.ogg` (the
band and the voice) and `guitar.ogg`. A song is the two mixed, as a listener hears it. Nothing of them
is kept in the repository: they are installed with apt (.ci/run) and mixed at run time.

The figures (issue 41): the segments of 3 or more words that Whisper hears over the whole song with no
gate, and how many of them a storyboard keeps in its lyric scenes (a segment counts when its middle lies
in one); over an instrumental, the words a storyboard's lyric scenes hold, per minute (all invented).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.core.ffmpeg import file_url
from musicvid.lyrics.transcript import Line

SONGS = Path("/usr/share/games/fretsonfire/data/songs")
SUNG = {
    name: SONGS / "muldjord" / name for name in ("chaos_god", "mutilated_mime", "armygeddon", "internal_degeneration")
}
INSTRUMENTAL = {
    name.replace(" ", "_").lower(): SONGS / "sectoid" / name
    for name in ("Escape from chaosland", "Feelings", "Metal madness", "War of freedom")
}
MIN_WORDS = 3  # a segment of fewer is not counted: a word or two may be a shout, or an invention


def installed() -> bool:
    return all((folder / "song.ogg").is_file() for folder in (*SUNG.values(), *INSTRUMENTAL.values()))


def mix(folder: Path, out: Path, start: float = 0.0, seconds: float | None = None) -> Path:
    """The song's stems mixed as the game plays them (summed, not normalized), as a WAV at `out`; with
    `start` and `seconds`, that part of it."""
    part = ["-ss", f"{start:.3f}", *(["-t", f"{seconds:.3f}"] if seconds else [])]
    command = [ffmpeg_exe(), "-v", "error", "-y", "-nostdin"]
    for stem in ("song.ogg", "guitar.ogg"):
        command += [*part, "-i", file_url(folder / stem)]
    command += ["-filter_complex", "amix=inputs=2:normalize=0", "-ac", "1", "-ar", "16000", file_url(out)]
    subprocess.run(command, check=True)
    return out


def counted(heard: list[Line]) -> list[Line]:
    """The segments of at least MIN_WORDS words."""
    return [segment for segment in heard if len(segment.text.split()) >= MIN_WORDS]


def kept_in_lyrics(heard: list[Line], scenes) -> int:
    """How many of the counted segments have their middle in a lyric scene."""
    lyric = [(s.start, s.end) for s in scenes if s.kind == "lyric"]
    middles = [(segment.start + segment.end) / 2 for segment in counted(heard)]
    return sum(any(a <= middle < b for a, b in lyric) for middle in middles)


def words_per_minute(scenes, duration: float) -> float:
    """The words the lyric scenes hold, per minute of song."""
    return sum(len(s.text.split()) for s in scenes if s.kind == "lyric") / (duration / 60)
