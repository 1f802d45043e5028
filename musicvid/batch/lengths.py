"""A batch row's files against its song's length, before the first render: its lyrics (as many lines as the song
can hold, one timed line inside it), its storyboard's duration and one frame at its fps. A render refuses these
only once its song is decoded; in a batch that is at the row's turn, after the rows before it have had hours of GPU
time. The length is the one the song's header declares (no decoding); a header that declares none leaves the row
to its turn."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from musicvid.core.audio import AudioInfo
from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import declared_duration
from musicvid.lyrics.known import check_line_count, read_lyrics, read_plain_lyrics
from musicvid.pictures.schedule import check_one_frame
from musicvid.prepare import Checked
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.make import check_matches_audio

# A header's length may be an estimate (a VBR MP3 without its index, raw AAC: from the bitrate). A row is stopped
# before any render only where its song is refused at this fraction off either way too; nearer the edge, the render
# judges it at its turn on the decoded length, so a row that fits its song is never stopped by an estimate.
HEADER_SLACK = 0.1


def check_fits_song(request: SongRequest, settings: RenderSettings, checked: Checked) -> None:
    """Refuse, as the render would once it decoded the song, a row whose files do not fit its song's declared
    length (`checked`: its files as check_before_work read them)."""
    seconds = declared_duration(request.song, sound=True)
    if seconds is None:
        return
    for check in length_checks(request, settings, checked):
        try:
            check(seconds)
        except UserError:
            if all(refuses(check, near) for near in (seconds * (1 - HEADER_SLACK), seconds * (1 + HEADER_SLACK))):
                raise


def refuses(check: Callable[[float], object], seconds: float) -> bool:
    try:
        check(seconds)
    except UserError:
        return True
    return False


def length_checks(
    request: SongRequest, settings: RenderSettings, checked: Checked
) -> Iterator[Callable[[float], object]]:
    """The render's checks against the song's length (seconds) that apply to this row, as the render makes them: its
    lyrics are read against the song where no --storyboard file stands in for them (musicvid.storyboard.make), and
    a timed file's for karaoke too (musicvid.pipeline)."""
    yield lambda seconds: check_one_frame(seconds, settings.fps)
    lyrics, storyboard = checked.lyrics, checked.storyboard
    if lyrics is not None and lyrics.timed and (storyboard is None or settings.captions == "karaoke"):
        yield lambda seconds: read_lyrics(lyrics, seconds)
    elif lyrics is not None and not lyrics.timed and storyboard is None:
        yield lambda seconds: check_line_count(len(read_plain_lyrics(lyrics)), seconds, lyrics.path)
    if storyboard is not None:
        source, song = str(request.storyboard_file), str(request.song)
        yield lambda seconds: check_matches_audio(storyboard, AudioInfo(song, "", seconds, "", ""), source)
