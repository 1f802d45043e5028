"""Lyrics that are another subtitle format's file (WebVTT, ASS: the .ass musicvid writes beside a video), saved as
plain text or pasted on the page: refused by the format's name, as WebVTT saved as .srt is, never sung row by row
(probe 24: the page's table held lyric rows "WEBVTT" and "00:05.000 --> 0…"). musicvid.lyrics.srt.check_not_subtitles."""

import re

import pytest

from musicvid.core.errors import UserError
from musicvid.lyrics.known import check_lyrics_file
from ui.jobs import check_pasted_lyrics

VTT = "WEBVTT\n\n00:05.000 --> 00:08.000\nhello\n"
VTT_WITHOUT_HEADER = "00:05.000 --> 00:08.000\nhello\n\n01:09.500 --> 01:12.000\nworld\n"
ASS = (
    "[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, "
    "Effect, Text\nDialogue: 0,0:00:05.00,0:00:08.00,Default,,0,0,0,,hello\n"
)
DIALOGUE_ROWS = (
    "Dialogue: 0,0:00:05.00,0:00:08.00,Default,,0,0,0,,hello\nDialogue: 0,0:00:09.00,0:00:11.00,Default,,0,0,0,,world\n"
)


@pytest.mark.parametrize(
    "text, said",
    [
        (VTT, "is WebVTT, not SRT: convert it (ffmpeg -i lyrics.vtt lyrics.srt)"),
        (VTT_WITHOUT_HEADER, "is WebVTT"),
        (ASS, "is ASS subtitles, not SRT: convert it (ffmpeg -i lyrics.ass lyrics.srt)"),
        (DIALOGUE_ROWS, "is ASS subtitles"),
    ],
    ids=["webvtt", "webvtt cues alone", "ass", "ass dialogue rows"],
)
def test_another_subtitle_format_is_refused_by_its_name_as_a_file_and_pasted(tmp_path, text, said):
    (path := tmp_path / "lyrics.txt").write_text(text)
    with pytest.raises(UserError, match=f"^lyrics file {re.escape(str(path))} {re.escape(said)}"):
        check_lyrics_file(path)
    with pytest.raises(UserError, match=f'^"Lyrics" {re.escape(said)}'):
        check_pasted_lyrics(text)
    (srt := tmp_path / "lyrics.srt").write_text(text)
    with pytest.raises(UserError, match=re.escape(said)):
        check_lyrics_file(srt)


def test_lyrics_that_only_look_like_a_subtitle_row_are_sung_and_srt_with_points_is_read_as_srt(tmp_path):
    (plain := tmp_path / "plain.txt").write_text("Dialogue: we never talk\n[Events]\nWebVTT is a format, she said\n")
    assert check_lyrics_file(plain).lines is None  # plain lines, for Whisper to time
    check_pasted_lyrics(plain.read_text())
    # SRT's clock has hours; written with a point for its comma, it is read as SRT, not refused as WebVTT
    (points := tmp_path / "points.txt").write_text("1\n00:00:05.000 --> 00:00:08.000\nhello\n")
    assert [line.start for line in check_lyrics_file(points).lines] == [5.0]
