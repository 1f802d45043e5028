"""The alignment's walk (musicvid.lyrics.align.step) moves the line it placed last where the next window, which
holds the line whole, hears it later and with more evidence: a window ending in a line's first words has evidence
for it, and its path may put the line in the band before them (Whisper base, a generated song with a 25 s gap)."""

from dataclasses import replace

from musicvid.lyrics.align import Attempt, Walk, step
from musicvid.lyrics.windows import TimedWord

TEXTS = [f"line {n} of the song sung here" for n in range(7)]
SIZES = [10] * 7


def words(start: float, evidence: float, count: int = 7, each: float = 0.3) -> list[TimedWord]:
    return [TimedWord(start + k * each, start + (k + 1) * each, 0.5, evidence) for k in range(count)]


def placed_early() -> list:
    """Lines 0 to 3 where they are sung; line 4, sung at 50.6 s, placed at 28.0 s, in the band."""
    return [words(1.0 + 5 * n, 3.0) for n in range(4)] + [words(28.0, 2.6)] + [None, None]


def next_window(evidence: float) -> Attempt:
    """The window after line 4 was placed (27-57 s): line 4 leads its text, and line 5 is not heard in it."""
    return Attempt(27.0, 57.0, False, {5: words(55.5, -0.2)}, before=words(50.6, evidence))


def test_the_line_placed_last_moves_where_the_next_window_hears_it_with_more_evidence():
    placed, walk = placed_early(), Walk(line=5, cursor=30.1, rate=3.0, before=(4, 28.0))
    after = step(next_window(3.9), walk, TEXTS, SIZES, placed)
    assert placed[4][0].start == 50.6 and placed[4][-1].end == 50.6 + 7 * 0.3
    assert (after.line, after.before) == (5, (4, 50.6)) and after.cursor == placed[4][-1].end
    assert placed[:4] == placed_early()[:4]  # the lines before it stay


def test_a_line_heard_later_with_less_evidence_than_where_it_was_placed_stays():
    # a short line sung again in a refrain: the next window hears it again, later, but less clearly
    placed, walk = placed_early(), Walk(line=5, cursor=30.1, rate=3.0, before=(4, 28.0))
    step(next_window(2.0), walk, TEXTS, SIZES, placed)
    assert placed == placed_early()


def test_a_line_heard_where_it_was_placed_or_moved_once_already_stays():
    placed, walk = placed_early(), Walk(line=5, cursor=30.1, rate=3.0, before=(4, 28.0))
    here = replace(next_window(3.9), before=words(28.2, 3.9))  # within MOVED_SECONDS of where it was placed
    step(here, walk, TEXTS, SIZES, placed)
    assert placed == placed_early()
    step(next_window(3.9), replace(walk, tried=frozenset({("moved", 4)})), TEXTS, SIZES, placed)
    assert placed == placed_early()


def test_a_line_whose_words_the_path_mostly_gave_no_time_is_left_to_the_next_window():
    # a refrain's third time, sung after the window ends, squeezed into the end of its second (seed 91, both
    # backends): its first four words at one instant, heard with evidence all the same (the second's words)
    squeezed = [TimedWord(27.02, 27.02, 0.9, 3.0)] * 4 + words(27.02, 3.0, count=3)
    tried = Attempt(0.0, 30.0, False, {0: words(1.0, 3.0), 1: words(6.0, 3.0), 2: squeezed})
    placed = [None] * 3
    after = step(tried, Walk(rate=3.0), TEXTS[:3], SIZES[:3], placed)
    assert placed[:2] == [words(1.0, 3.0), words(6.0, 3.0)] and placed[2] is None and after.line == 2


def test_a_line_the_placing_window_does_not_hear_goes_where_a_window_thrown_away_heard_it_whole():
    # generated long song, seed 104: the window that heard line 8 started again nearer (its first line's opening
    # word stretched back over a gap), the next stopped at a stretched word, and the last placed line 8 unheard
    stretched = [TimedWord(0.5, 8.0, 0.5, 3.0), *words(8.0, 3.0, count=6)]
    thrown = Attempt(0.0, 30.0, False, {0: stretched, 1: words(12.0, 3.0)})
    after = step(thrown, Walk(rate=3.0), TEXTS[:3], SIZES[:3], [None] * 3)
    assert after.line == 0 and after.heard_whole[1] == words(12.0, 3.0)
    last = Attempt(5.0, 35.0, True, {0: words(8.0, 3.0), 1: words(20.0, -0.5), 2: words(24.0, 3.0)})
    placed = [None] * 3
    after = step(last, replace(after, tried=frozenset()), TEXTS[:3], SIZES[:3], placed)
    assert placed == [words(8.0, 3.0), words(12.0, 3.0), words(24.0, 3.0)] and after.line == 3


def test_a_line_heard_earlier_stays_where_the_placing_window_put_it_unless_that_lies_between_its_neighbours():
    walk = Walk(rate=3.0, heard_whole={1: words(9.0, 3.0)})  # heard where line 0 is now placed
    last = Attempt(5.0, 35.0, True, {0: words(8.0, 3.0), 1: words(20.0, -0.5), 2: words(24.0, 3.0)})
    placed = [None] * 3
    step(last, walk, TEXTS[:3], SIZES[:3], placed)
    assert placed == [words(8.0, 3.0), words(20.0, -0.5), words(24.0, 3.0)]
    step(last, replace(walk, heard_whole={1: words(22.0, 3.0)}), TEXTS[:3], SIZES[:3], placed)  # ends after 24 s
    assert placed[1] == words(20.0, -0.5)
