"""Where a sung line ends: Whisper's segments cut again at the singer's pauses, at its cuts and clauses, and where a
line holds two (musicvid.lyrics.lines)."""

from dataclasses import replace

import pytest

from musicvid.lyrics.lines import lines_at_pauses
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcribe import sung_lines
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
    follows the clause is the line as it runs on, a phrase: two lines. Without the comma, Whisper's cut inside one
    stretch of voice is the other sign (seed 87, below): two lines still."""

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
    assert [line.text for line in lines_at_pauses(bare, voice)] == ["my heart inside head", "the wind is " + rest.text]


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


def test_a_line_sung_after_a_long_band_part_starts_its_scene_though_a_word_was_heard_over_the_band():
    """A fresh gaps song (seed 86, tiny.en): "... in the sky, but we're in this" heard as one segment over 25 s of
    band, "but" where nobody sings and "we're" stretched to the voice's return; the line after the band ran on from
    "but" (a scene begun in the band), and "we're in this" was no phrase where the voice sings it. The voice paused
    for longer than a line lasts since its last word heard in a stretch ("sky,"): two lines, however few words."""
    heard = [(50.4, 51.2, "shining"), (51.2, 51.9, "the"), (51.9, 54.74, "sky,"), (54.74, 55.64, "but")]
    heard += [(55.64, 78.2, "we're"), (78.2, 78.3, "in"), (78.3, 78.52, "this")]
    rest = [Word(78.52, 78.9, "maybe", 0.9), Word(78.9, 79.4, "across", 0.9), Word(79.4, 80.0, "water.", 0.9)]
    voice = Voice([(50.34, 52.54), (77.63, 80.19)], 90.0, word=0.3)
    whispers = [
        Line(50.4, 78.52, "", words=[Word(a, b, text, 0.9) for a, b, text in heard]),
        Line(78.52, 80.0, "", words=rest),
    ]
    fitted = [replace(s, words=[voice.fit(w) for w in s.words]) for s in whispers]
    assert [round(w.start, 2) for w in fitted[0].words[3:5]] == [54.74, 77.63]  # "but" far from the voice: as heard
    lines = lines_at_pauses(fitted, voice, paced=whispers)
    assert [(round(line.start, 2), line.text) for line in lines] == [
        (50.4, "shining the sky, but"),
        (77.63, "we're in this maybe across water."),
    ]


def test_a_line_whisper_cut_inside_a_stretch_of_voice_after_a_pause_of_the_voice_is_a_line_of_its_own():
    """A fresh intro song (seed 87, tiny.en): "... under the bridge and empty" then "road is falling across the water,"
    as the next segment; the voice paused 1.5 s before "and", and Whisper's cut after "empty" lies inside the stretch
    "and empty road ..." is sung in: the line after the pause runs on over the cut, a phrase. Where the cut lies at a
    pause of the voice (another stretch), the two words left of the segment stay in its line (a breath near its end)."""
    heard = [(33.9, 34.5, "your"), (34.5, 34.9, "voice"), (34.9, 35.4, "running"), (35.4, 36.84, "bridge")]
    heard += [(36.84, 37.8, "and"), (37.8, 38.26, "empty")]
    after = [(38.26, 38.52, "road"), (38.52, 38.84, "is"), (38.84, 39.16, "falling"), (39.16, 40.56, "water,")]
    whispers = [Line(a[0][0], a[-1][1], "", words=[Word(s, e, t, 0.9) for s, e, t in a]) for a in (heard, after)]
    voice = Voice([(33.92, 36.0), (37.54, 40.35)], 60.0, word=0.3)
    fitted = [replace(s, words=[voice.fit(w) for w in s.words]) for s in whispers]
    lines = lines_at_pauses(fitted, voice, paced=whispers)
    assert [line.text for line in lines] == ["your voice running bridge", "and empty road is falling water,"]
    assert abs(lines[1].start - 37.54) < 0.3
    apart = Voice([(33.92, 36.0), (37.54, 38.3), (39.0, 41.2)], 60.0, word=0.3)  # a pause at Whisper's cut
    later = [Word(w.start + 0.8, w.end + 0.8, w.text, 0.9) for w in whispers[1].words]
    whispers = [whispers[0], replace(whispers[1], start=later[0].start, end=later[-1].end, words=later)]
    fitted = [replace(s, words=[apart.fit(w) for w in s.words]) for s in whispers]
    assert [line.text for line in lines_at_pauses(fitted, apart, paced=whispers)][0].endswith("bridge and empty")


def test_words_whisper_crushed_after_the_voice_stopped_begin_the_line_where_it_is_sung_next():
    # tiny.en heard "but mounted to" (a phrase sung earlier, heard again) untimed at 22.18 s, 0.55 s after the voice
    # stopped, and "it," stretched to the next stretch of voice; the line sung there began a scene in the band
    said = "Our 18.74 18.92 .88|old 18.92 19.32 .89|house 19.32 19.66 .99|is 19.66 20.1 .99|running 20.1 20.24 .96|"
    said += "behind 20.24 20.64 .79|it, 20.64 21.36 .64|but 22.18 22.18 .93|mounted 22.18 22.18 .96|to 22.18 22.18 .87|"
    said += "it, 22.18 23.86 .98|but 24.14 24.26 .93|wind 24.26 24.54 .84|keeps 24.54 25.04 .42|on 25.04 25.38 .98|"
    said += "dreaming 25.38 25.78 .5|to 25.78 26.0 .69|see. 26.0 26.72 .52"
    words = [Word(float(a), float(b), text, float(p)) for text, a, b, p in (w.split() for w in said.split("|"))]
    segment = Line(18.74, 26.72, " ".join(w.text for w in words), words=words)
    voice = Voice([(18.62, 21.63), (24.22, 26.56)], 30.0)  # (the line sung from 24.0 s)
    lines = sung_lines([segment], voice, 30.0)
    assert [round(line.start, 2) for line in lines] == [18.62, 23.84]
    # a word Whisper timed there is sung where it was heard: the same words given 0.3 s each begin their own line
    timed = [replace(w, start=22.18 + 0.3 * n, end=22.48 + 0.3 * n) for n, w in enumerate(words[7:10])]
    lines = sung_lines([replace(segment, words=[*words[:7], *timed, *words[10:]])], voice, 30.0)
    assert [round(line.start, 2) for line in lines] == [18.62, 22.18]


def test_an_opening_word_far_from_the_voice_begins_a_typical_word_before_its_end():
    # Whisper begins a segment where the one before ended: "Soy" 16.78-18.18 s, sung from 17.63 s, where Silero heard
    # no voice (JamendoLyrics' Fantasma); fitted as an opening word is where Silero is not trusted
    voice = Voice([(2.0, 4.0), (30.0, 33.0)], 60.0, word=0.6)
    soy, un = Word(16.78, 18.18, "Soy"), Word(18.18, 18.8, "un")
    assert [(w.start, w.end) for w in voice.fit_phrase([soy, un])] == [(pytest.approx(17.58), 18.18), (18.18, 18.8)]
    assert voice.fit(un) == un  # (a word inside a phrase keeps Whisper's start)
    filler = Word(5.0, 14.5, "a")  # (longer than every stretch: Whisper gave it no time it could be sung in)
    assert voice.fit(filler, opening=True) == filler


def test_a_line_run_on_over_whispers_cut_ends_there_where_the_voice_pauses_however_briefly():
    # a fresh refrain (seed 116, tiny.en): "Your", after a pause, began a line mid-segment, and Whisper's cut after
    # "rain" lies where the voice pauses 0.35 s; run on, "The golden light ..." (sung from 22.28 s) had no scene
    said = "The 14.12 14.7|lonely 14.7 14.96|bird 14.96 15.4|is 15.4 15.68|burning 15.68 16.06|around 16.06 16.62|"
    said += "the 16.62 16.92|fire 16.92 17.86|Your 17.86 19.76|voice 19.76 20.12|is 20.12 20.46|singing 20.46 20.84|"
    said += "beneath 20.84 21.28|the 21.28 21.58|rain 21.58 22.32/The 22.32 22.68|golden 22.68 22.96|light 22.96 23.42|"
    said += "is 23.42 23.72|dancing 23.72 24.18|into 24.18 24.58|the 24.58 24.92|tide 24.92 26.18"
    segments = []
    for heard in said.split("/"):
        words = [Word(float(a), float(b), text, 0.9) for text, a, b in (w.split() for w in heard.split("|"))]
        segments.append(Line(words[0].start, words[-1].end, " ".join(w.text for w in words), words=words))
    voice = Voice([(14.37, 17.38), (19.46, 21.98), (22.34, 25.18)], 43.1, word=0.3)
    lines = sung_lines(segments, voice, 43.1)
    assert [line.text.split()[0] for line in lines] == ["The", "Your", "The"]
    assert abs(lines[2].start - 22.28) < 0.3
    # where the voice runs on over the cut (one stretch), the line runs on with it: Whisper cut it mid-way
    one = Voice([(14.37, 17.38), (19.46, 25.18)], 43.1, word=0.3)
    assert [line.text.split()[0] for line in sung_lines(segments, one, 43.1)] == ["The", "Your"]


def test_a_line_twice_the_usual_length_with_no_mark_is_cut_where_the_voice_pauses_longest():
    # a fresh refrain (seed 121, tiny.en): its first two lines sung 0.49 s apart, heard as one segment with no mark,
    # Silero's voice parting 0.39 s between them (under a line's pause): one 6.2 s line, over twice the median
    def heard(start: float, text: str, step: float = 0.36) -> Line:
        words = [Word(start + n * step, start + (n + 1) * step, w, 0.9) for n, w in enumerate(text.split())]
        return Line(words[0].start, words[-1].end, text, words=words)

    first = heard(5.82, "my heart is dancing around the fire", 0.38)
    second = heard(8.93, "the quiet town is dancing over the hills", 0.35)
    both = Line(first.start, second.end, f"{first.text} {second.text}", words=first.words + second.words)
    segments = [both, heard(13.41, "the wind keeps on dreaming around"), heard(17.41, "the summer rain is fading")]
    segments += [heard(21.57, "the winter sky is running in"), heard(25.15, "the winter sky is running in")]
    voice = Voice([(5.82, 8.54), (8.93, 11.78), (13.41, 16.45), (17.41, 20.03), (21.57, 24.03), (25.15, 27.55)], 34.0)
    lines = sung_lines(segments, voice, 34.0)
    assert [round(line.start, 2) for line in lines][:2] == [5.82, 8.93]
    # without Silero (none trusted, or none given) the line stays whole: the voice's pause is the only sign
    assert len(lines_at_pauses(segments)) == 5
