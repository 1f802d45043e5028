"""A batch row's files against its song's length, before the first render: its lyrics (as many lines as the song
can hold, one timed line inside it) and its storyboard's duration; and a song too short for one frame. A render
refuses these only once its song is decoded; in a batch that is at the row's turn, after the rows before it have had
hours of GPU time. The length is the one the song's header declares (no decoding), with the lengths the song may
decode to and render from it; a header that declares none leaves the row to its turn."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from musicvid.core.audio import shortest_whole
from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import declared_duration
from musicvid.lyrics.known import check_line_count, read_lyrics, read_plain_lyrics
from musicvid.pictures.schedule import check_one_frame
from musicvid.prepare import Checked
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.make import check_matches_audio

# A header's length need not be what decodes (a container's rounding, an encoder's padding; ffmpeg's estimates from
# the bit rate are no length at all: ffmpeg.parse_duration): a song is taken to decode to at most this fraction more
# than it declares. Less than shortest_whole's, the render refuses it as cut off.
HEADER_SLACK = 0.1


def check_row_length(request: SongRequest, settings: RenderSettings, checked: Checked) -> str | None:
    """The row against its song's declared length (`checked`: its files as check_before_work read them): the
    sentence it fails with at its turn where the song is too short for one frame (too_short); else its files refused
    where they fit no length it may decode to (check_fits_song). None: left to the render (no length declared)."""
    seconds = declared_duration(request.song, sound=True)
    if seconds is None:
        return None
    if short := too_short(seconds, settings.fps):
        return short
    check_fits_song(request, settings, checked, seconds)
    return None


def too_short(seconds: float, fps: float) -> str | None:
    """Why a song whose header declares `seconds` is too short to make a video of (under one frame at `fps` at every
    length it may decode to), the sentence the render refuses it with; None where it may be long enough. Such a song
    (a stray click in an album's folder) is one musicvid cannot take, as an empty file is: its row fails at its
    turn, the others made."""
    try:
        check_one_frame(seconds, fps)
    except UserError as e:
        return str(e) if refuses(lambda most: check_one_frame(most, fps), seconds * (1 + HEADER_SLACK)) else None
    return None


def check_fits_song(request: SongRequest, settings: RenderSettings, checked: Checked, seconds: float) -> None:
    """Refuse, as the render would once it decoded the song, a row whose files do not fit its song at any length it
    may decode to and render, from its declared length (`seconds`). Each check is made at the declared length, whose
    sentence and notes are the render's; only where that refuses, once more at the length it may decode to that
    suits the row best, so that an estimate never stops a row that fits."""
    lengths = Lengths(max(0.0, shortest_whole(seconds)), seconds * (1 + HEADER_SLACK))
    for check, suited in length_checks(request, settings, checked):
        try:
            check(seconds)
        except UserError:
            if refuses(check, suited(lengths)):
                raise


@dataclass(frozen=True)
class Lengths:
    """The lengths (s) a song may decode to and render, from the length its header declares."""

    least: float
    most: float

    def nearest(self, seconds: float) -> float:
        return min(max(seconds, self.least), self.most)


def longest(lengths: Lengths) -> float:
    return lengths.most


def refuses(check: Callable[[float], object], seconds: float) -> bool:
    try:
        check(seconds)
    except UserError:
        return True
    return False


def length_checks(
    request: SongRequest, settings: RenderSettings, checked: Checked
) -> Iterator[tuple[Callable[[float], object], Callable[[Lengths], float]]]:
    """The render's checks against the song's length (seconds) that apply to this row, as the render makes them: its
    lyrics are read against the song where no --storyboard file stands in for them (musicvid.storyboard.make), and
    a timed file's for the captions too (musicvid.pipeline); each with the length it suits best of those the song may
    have. A song too short refuses the lyrics (their lines, the time for them): the longest suits them best; a
    storyboard is refused at any length but its own, so the nearest to it."""
    lyrics, storyboard = checked.lyrics, checked.storyboard
    if lyrics is not None and lyrics.timed and checked.lyrics_read:
        yield (lambda seconds: read_lyrics(lyrics, seconds)), longest
    elif lyrics is not None and checked.lyrics_read:
        yield (lambda seconds: check_line_count(len(read_plain_lyrics(lyrics)), seconds, lyrics.path)), longest
    if storyboard is not None:
        source, song = str(request.storyboard_file), str(request.song)
        yield (
            lambda seconds: check_matches_audio(storyboard, song, seconds, source),
            lambda lengths: lengths.nearest(storyboard.duration),
        )
