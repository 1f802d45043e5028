"""Spaces as lyrics write them: a no-break space (French typography, pasted from the web) and the ideographic space
are kept from the lyrics file to the storyboard and the .srt; what a no-break space joins, or a mark written apart
from its word ("Quoi ?"), is one word of the karaoke and never begins a row; a CJK input method's full-width time
tags are times."""

from __future__ import annotations

import re

import pytest

from musicvid.delivery import captions, subtitles
from musicvid.delivery.cue_times import word_times
from musicvid.lyrics.known import check_lyrics_file, parse_srt, read_plain_lyrics
from musicvid.lyrics.lrc import parse_lrc
from musicvid.lyrics.transcript import Line, Transcript, Word
from musicvid.storyboard.board import SongAudio, Storyboard
from musicvid.storyboard.scenes import scenes_from_lines
from tests.test_captions import dialogue, lyric_board

NBSP, IDEOGRAPHIC = "\u00a0", "\u3000"


def test_no_break_and_ideographic_spaces_reach_the_storyboard_and_the_srt_as_written(tmp_path):
    french, wide = f"Quoi{NBSP}? Pourquoi{NBSP}!", f"ＦＵＬＬ{IDEOGRAPHIC}ｗｉｄｔｈ"
    lrc = parse_lrc(f"[00:01.00]{french}\n[00:04.00]{wide}  \t again\n", 10.0)
    srt = parse_srt(f"1\n00:00:01,000 --> 00:00:03,000\nQuoi&nbsp;?\n{wide}\n", "the lyrics")
    lyrics = tmp_path / "song.txt"
    lyrics.write_text(f"Quoi{NBSP}?\n\n« Oui »\n")
    assert [line.text for line in lrc] == [french, f"{wide} again"]  # (other whitespace folds to one space)
    assert [line.text for line in srt] == [f"Quoi{NBSP}? {wide}"]
    assert read_plain_lyrics(check_lyrics_file(lyrics)) == [f"Quoi{NBSP}?", "« Oui »"]
    board = storyboard(lrc, 10.0)
    assert [s.text for s in board.scenes if s.kind == "lyric"] == [french, f"{wide} again"]
    cues = subtitles.srt(board).split("\n\n")
    assert french in cues[0] and f"{wide} again" in cues[1]


def storyboard(lines: list[Line], duration: float) -> Storyboard:
    return Storyboard(audio=SongAudio(duration), language="", scenes=scenes_from_lines(lines, duration))


def karaoke_words(board, transcript=None) -> list[list[str]]:
    """Each scene's karaoke words as the ASS script lights them: the text after each \\kf tag."""
    script = captions.ass_script(board, 640, 360, word_times(board, transcript), transcript)
    return [re.findall(r"\\kf\d+}([^{]+)", line) for line in dialogue(script)]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (f"Quoi{NBSP}? Pourquoi{NBSP}!", [f"Quoi{NBSP}? ", f"Pourquoi{NBSP}!"]),
        ("Quoi ? Pourquoi !", [f"Quoi{NBSP}? ", f"Pourquoi{NBSP}!"]),
        ("« Oui » dit-il", [f"«{NBSP}Oui{NBSP}» ", "dit-il"]),
        ("¿ Qué pasa ?", [f"¿{NBSP}Qué ", f"pasa{NBSP}?"]),
        ("Hey ... you", [f"Hey{NBSP}... ", "you"]),
        ("a - b", ["a ", "- ", "b"]),  # (a dash stands between two words: it is one)
    ],
)
def test_a_mark_written_apart_or_a_no_break_space_makes_one_karaoke_word(line, words):
    assert karaoke_words(lyric_board([line])) == [words]


def test_heard_words_a_no_break_space_joins_are_lit_as_one_from_the_first_ones_start():
    text = f"Quoi{NBSP}? Pourquoi"
    heard = [Word(1.0, 1.4, "Quoi"), Word(1.5, 1.6, "?"), Word(1.7, 2.3, "Pourquoi")]
    transcript = Transcript([Line(1.0, 2.3, text, words=heard)], "fr", "test")
    board = storyboard(transcript.lines, 4.0)
    timed = word_times(board, transcript)[board.scenes[-1].index]
    assert [(start, end, word) for start, end, word, _ in timed] == [(1.0, 1.6, f"Quoi{NBSP}?"), (1.7, 2.3, "Pourquoi")]


def test_no_row_begins_with_a_mark_written_apart_from_its_word():
    # 10 words of 5 letters and a "?" after each, at 320 px: libass would be free to wrap before any "?"
    line = " ".join(["Hélas ?"] * 10)
    shown = dialogue(captions.ass_script(lyric_board([line]), 320, 240))[0]
    assert " ?" not in shown and shown.count(f"Hélas{NBSP}?") == 10


@pytest.mark.parametrize("tag", ["［00：02．00］", "[00：02.00]", "［00:02.00］", "[００:０２.００]"])
def test_full_width_time_tags_as_an_input_method_types_them_are_times(tag):
    lines = parse_lrc(f"{tag}我爱你\n[00:05.00]你爱我\n", 10.0)
    assert [(line.start, line.text) for line in lines] == [(2.0, "我爱你"), (5.0, "你爱我")]
