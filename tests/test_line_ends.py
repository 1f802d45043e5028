"""Where a sung line ends: Whisper's segments cut again at the singer's pauses, at its cuts and clauses, and where a
line holds two (musicvid.lyrics.lines)."""

from dataclasses import replace

import pytest

from musicvid.lyrics.lines import lines_at_pauses
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcript import Line, Word


def test_whisper_segments_are_recut_at_pauses():
    def segment(*words):
        return Line(words[0][0], words[-1][1], " ".join(w[2] for w in words), words=[Word(*w) for w in words])

    segments = [
        segment((1.0, 1.3, "the"), (1.35, 1.8, "city"), (1.9, 2.3, "sleeps"), (3.2, 3.5, "beneath")),
        segment((3.55, 3.9, "a"), (3.95, 4.4, "paper"), (4.45, 4.9, "moon")),
    ]
    lines = lines_at_pauses(segments)
    assert [(line.start, line.end, line.text) for line in lines] == [
        (1.0, 2.3, "the city sleeps"),
        (3.2, 4.9, "beneath a paper moon"),  # begun after a pause, Whisper cut it mid-line: joined
    ]
    # without word time stamps, Whisper's segments stand
    bare = [Line(0, 1, "a"), Line(1, 2, "b")]
    assert lines_at_pauses(bare) == bare


def test_a_verse_rapped_without_a_pause_keeps_whispers_cuts():
    words = [Word(i * 0.4, i * 0.4 + 0.35, f"w{i}") for i in range(40)]  # 16 s without a pause
    segments = [
        Line(0, 6, "", words=words[:15]),
        Line(6, 12, "", words=words[15:30]),
        Line(12, 16, "", words=words[30:]),
    ]
    assert [len(line.words) for line in lines_at_pauses(segments)] == [15, 15, 10]
    # a line begun after a pause runs on over one of Whisper's cuts, not over the next (its 3 words and the 15 after
    # are a line under twice the song's median: tests/test_singing.py cuts one that is not)
    paused = [
        Word(w.start + (1.0 if i >= 12 else 0.0), w.end + (1.0 if i >= 12 else 0.0), w.text)
        for i, w in enumerate(words)
    ]
    segments = [
        Line(0, 6, "", words=paused[:15]),
        Line(7, 13, "", words=paused[15:30]),
        Line(13, 17, "", words=paused[30:]),
    ]
    assert [len(line.words) for line in lines_at_pauses(segments)] == [12, 18, 10]


def test_stretched_words_are_cut_where_the_voice_stops_and_starts():
    # Whisper put two lines around a 20 s instrumental passage in one segment and stretched "road" and
    # "my" over the passage: no pause between the words, so one line spanning the music.
    said = ((2.0, 2.4, "an"), (2.4, 2.9, "empty"), (2.9, 21.0, "road"), (21.0, 23.9, "my"), (23.9, 24.5, "heart"))
    words = [Word(start, end, text) for start, end, text in said]
    voice = Voice([(2.1, 3.4), (23.8, 24.6)], duration=30.0)
    assert len(lines_at_pauses([Line(2.0, 24.5, "an empty road my heart", words=words)])) == 1
    words = [voice.fit(word) for word in words]
    assert words[2].end == pytest.approx(3.4 + 0.3)  # "road" ends where the voice does
    # "my" began between a typical word before its end and where Silero heard the voice (its stretch: 23.8 s)
    assert words[3].start == pytest.approx((23.9 - voice.word + 23.8) / 2)
    lines = lines_at_pauses([Line(2.0, 24.5, "an empty road my heart", words=words)])
    assert [(line.text, line.start) for line in lines] == [("an empty road", 2.1), ("my heart", words[3].start)]


def test_a_line_whisper_cut_mid_way_after_a_clause_and_a_pause_of_the_voice_is_a_line_of_its_own():
    """A fresh loud song (seed 66, tiny.en): two lines sung 0.6 s apart, heard with a comma between them, where
    Silero's voice parts; Whisper cut the second after "the wind is", and the line ran on into its next segment. What
    follows the clause is the line as it runs on, a phrase: two lines. Without the comma, only the segment's rest
    counts (a breath near a line's end), and the line stays whole."""

    def heard(*words: tuple[float, float, str]) -> Line:
        said = [Word(a, b, text, 0.9) for a, b, text in words]
        return Line(said[0].start, said[-1].end, " ".join(w.text for w in said), words=said)

    first = heard((6.88, 7.34, "my"), (7.34, 7.94, "heart"), (7.94, 8.84, "inside"), (8.84, 9.48, "head,"))
    cut = heard((9.9, 9.98, "the"), (9.98, 10.24, "wind"), (10.24, 10.5, "is"))
    rest = heard((10.5, 10.78, "burning"), (10.78, 11.3, "across"), (11.3, 12.02, "water,"))
    segments = [replace(first, words=first.words + cut.words), rest]
    voice = Voice([(6.82, 9.18), (9.89, 12.1)], 20.0, word=0.3)
    lines = lines_at_pauses(segments, voice)
    assert [line.text for line in lines] == ["my heart inside head,", "the wind is burning across water,"]
    bare = [replace(segments[0], words=[replace(w, text=w.text.rstrip(",")) for w in segments[0].words]), rest]
    assert [line.text for line in lines_at_pauses(bare, voice)] == ["my heart inside head the wind is", rest.text]


def test_a_long_line_that_sings_its_first_phrase_again_is_two_lines():
    """Seed 66's refrain, as tiny.en heard it: a line sung twice 0.44 s apart in one segment, with no mark between and
    one stretch of voice: over twice the median, it is cut where the line begins again. A line that says a few of
    its first words again later, or is of the usual length, stays whole."""

    def heard(start: float, text: str, each: float = 0.45) -> Line:
        words = [Word(start + each * n, start + each * (n + 1), word, 0.9) for n, word in enumerate(text.split())]
        return Line(words[0].start, words[-1].end, text, words=words)

    line = "an empty road is rising around the fire"
    others = [heard(4.0 * n, "my heart is waving inside my head") for n in range(4)]
    twice = heard(20.0, f"{line} {line}")
    assert [(round(cut.start, 2), cut.text) for cut in lines_at_pauses([*others, twice])[4:]] == [
        (20.0, line),
        (23.6, line),
    ]
    echo = heard(20.0, "an empty road is rising around the fire an empty road is gone", each=0.6)  # (7.8 s)
    assert [cut.text for cut in lines_at_pauses([*others, echo])[4:]] == [
        echo.text
    ]  # (its first words, not its phrase)
    usual = heard(20.0, "oh an empty road oh an empty road", each=0.3)  # (2.4 s: the usual length)
    assert lines_at_pauses([*others, usual])[4].text == usual.text
