"""A stretch of voice Whisper missed, heard again on its own (musicvid.lyrics.transcribe.voice_heard_again): what the
clip's lead caught of the stretch before is that stretch's, not the line sung in this one."""

from musicvid.lyrics.lines import sung_in
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcript import Line, Word


def segment(*words: tuple[float, float, str]) -> Line:
    timed = [Word(start, end, text, 0.5) for start, end, text in words]
    return Line(timed[0].start, timed[-1].end, " ".join(text for *_, text in words), words=timed, confidence=-0.4)


def test_a_word_of_the_stretch_before_caught_by_the_lead_is_left_to_it():
    # (a generated song, seed 97: the lead's "to," was the last line's "water", and opened this line 4 s early)
    voice = Voice([(71.07, 74.37), (74.98, 77.22), (90.0, 95.0)], 100.0)
    heard = segment((73.98, 74.56, "to,"), (75.0, 75.4, "you"), (75.4, 75.9, "know,"), (76.0, 77.1, "singing."))
    [kept] = sung_in([heard], voice, 1)
    assert (kept.start, kept.end, kept.text) == (75.0, 77.1, "you know, singing.")
    assert [w.text for w in kept.words] == ["you", "know,", "singing."] and kept.confidence == -0.4
    # a word near no stretch stays (Silero may miss a voice); a segment all of another stretch goes; one whole stays
    near_none = segment((80.0, 80.5, "oh"), (80.5, 81.0, "yeah"))
    assert sung_in([near_none, segment((72.0, 73.0, "water"))], voice, 1) == [near_none]
    assert sung_in([heard], Voice([], 100.0), None) == [heard]
