"""The .ass kept beside the video holds its fonts: libass (as mpv, VLC and Aegisub's preview run it) draws it with
no font on the machine as the video's is drawn with musicvid's fonts beside it."""

import os

import numpy as np

from musicvid.delivery import captions
from musicvid.delivery.ass_fonts import encoded, with_fonts
from musicvid.delivery.cue_times import word_times
from tests.libass import drawn
from tests.test_captions import lyric_board

LINES = ["hello world", "我们的歌声", "میں تم سے پیار کرتا ہوں", "नमस्ते दुनिया", "བཀྲ་ཤིས"]


def decoded(text: str) -> bytes:
    """The SSA encoding read back as libass reads it (ass.c, decode_font): four characters a group, each 6 bits."""
    characters, data = "".join(text.split("\n")), bytearray()
    for at in range(0, len(characters), 4):
        group = characters[at : at + 4]
        n = sum((ord(c) - 33 & 63) << 6 * (3 - i) for i, c in enumerate(group))
        data.extend(n.to_bytes(3, "big")[: len(group) - 1])
    return bytes(data)


def test_a_fonts_bytes_are_encoded_as_libass_decodes_them():
    for size in range(8):
        data = os.urandom(size)
        assert decoded(encoded(data)) == data, size
    lines = encoded(bytes(range(256)) * 3).splitlines()
    assert {len(line) for line in lines[:-1]} == {80} and all(" " < c <= "`" for c in "".join(lines))


def test_the_kept_ass_draws_with_its_own_fonts_as_with_musicvids(tmp_path):
    board = lyric_board(LINES)
    for words in (None, word_times(board, None)):  # line and karaoke
        script = captions.ass_script(board, 480, 270, words)
        captions.write_script(tmp_path / "lyrics.ass", script)  # (its fonts beside it, in fonts/)
        kept = with_fonts(script)
        names = [line for line in kept.splitlines() if line.startswith("fontname: ")]
        assert names == [
            f"fontname: {name}_B0.{kind}"
            for name, kind in [
                ("DejaVuSans-Bold", "ttf"),
                ("LyricsCJK-Bold", "otf"),
                ("LyricsDevanagari-Bold", "ttf"),
                ("LyricsTibetan-Bold", "ttf"),
                ("LyricsArabic-Bold", "ttf"),
            ]
        ]
        assert len(kept.encode()) < 150_000  # each cut to what the lines show (the fonts are 3.1 MB)
        times = [1000 * n + 500 for n in range(len(LINES))]
        theirs = drawn(script, (480, 270), times, tmp_path / "fonts")
        its_own = drawn(kept, (480, 270), times)
        for line, a, b, none in zip(LINES, theirs, its_own, drawn(script, (480, 270), times)):
            assert a.sum() > 50_000 and none.sum() == 0, line  # (no font on this machine draws it)
            assert abs(int(a.sum()) - int(b.sum())) < 0.01 * a.sum(), line
            assert (np.abs(a.astype(int) - b) > 64).sum() < 0.002 * (a > 0).sum(), line
    assert with_fonts(script) == kept  # the same bytes at every render (a resumed one too)


def test_an_emoji_no_caption_font_has_leaves_no_joiner_behind_and_a_joined_conjunct_keeps_its_own():
    board = lyric_board(["family \U0001f468\u200d\U0001f469\u200d\U0001f467 ok", "\u0915\u094d\u200d\u0937 ok"])
    for words in (None, word_times(board, None)):  # line and karaoke: no timed word of nothing drawn
        dialogue = [line for line in captions.ass_script(board, 480, 270, words).splitlines() if "Dialogue:" in line]
        assert "\u200d" not in dialogue[0] and "family" in dialogue[0] and "\u094d\u200d\u0937" in dialogue[1]
