"""A batch row's files judged against every length its song may decode to, each check once where it passes; `musicvid
plan`'s song as long as the render measures it (a cut-off MP3's header says the whole file's length); a caption of a
very long line kept inside the picture, cut with an ellipsis."""

from __future__ import annotations

from pathlib import Path

import pytest

from musicvid.batch import lengths
from musicvid.core.audio import load_audio
from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import declared_duration
from musicvid.delivery import captions
from musicvid.delivery.cue_times import word_times
from musicvid.lyrics.known import check_lyrics_file
from musicvid.plan_command import song_seconds
from musicvid.prepare import Checked
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import SongAudio, Storyboard
from tests.helpers import run
from tests.test_captions import dialogue, lyric_board, shown


def row_said(tmp_path, monkeypatch, declared: float, *, board: float | None = None, lrc: str = "", fps=2.0) -> str:
    """What check_row_length says of a row whose song's header declares `declared` s, with a --storyboard of `board` s
    or timed lyrics `lrc`: "" where the row is left to its turn."""
    monkeypatch.setattr(lengths, "declared_duration", lambda *_, **__: declared)
    lyrics = None
    if lrc:
        (tmp_path / "s.lrc").write_text(lrc)
        lyrics = check_lyrics_file(tmp_path / "s.lrc")
    storyboard = None if board is None else Storyboard(audio=SongAudio(board), language="", scenes=[])
    request = SongRequest(song=tmp_path / "a.wav", storyboard_file=tmp_path / "s.json" if board else None)
    checked = Checked(None, None, False, lyrics, 7, storyboard, lyrics_read=board is None)
    try:
        return lengths.check_row_length(request, RenderSettings(fps=fps), checked) or ""
    except UserError as error:
        return str(error)


@pytest.mark.parametrize(
    "declared, board, stopped",
    [
        (10.0, 9.5, False),  # between the declared length and 10 % under it (a sample there refused it)
        (10.0, 10.7, False),
        (10.0, 8.96, False),  # decoded to 9 s, the song is whole to the render: it checks the storyboard against 9
        (10.0, 8.9, True),  # shorter still, the render refuses the song as cut off, or the storyboard
        (10.0, 11.04, False),
        (10.0, 11.1, True),
        (2.0, 1.6, False),  # a short song may miss half a second before it is cut off
        (2.0, 1.4, True),
    ],
)
def test_a_storyboard_stops_its_row_only_where_no_length_the_song_may_decode_to_matches_it(
    tmp_path, monkeypatch, declared, board, stopped
):
    said = row_said(tmp_path, monkeypatch, declared, board=board)
    assert bool(said) == stopped, said
    if stopped:  # in the render's sentence, of the length the header declares
        assert f"is for audio of {board:.2f} s, but {tmp_path / 'a.wav'} lasts {declared:.2f} s" in said


def test_lyrics_stop_their_row_only_where_a_tenth_longer_song_would_refuse_them_too(tmp_path, monkeypatch):
    assert row_said(tmp_path, monkeypatch, 10.0, lrc="[00:10.50]just past the header\n") == ""
    said = row_said(tmp_path, monkeypatch, 10.0, lrc="[00:11.50]past a tenth more\n")
    assert said.endswith("has no timed lines inside the song's 10.0 s")


def test_a_song_is_too_short_only_where_a_tenth_longer_is_too_and_each_length_is_judged_once(monkeypatch):
    asked, check_one_frame = [], lengths.check_one_frame

    def counted(seconds: float, fps: float) -> None:
        asked.append(seconds)
        check_one_frame(seconds, fps)

    def too_short(declared: float) -> str | None:
        asked.clear()
        return lengths.too_short(declared, 2.0)

    monkeypatch.setattr(lengths, "check_one_frame", counted)
    assert too_short(3.0) is None and asked == [3.0]
    said = too_short(0.1)  # under one frame at 2 fps, and a tenth longer too: the render's sentence, of the header's
    assert asked == [0.1, pytest.approx(0.11)] and said.startswith("the song lasts 0.100 s")
    assert too_short(0.24) is None and asked == [0.24, pytest.approx(0.264)]  # a frame at 0.264


@pytest.fixture
def cut_demo(demo_song):
    """The demo song cut to its first `share` of its bytes: its header (Xing frame count) still says the whole."""

    def cut(share: float) -> Path:
        data = demo_song.read_bytes()
        path = demo_song.with_name(f"cut{share:g}.mp3")
        path.write_bytes(data[: int(len(data) * share)])
        return path

    return cut


def test_the_plan_of_a_cut_off_mp3_is_as_long_as_the_render_decodes_it(cut_demo):
    song = cut_demo(0.95)  # (a twentieth gone: the render takes it, as long as it decodes)
    planned, decoded = song_seconds(SongRequest(song=song), fps=8), load_audio(song).info.duration
    assert abs(planned - decoded) < 1 / 8 and declared_duration(song, sound=True) - planned > 1  # not the header's


def test_a_plan_refuses_an_mp3_cut_short_as_the_render_does(capsys, cut_demo, tmp_path):
    song = cut_demo(0.3)
    plan = run(capsys, "plan", song, "--models", "tiny")
    render = run(capsys, "render", song, "--models", "tiny", "-o", tmp_path / "v.mp4", "--workdir", tmp_path / "wd")
    assert plan[0] == render[0] == 2 and plan[2] == render[2] and "looks truncated or corrupt" in plan[2], plan


def style(script: str) -> dict[str, str]:
    """The Lyrics style's fields, by name."""
    names = next(line for line in script.splitlines() if line.startswith("Format: Name,")).removeprefix("Format: ")
    values = next(line for line in script.splitlines() if line.startswith("Style: ")).removeprefix("Style: ")
    return dict(zip(names.split(", "), values.split(",")))


LONG = {
    "letters": "x" * 3000,
    "words": " ".join(["lighthouse"] * 300),
    "cjk": "我爱你就像老鼠爱大米" * 300,
}


@pytest.mark.parametrize("size", [(320, 240), (240, 320), (1280, 720)])
@pytest.mark.parametrize("karaoke", [False, True])
def test_a_3000_character_lines_caption_rows_lie_inside_the_picture_cut_with_an_ellipsis(size, karaoke):
    width, height = size
    board = lyric_board(list(LONG.values()))
    script = captions.ass_script(board, width, height, word_times(board, None) if karaoke else None)
    fields = style(script)
    row, bottom, outline = int(fields["Fontsize"]), int(fields["MarginV"]), float(fields["Outline"])
    for (what, line), text in zip(LONG.items(), dialogue(script)):
        rows = text.count("\\N") + 1
        assert text.startswith(captions.NO_WRAP), what  # broken here: libass does not wrap it into more rows
        assert rows > 1 and bottom + rows * row + 2 * outline <= height / 2, (what, rows)  # its lower half
        letters = shown(text)
        assert letters.endswith(" …") and "".join(line.split()).startswith("".join(letters[:-2].split())), what


def test_a_long_line_that_fits_its_rows_is_shown_whole():
    line = " ".join(["lighthouse"] * 8)  # 4 rows at 320 × 240, of 6
    assert dialogue(captions.ass_script(lyric_board([line]), 320, 240)) == [line]  # libass wraps it, as it always has
