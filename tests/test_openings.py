"""A known line's opening: the warping path gives the frames before a line to its first word (or to its second,
after a first given none); the opening is trimmed to the time a word takes and starts with the voice."""

from musicvid.lyrics.openings import Openings, letters, voiced_opening
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.windows import TimedWord

PACE = Openings(longest=0.8, per_letter=0.1)  # a word of 4 letters or more may take the longest opening


def words(*spans: tuple[float, float]) -> list[TimedWord]:
    return [TimedWord(start, end, 0.5, 2.0) for start, end in spans]


def starts(timed: list[TimedWord]) -> list[float]:
    return [w.start for w in timed]


def test_an_opening_word_stretched_over_the_pause_before_it_starts_the_longest_word_before_its_end():
    trimmed = PACE.trimmed(words((10.0, 12.0), (12.0, 12.3)), "word", after=9.0)
    assert starts(trimmed) == [11.2, 12.0]
    assert [w.end for w in trimmed] == [12.0, 12.3]


def test_a_second_word_stretched_after_a_first_given_none_shares_its_time_each_at_most_the_longest_word():
    trimmed = PACE.trimmed(words((10.0, 10.0), (10.0, 12.0), (12.0, 12.4)), "word", after=9.0)
    assert starts(trimmed) == [10.4, 11.2, 12.0]
    assert trimmed[0].end == trimmed[1].start == 11.2


def test_a_first_word_given_no_time_starts_half_the_longest_word_before_its_end_not_before_the_line_before():
    assert starts(PACE.trimmed(words((10.0, 10.0), (10.0, 10.3)), "a", after=9.0)) == [9.6, 10.0]
    assert starts(PACE.trimmed(words((10.0, 10.0), (10.0, 10.3)), "a", after=9.8)) == [9.8, 10.0]


def test_a_word_no_longer_than_the_longest_is_left_as_the_path_placed_it():
    placed = words((10.0, 10.5), (10.5, 11.0))
    assert PACE.trimmed(placed, "word", after=0.0) == placed


def test_a_short_opening_word_stretched_over_a_gap_is_given_the_time_its_letters_take():
    # "a" (1 letter) and "the" (3) at 0.1 s a letter: twice that before their end, not the song's longest word
    assert starts(PACE.trimmed(words((10.0, 12.0), (12.0, 12.3)), "a", after=9.0)) == [11.8, 12.0]
    assert starts(PACE.trimmed(words((10.0, 12.0), (12.0, 12.3)), "the", after=9.0)) == [11.4, 12.0]
    assert starts(PACE.trimmed(words((10.0, 12.0), (12.0, 12.3)), "singing,", after=9.0)) == [11.2, 12.0]


def test_the_pace_is_the_median_of_the_placed_words():
    placed = [words((0.0, 0.4), (0.4, 0.8), (0.8, 2.0)), None, words((5.0, 5.0), (5.0, 5.3))]
    pace = Openings.of(["to be free", "unheard line", "a ray"], placed)
    assert pace.longest == 2 * 0.4  # the words given time: 0.4, 0.4, 1.2, 0.3
    assert round(pace.per_letter, 3) == 0.2  # the median of 0.2, 0.2, 0.3 and 0.1 s a letter
    assert letters("l'amour,") == 6 and letters("—") == 1


def test_an_opening_word_starts_where_the_voice_begins_inside_it():
    voice = Voice([(2.0, 5.0), (10.6, 14.0)], 60.0)
    assert starts(voiced_opening(words((10.0, 11.0), (11.0, 11.4)), voice)) == [10.6, 11.0]


def test_an_opening_word_already_voiced_at_its_start_or_with_no_voice_heard_stays():
    placed = words((10.0, 11.0), (11.0, 11.4))
    assert voiced_opening(placed, Voice([(9.5, 14.0)], 60.0)) == placed
    assert voiced_opening(placed, Voice([], 60.0)) == placed  # a voice under a loud band: Silero hears none
    assert voiced_opening(placed, Voice([(20.0, 24.0)], 60.0)) == placed


def test_a_voice_beginning_at_the_very_end_of_the_opening_word_leaves_it_its_time():
    placed = words((10.0, 11.0), (11.0, 11.4))
    assert voiced_opening(placed, Voice([(10.98, 14.0)], 60.0)) == placed
