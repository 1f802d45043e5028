"""Timed lyrics files and Whisper clean-up."""

import json

import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.lyrics.known import check_lyrics_file, parse_lrc, parse_srt, read_lyrics, read_plain_lyrics
from musicvid.lyrics.lrc import starts_with_time, sung_seconds
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcribe import attach_translation, sung_lines
from musicvid.lyrics.transcript import Line, Word, fit_to_duration
from musicvid.storyboard.table import listed
from tests.helpers import make_tone, run, timed_lyrics


def test_lrc(tmp_path):
    path = tmp_path / "song.lrc"
    path.write_text(
        "\ufeff[ti:Song]\n[ar:Band]\n[offset:+500]\n"
        "[00:05.50]first <00:06.00>line\n"
        "[00:09.00][01:00.00]chorus line\n"
        "[00:10.00]\n"
        "[00:30.00]after a break\n",
        encoding="utf-8",
    )
    lines = timed_lyrics(path, 70.0).lines
    assert [(line.start, line.end, line.text) for line in lines] == [
        (5.0, 5.0 + 1.8, "first line"),
        (8.5, 9.5, "chorus line"),  # an empty stamp ends the line before it
        (29.5, 29.5 + 2.2, "after a break"),
        (59.5, 59.5 + 1.8, "chorus line"),
    ]


def test_lrc_lines_last_about_as_long_as_their_words():
    assert sung_seconds("one") == 1.4
    assert sung_seconds("word " * 100) == 8.0


def test_srt(tmp_path):
    path = tmp_path / "song.srt"
    path.write_text(
        "1\r\n00:00:01,250 --> 00:00:03,000\r\n<i>Hello</i>\r\nthere\r\n\r\n"
        "2\r\n00:00:04,000 --> 00:00:06,500\r\nagain\r\n"
    )
    lines = timed_lyrics(path, 10.0).lines
    assert [(line.start, line.end, line.text) for line in lines] == [(1.25, 3.0, "Hello there"), (4.0, 6.5, "again")]


def test_transcript_json(tmp_path):
    path = tmp_path / "transcript.json"
    path.write_text(
        json.dumps({"lines": [{"start": 1, "end": 2, "text": "hola", "text_en": "hello"}], "language": "es"})
    )
    transcript = timed_lyrics(path, 10.0)
    assert transcript.language == "es"
    assert transcript.lines[0].english == "hello" and transcript.lines[0].text == "hola"


@pytest.mark.parametrize(
    "name,content,reason",
    [
        ("song.doc", "hello", r"must be .lrc, .srt, .json \(a transcript.json\) or .txt"),
        ("song.json", "{broken", "is not valid JSON"),
        ("song.lrc", "[01:39.00]way past the end", "no timed lines"),
        ("song.json", '{"lines": [{"start": 1}]}', r"lines\[0\].end is missing"),
    ],
)
def test_bad_lyrics_files(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UserError, match=reason):
        timed_lyrics(path, 30.0)


def test_plain_lyrics_are_the_sung_lines(tmp_path):
    path = tmp_path / "song.txt"
    path.write_text("\ufeff[Verse 1]\nThe  morning sun\n  is rising\n\n[Chorus]\nLet it go\nLet it go\n\n♪\n")
    assert read_plain_lyrics(check_lyrics_file(path)) == [
        "The morning sun",
        "is rising",
        "Let it go",
        "Let it go",
    ]
    assert not starts_with_time("The morning sun") and starts_with_time(" [01:02.50] The morning sun")


@pytest.mark.parametrize(
    "content, reason", [("\n\n[Chorus]\n♪ ♪\n", "has no lines of lyrics"), (b"\xff\xfe\x00", "not UTF-16 text")]
)
def test_plain_lyrics_without_lines(tmp_path, content, reason):
    path = tmp_path / "song.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(UserError, match=reason):
        read_plain_lyrics(check_lyrics_file(path))


def test_whisper_failures_are_cleaned():
    lines = [
        Line(1, 2, "real line"),
        Line(3, 4, "  ♪  "),
        Line(5, 6, "..."),
        Line(7, 8, "Thanks for watching!"),
        Line(9, 10, "thanks for watching"),
        Line(11, 12, "Thanks for watching."),
        Line(31, 33, "past the end"),
        Line(28, 35, "runs over the end"),
    ]
    cleaned = fit_to_duration(lines, 30.0)
    assert [line.text for line in cleaned] == [
        "real line",
        "Thanks for watching!",
        "thanks for watching",
        "Thanks for watching.",
        "runs over the end",
    ]
    assert cleaned[-1].end == 30.0


def _segment(*words: tuple[float, float, str]) -> Line:
    timed = [Word(start, end, text, 0.9) for start, end, text in words]
    return Line(timed[0].start, timed[-1].end, " ".join(w.text for w in timed), words=timed)


def test_lines_stay_whole_over_silero_and_words_given_no_time_go():
    # Silero heard the singer breathe inside the first line (4.0-4.3 s), missed the second line under the guitar
    # altogether, and heard the last; Whisper heard "hey" over the music just before the last line.
    silero = Voice([(1.0, 4.0), (4.3, 7.0), (20.0, 23.0)], duration=40.0)
    heard = [
        _segment((1.1, 1.6, "the"), (1.7, 2.6, "city"), (2.7, 3.9, "sleeps"), (4.1, 5.4, "beneath")),
        _segment((6.0, 6.2, "a"), (6.3, 6.6, "paper"), (6.6, 6.9, "moon")),
        _segment((10.0, 10.6, "under"), (10.7, 11.0, "a"), (11.1, 12.0, "silent"), (12.1, 13.0, "sky")),
        _segment((18.9, 19.1, "hey")),
        _segment((20.1, 20.9, "we"), (21.0, 21.8, "were"), (21.9, 22.9, "young")),
    ]
    lines = sung_lines(heard, silero, 40.0)
    assert [(line.text, line.start) for line in lines] == [
        ("the city sleeps beneath", 1.0),  # one line over Silero's two stretches, begun where the voice begins
        ("a paper moon", 6.0),  # begun in the stretch the line before ended in: where Whisper heard it
        ("under a silent sky", 10.0),  # no voice under it: Silero's silence drops nothing
        ("we were young", 20.0),  # "hey", heard before the voice, was given no time, and went
    ]


def test_translation_is_matched_to_lines_by_time():
    lines = [Line(0, 3, "uno"), Line(3, 6, "dos"), Line(8, 9, "tres")]
    lines = attach_translation(lines, [Line(0.2, 2.8, "one"), Line(3.1, 5.5, "two")])
    assert [line.english for line in lines] == ["one", "two", "tres"]


def test_a_credit_whisper_translates_over_music_is_the_english_of_no_line():
    # Whisper base's translate task over a metal intro it took for Japanese wrote a subtitle's credits
    lines = [Line(0, 3, "夜の海"), Line(3, 6, "星が落ちる"), Line(8, 9, "さよなら")]
    translated = [Line(0, 3, "Translated by Releska"), Line(3, 6, "the stars fall"), Line(8, 9, "Thanks for watching!")]
    assert [line.text_en for line in attach_translation(lines, translated)] == [None, "the stars fall", None]
    # a line that says "by" is a line
    sung = [Line(0, 3, "saved by the bell, left by the sea")]
    assert attach_translation(lines[:1], sung)[0].text_en == "saved by the bell, left by the sea"


def test_a_translated_segment_split_over_two_lines_reaches_both():
    # Whisper translated the two sung lines as one segment; the lines were cut at the singer's pause.
    lines = [Line(10, 13, "camino solo"), Line(13, 16, "bajo la lluvia"), Line(30, 32, "adiós")]
    lines = attach_translation(lines, [Line(10.2, 15.8, "I walk alone under the rain"), Line(24, 25, "goodbye")])
    assert [line.text_en for line in lines] == ["I walk alone", "under the rain", "goodbye"]
    assert [line.text for line in lines] == ["camino solo", "bajo la lluvia", "adiós"]  # captions keep the original
    # a line a segment only grazes gets only its share of the words
    lines = [Line(0, 9, "uno"), Line(9, 10, "dos")]
    lines = attach_translation(lines, [Line(0, 10, "one two three four five six seven eight nine ten")])
    assert [line.text_en for line in lines] == ["one two three four five six seven eight nine", "ten"]


def test_more_lines_than_the_song_can_hold_are_refused_with_the_numbers(capsys, caplog, tmp_path):
    song = make_tone(tmp_path / "song.wav", 6)
    plain = tmp_path / "lines.txt"
    plain.write_text("la la\n" * 10_000)
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", plain, "--workdir", tmp_path / "w"
    )
    assert code == 2 and "has 10000 lines, more than a 6.0 s song can hold (12: one per 0.5 s, 2,000 in all)" in err
    assert not (tmp_path / "w").exists()
    timed = tmp_path / "lines.lrc"
    timed.write_text("".join(f"[00:0{n // 1000}.{n % 1000:03d}]la\n" for n in range(2006)))  # (0.05 s, one time)
    with pytest.raises(UserError, match="has 40 lines, more than a 6.0 s song can hold"):
        timed_lyrics(timed, 6.0)
    # the note on the lines it joined (sung at one time) is moot once the file is refused: the one sentence alone
    caplog.clear()
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--lyrics", timed, "-o", tmp_path / "v.mp4")
    assert code == 2 and "has 40 lines, more than a 6.0 s song can hold" in err and not caplog.messages, caplog.messages


def test_a_note_names_many_scenes_briefly():
    assert listed([1, 2, 3, 5, 7, 8]) == "1-3, 5, 7-8"
    assert listed(list(range(0, 4000, 2))) == "0, 2, 4, 6, 8, 10, 12, 14 and 1992 more"


# Each LRC writer's tag of a time (minutes, seconds, hundredths), and whether it keeps the hundredths
LRC_WRITERS = {
    "centiseconds": (lambda m, s, c: f"[{m:02d}:{s:02d}.{c:02d}]", True),
    "a comma": (lambda m, s, c: f"[{m:02d}:{s:02d},{c:02d}]", True),
    "whole seconds": (lambda m, s, c: f"[{m:02d}:{s:02d}]", False),
    "milliseconds": (lambda m, s, c: f"[{m:02d}:{s:02d}.{c * 10:03d}]", True),
    "hours": (lambda m, s, c: f"[{m // 60}:{m % 60:02d}:{s:02d}.{c:02d}]", True),
    "hours, a comma": (lambda m, s, c: f"[{m // 60:02d}:{m % 60:02d}:{s:02d},{c:02d}]", True),
    "a colon before the fraction": (lambda m, s, c: f"[{m:02d}:{s:02d}:{c:02d}]", True),
    "one digit of minutes": (lambda m, s, c: f"[{m}:{s:02d}.{c:02d}]", True),
}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("writer", LRC_WRITERS)
def test_lrc_is_read_as_each_writer_writes_it(tmp_path, seed, writer):
    """Fresh lines at fresh times, each tagged as one writer tags it, with what writers put around them: the tags
    that say who and what, a section's name, an offset, a line sung twice, its words' own times."""
    rng = np.random.default_rng(seed)
    # 10 s to 5 min, in six seconds: lines at one time are one sung line and its translation
    hundredths = np.sort(rng.choice(np.arange(10, 300), size=6, replace=False)) * 100 + rng.integers(0, 100, size=6)
    words = [" ".join(rng.choice(["sky", "glass", "river", "night", "light", "home"], size=3)) for _ in hundredths]
    tag, keeps = LRC_WRITERS[writer]
    tags = [tag(int(h) // 6000, int(h) // 100 % 60, int(h) % 100) for h in hundredths]
    offset = int(rng.integers(-900, 900))
    rows = ["[ti:A fresh song]", "[ar:Nobody]", f"[offset:{offset:+d}]", "", "[Chorus]"]
    rows += [f"{t}{w.split()[0]} <00:00.00>{' '.join(w.split()[1:])}" for t, w in zip(tags[:-2], words)]
    rows.append(f"{tags[-2]}{tags[-1]}{words[-1]}")  # sung twice: one line, two tags
    (path := tmp_path / "song.lrc").write_text("\n".join(rows) + "\n")
    lines = timed_lyrics(path, 400.0).lines
    seconds = hundredths / 100 if keeps else hundredths // 100
    assert [line.start for line in lines] == pytest.approx(seconds - offset / 1000, abs=1e-6)
    assert [line.text for line in lines] == [*words[:-2], words[-1], words[-1]]


# Timed lyrics it cannot read, in an .lrc or in a .txt that holds times (read as the timed file it is)
REFUSED_TIMES = [
    ("song.lrc", *case)
    for case in [
        ("[00:01.00]one\n[00:05;00]two\n", r"line 2: \[00:05;00\] is no time an LRC line is read by"),
        ("[00:01.00]one\n[-00:07.00]two\n", r"line 2: \[-00:07.00\] is a time before the song starts"),
        ("[00:01.00]one\n[00:07.00.00]two\n", r"line 2: \[00:07.00.00\] is no time"),
        ("[00:01.00]one\n[1:2:3:4]two\n", r"line 2: \[1:2:3:4\] is no time"),
        ("[00:01.00]one\n[00:0x.00]two\n", r"line 2: \[00:0x.00\] is no time"),
        ("[00:01.00]one <00:0x.00>two\n", r"line 1: <00:0x.00> is no time"),
        ("[00:01.00]one\nan untimed line\n[00:09.00]three\n", r"line 2 \(an untimed line\) has no time, as the lines"),
        ("an untimed line\nanother\n", r"has no times: an LRC line starts with its time"),
        ("[offset:+999999999]\n[00:01.00]one\n", r"line 1 \[offset:\] \(ms\): 999999999 is out of range"),
        ("[offset:soon]\n[00:01.00]one\n", r"line 1 \[offset:\] \(ms\): 'soon' is not a number"),
        ("[offset:++500]\n[00:01.00]one\n", r"line 1 \[offset:\] \(ms\): '\+\+500' is not a number"),  # as written
        ("[offset:+100]\n[offset:+200]\n[00:01.00]one\n", r"line 2: a second \[offset:\] tag"),
        ("[offset:+1500]\n[00:01.00]one\n", r"line 2: its \[offset:\] moves it 0.5 s before the song starts"),
    ]
] + [
    (
        "lyrics.txt",
        "[00:01.00]one\nan untimed line\n",
        r"line 2 \(an untimed line\) has no time, as the lines around it",
    ),
    ("lyrics.txt", "[00:01.00]one\n[00:05;00]two\n", r"line 2: \[00:05;00\] is no time an LRC line is read by"),
    ("lyrics.txt", "1\n00:00:01 --> soon\nhello\n", r"cue 1 has a time SRT does not write \(soon\)"),
]


@pytest.mark.parametrize("name, text, said", REFUSED_TIMES)
def test_times_it_cannot_read_are_refused_by_their_line_never_dropped(tmp_path, name, text, said):
    (path := tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=f"^lyrics file {path}:? {said}"):
        check_lyrics_file(path)


def test_what_begins_like_a_time_is_timed_lyrics_and_a_sections_name_is_not():
    for timed in ("[00:05,00] a", "[-00:07.00] a", "[1:00:05.00] a", "[00:07] a", " [12:34:56] a"):
        assert starts_with_time(timed), timed
    for plain in ("[Chorus]", "[Verse 2: Name]", "[1. Strophe] a", "(00:05) a", "a [00:05.00]"):
        assert not starts_with_time(plain), plain


def test_enhanced_lrc_times_each_word_of_a_line_sung_once():
    text = (
        "[offset:+500]\n"
        "[00:10.00]<00:10.00>I <00:10.50>see <00:11.20>you <00:12.00>\n"  # every word, and the last one's end
        "[00:20.00]<00:20.00>no <00:20.40>end tag\n"  # the last words share the time to the line's end
        "[00:30.00][00:40.00]<00:30.00>sung <00:30.50>twice\n"  # whose times? left to karaoke's own share
        "[00:50.00]half <00:50.50>timed\n"  # (the words before the first tag from the line's time: were untimed)
    )
    lines = parse_lrc(text, 60)
    timed = {line.text: [(round(w.start, 2), round(w.end, 2), w.text) for w in line.words] for line in lines}
    assert timed["I see you"] == [(9.5, 10.0, "I"), (10.0, 10.7, "see"), (10.7, 11.5, "you")]
    end = next(line.end for line in lines if line.text == "no end tag")
    assert timed["no end tag"][:1] == [(19.5, 19.9, "no")] and timed["no end tag"][-1][1] == round(end, 2)
    assert timed["sung twice"] == [] and timed["half timed"][0] == (49.5, 50.0, "half")


def test_enhanced_lrc_words_before_the_first_tag_are_sung_from_the_lines_time():  # (their times were all dropped)
    lines = parse_lrc("[00:05.00]Mid [00:07.00] time words\n[00:30.00]MIXED <00:30.50>words\n", 41.0)
    words = [[(w.start, w.end, w.text) for w in line.words[:2]] for line in lines]
    assert words == [
        [(5.0, 7.0, "Mid"), (7.0, pytest.approx(7.09, abs=0.01), "time")],
        [(30.0, 30.5, "MIXED"), (30.5, pytest.approx(31.8, abs=0.01), "words")],
    ]


def test_three_numbers_are_hours_where_as_hundredths_the_lines_would_come_too_fast(caplog):
    # ([00:00:05] was 0.05 s: a song's lines squeezed into its first 0.3 s, unsaid)
    text = "[00:00:05]first line at five\n[00:00:20]second line at twenty\n[00:00:30]third line at thirty\n"
    assert [line.start for line in parse_lrc(text, 41.0)] == [5.0, 20.0, 30.0]
    assert "read as [hh:mm:ss]: as [mm:ss:xx] (hundredths), its lines came 0.12 s apart" in caplog.text
    hundredths = "[00:05:10]first line\n[00:10:20]second line\n[00:15:30]third line\n"
    assert [line.start for line in parse_lrc(hundredths, 41.0)] == [5.1, 10.2, 15.3]  # (as older writers mean it)
    with pytest.raises(UserError, match="line 1: its time has 99 seconds, which a clock counts from 0 to 59"):
        parse_lrc("[00:99.00]a line\n", 200.0)


def test_an_srt_cue_numbered_with_no_number_is_said_so():  # (it was said to have no cue time)
    cues = "1\n00:00:05,000 --> 00:00:06,000\na\n\nx\n00:00:13,000 --> 00:00:14,000\nc\n"
    with pytest.raises(UserError, match="the cue at '00:00:13,000 --> 00:00:14,000' is numbered 'x', which is no"):
        parse_srt(cues, "b.srt")


def test_lines_at_one_time_past_a_lines_words_are_counted_as_words_and_said_as_lines(tmp_path):
    (path := tmp_path / "one.lrc").write_text("".join(f"[00:05.00]w{n}\n" for n in range(1_200)))
    with pytest.raises(UserError, match="has 1,200 words, more .*: its 1,200 lines share one time: give each its own"):
        read_lyrics(check_lyrics_file(path), 41.0)  # (the joins counted: 2,399 words, "break it where ... breathes")
