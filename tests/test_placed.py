"""Known lines from the words the walk placed (musicvid.lyrics.placed): in their order, none dropped, an unheard line
never before the line before it, and a heard line's time never taken by an unheard one before it."""

import pytest

from musicvid.lyrics.openings import Openings
from musicvid.lyrics.placed import known_lines
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.windows import TimedWord

PACE = Openings(longest=0.8, per_letter=0.1)
VOICE = Voice([], duration=60.0)  # (no stretch of voice: openings stay as trimmed)


def placed(*spans: tuple[float, float], evidence: float) -> list[TimedWord]:
    return [TimedWord(start, end, 0.5, evidence) for start, end in spans]


def test_lines_the_path_put_over_the_line_before_are_spread_after_it_in_their_order_none_dropped():
    # a clip given a whole song's lyrics: its last window put text it has no evidence for over the last line sung
    texts = ["sung here now", "never sung once", "also never sung", "the last two", "heard at the end"]
    words = [
        placed((40.0, 40.5), (40.5, 41.0), (41.0, 49.98), evidence=3.0),
        None,
        placed((49.28, 49.4), (49.4, 49.5), (49.5, 49.6), evidence=0.1),
        placed((49.6, 49.7), (49.7, 50.5), (50.5, 50.9), evidence=0.1),
        placed((54.0, 54.4), (54.4, 54.8), (54.8, 55.98), evidence=2.0),
    ]
    lines = known_lines(texts, words, VOICE, PACE)
    assert [line.text for line in lines] == texts
    assert all(a.end <= b.start for a, b in zip(lines, lines[1:]))
    assert [line.confidence for line in lines[1:4]] == [0.0, 0.0, 0.0]
    # the three unheard lines share the time between the two heard ones, evenly
    assert [line.start for line in lines[1:]] == pytest.approx([49.98, 51.32, 52.66, 54.0], abs=0.01)


def test_an_unheard_line_before_a_heard_one_ends_where_the_heard_one_starts():
    texts = ["nobody sings this", "sung right here"]
    words = [placed((10.0, 11.0), (11.0, 12.5), (12.5, 13.0), evidence=0.2)]
    words.append(placed((12.0, 12.4), (12.4, 12.8), (12.8, 13.5), evidence=2.5))
    lines = known_lines(texts, words, VOICE, PACE)
    assert lines[1].start == 12.0 and lines[1].confidence == 0.5
    assert lines[0].end == 12.0 and max(w.end for w in lines[0].words) == 12.0


def test_lines_the_end_of_the_song_leaves_no_time_are_told_of_and_kept():
    from musicvid.lyrics.placed import crowded_tail
    from musicvid.lyrics.transcript import Line

    lines = [Line(1.0, 3.0, "heard", confidence=0.7), Line(3.0, 9.0, "unheard, in time", confidence=0.0)]
    assert crowded_tail(lines, word=0.35) is None  # (an outro's unheard line, given time)
    lines += [Line(9.98, 9.98, "one", confidence=0.0), Line(9.98, 10.0, "two", confidence=0.0)]
    assert crowded_tail(lines, word=0.35).startswith("2 of the 4 lines given were not heard")
    assert crowded_tail([Line(0.0, 0.1, "none heard", confidence=0.0)], word=0.35).startswith("1 of the 1 lines")
