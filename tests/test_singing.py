"""Which segments Whisper heard over a whole song are sung (musicvid.lyrics.singing): the rules, on segments by hand."""

from dataclasses import replace

import pytest

from musicvid.lyrics.belief import may_be_sung
from musicvid.lyrics.inventions import invented, loops
from musicvid.lyrics.lines import lines_at_pauses
from musicvid.lyrics.singing import Voice, opened, where_sung
from musicvid.lyrics.transcribe import sung_lines, unheard_voice
from musicvid.lyrics.transcript import Line, Word


def segment(start: float, text: str, seconds_per_word: float = 0.4, probability: float = 0.6) -> Line:
    """A segment of Whisper's, its words one after another."""
    step = seconds_per_word
    words = [Word(start + n * step, start + (n + 1) * step, w, probability) for n, w in enumerate(text.split())]
    return Line(start, words[-1].end, text, words=words)


def stretched(line: Line, starts: dict[int, float]) -> Line:
    """The segment with some of its words (by their index) starting earlier, as Whisper's timing stretches them."""
    words = [replace(w, start=starts.get(n, w.start)) for n, w in enumerate(line.words)]
    return replace(line, words=words)


@pytest.mark.parametrize(
    "heard,why",
    [
        (segment(200.9, "You", 1.4, 0.07), "a phrase Whisper says over music"),
        (segment(7.5, "Thank you so much for watching this video", 0.1), "a phrase Whisper says over music"),
        (segment(8.6, "I'll see you next time.", 0.9, 0.44), "a phrase Whisper says over music"),
        # faster-whisper over Metal madness's guitars, sampled at its last temperature in about one run in six
        (segment(6.7, "The end of the video", 0.35, 0.3), "a phrase Whisper says over music"),
        (segment(20.4, "I'm going to go to the end of this game and I'm going", 0.07, 0.43), "13 words in 0.9 s"),
        (segment(47.7, "I'm only slowly down the street trying to find a piece of mine", 0.45, 0.72), None),
        (segment(143.4, "in blood, in blood, in blood, in blood, in your pain again", 0.5, 0.58), None),
        (segment(174.1, "Thank you for the music", 0.5, 0.6), None),  # sung words, not a video's goodbye
        # a flatter tiny.en (its logits × 0.7) over Metal madness's guitars: hesitations alone
        (segment(75.4, "uh", 1.84, 0.2), "a phrase Whisper says over music"),
        # the credits of the subtitles Whisper learned from
        (segment(3.0, "Subtitles by the Amara.org community", 2.0, 0.3), "a phrase Whisper says over music"),
        (segment(9.0, "Captions by ...", 1.0, 0.3), "a phrase Whisper says over music"),
        (segment(5.0, "Untertitel im Auftrag des ZDF, 2020", 2.0, 0.4), "a phrase Whisper says over music"),
        (segment(7.0, "Sous-titrage Société Radio-Canada", 2.0, 0.4), "a phrase Whisper says over music"),
        (segment(8.0, "Subtítulos realizados por Juan Pérez", 2.0, 0.4), "a phrase Whisper says over music"),
        (segment(12.0, "Written by the river, sung by the sea", 1.8, 0.6), None),
        (segment(14.0, "Société, tu m'auras pas", 1.8, 0.6), None),
        (segment(77.2, "Uh, uh.", 1.5, 0.3), "a phrase Whisper says over music"),
        (segment(0.7, "ん", 2.1, 0.3), "a phrase Whisper says over music"),  # Whisper base over a metal intro
        (segment(3.0, "嗯…", 1.0, 0.3), "a phrase Whisper says over music"),
        (segment(5.0, "んー、それでも", 1.4, 0.5), None),  # a hum before sung words
        (segment(80.0, "uh oh, the river is rising", 0.5, 0.6), None),  # sung words after a hesitation
        # Whisper base over Endgame: Singularity's "Media Threat" (an instrumental): numbers, no word
        (segment(4.6, "1.5% 2.5%", 0.7, 0.5), "no word with a letter"),
        (segment(30.0, "2:30 -", 0.7, 0.5), "no word with a letter"),
        (segment(60.0, "99 luftballons", 0.5, 0.6), None),  # a number sung in a line of words
        (segment(62.0, "東京 2020", 0.5, 0.6), None),  # letters of any script
        # Whisper base over Sectoid's guitars and Endgame: Singularity's "Nebula": fragments with no vowel
        (segment(2.7, "2 pb 2 pb 2 pb 2 pb", 0.7, 0.8), "no word with a vowel"),
        (segment(115.7, "nd nd nd nd", 0.4, 0.9), "no word with a vowel"),
        (segment(12.0, "\u203bD", 0.3, 0.5), "no word with a vowel"),
        (segment(40.0, "1 tbc vln 1 tbc vl", 1.0, 0.6), "no word with a vowel"),
        (segment(70.0, "Cwm Rhondda", 0.8, 0.6), None),  # w and y are Welsh vowels
        (segment(72.0, "Brr, it's cold", 0.8, 0.6), None),  # one sung word is enough
        (segment(74.0, "Ça va, l'été", 0.8, 0.6), None),  # accents aside
        (segment(76.0, "Мы идём", 0.8, 0.6), None),  # other scripts are not judged
        (segment(78.0, "DJ", 0.3, 0.6), None),  # an acronym is sung letter by letter
    ],
)
def test_inventions_are_told_by_whispers_own_signals(heard, why):
    assert invented(heard) == why


def test_words_whisper_could_not_place_in_the_audio_are_no_singing():
    # greedy tiny.en over a guitar: the warping path gave three words the passage and the rest no time
    times = [17.4, 18.8, 18.8, 18.8, 26.86, 26.86, 26.86, 26.86, 26.86, 29.4]
    words = [Word(a, b, w, 0.15) for a, b, w in zip(times, times[1:], "as fortunate as I said the river is a".split())]
    made_up = Line(17.4, 29.4, "as fortunate as I said the river is a", words=words)
    assert invented(made_up) == "6 of 9 words with no time in the audio"
    assert invented(segment(30.0, "we will never let it go", 0.3)) is None


@pytest.mark.parametrize("sharper", [0.25, 1.0, 4.0])
def test_a_guess_is_told_against_the_songs_own_belief_whatever_the_models_scale(sharper):
    """What a more or less confident Whisper keeps is the same: a guess is a segment believed far less than
    the song's typical one, not less than a number tuned to one model."""
    believed = [segment(10.0 * n, "the morning sun is rising", 0.4, min(1.0, 0.5 * sharper)) for n in range(1, 5)]
    weak = segment(45.0, "over the hills", 0.4, 0.1 * sharper)  # a sung line barely made out, near belief
    far = segment(120.0, "=== The Ber Theo", 0.7, 0.05 * sharper)  # a guess at a guitar, far from any
    assert may_be_sung([*believed, weak, far]) == [*believed, weak]


def test_an_invention_over_the_music_does_not_make_silero_look_deaf():
    sung = [segment(3.0, "the morning sun is rising", 0.5, 0.9), segment(30.0, "my heart is beating", 0.5, 0.8)]
    made_up = segment(15.0, "and then the wind went up the hill again", 1.2, 0.2)  # over the passage between
    silero = Voice([(3.05, 5.5), (30.1, 32.0)], 40.0)
    voice, trusted = where_sung([sung[0], made_up, sung[1]], silero, 40.0)
    assert trusted == [True, True, True]
    lines = sung_lines([sung[0], made_up, sung[1]], silero, 40.0)
    assert [line.text for line in lines] == ["the morning sun is rising", "my heart is beating"]


def test_where_silero_is_deaf_a_words_opening_is_no_longer_than_the_songs_typical_word():
    # the first word of each line stretched back over the music before it, as Whisper's timing does
    first = stretched(segment(2.0, "the morning sun is rising", 0.3), {0: 0.6})
    # and "like" (31.2 to 31.5), after the comma
    second = stretched(segment(30.0, "my heart is beating, like a drum", 0.3), {0: 26.3, 4: 30.9})
    voice, trusted = where_sung([first, second], Voice([], 40.0), 40.0)
    assert not any(trusted) and voice.word == pytest.approx(0.3)
    first, second = opened([first, second], voice.word)
    assert [first.words[0].start, second.words[0].start, second.words[4].start] == pytest.approx([2.0, 30.0, 31.2])
    assert second.words[1].start == pytest.approx(30.3)  # a word inside a phrase keeps its time
    assert voice.stretches[0][0] == pytest.approx(2.0)  # the singing starts with the first word, not before


def test_words_whisper_barely_believes_stand_only_near_words_it_believes():
    guess = segment(27.2, "=== The Ber Theo", 0.7, 0.01)  # over an instrumental's guitars
    line, near = segment(61.7, "even you, you evolved", 1.5, 0.6), segment(68.7, "taking over his control", 1.0, 0.05)
    far = segment(120.0, "your soul", 1.0, 0.03)
    assert may_be_sung([guess, line]) == [line] and may_be_sung([line, near, far]) == [line, near]


def test_silero_decides_only_where_it_agrees_with_whisper():
    # the second line barely believed, near the first: a guess that stands unless Silero says nobody sings it
    lines = [segment(10.0, "the morning sun is rising"), segment(20.0, "over the hills", 0.4, 0.15)]
    clear = Voice([(10.1, 12.0), (25.0, 26.0)], 60.0)  # hears the first line, and a voice nobody sang words to
    voice, trusted = where_sung(lines, clear, 60.0)
    assert all(trusted) and voice.stretches == clear.stretches
    assert [line.text for line in sung_lines(lines, clear, 60.0)] == ["the morning sun is rising"]
    deaf = Voice([(50.0, 51.0)], 60.0)  # a band drowns the voice: Silero hears almost nothing
    voice, trusted = where_sung(lines, deaf, 60.0)
    assert not any(trusted) and voice.stretches[:2] == [(10.0, 12.0), (20.0, 21.2)]
    assert [line.text for line in sung_lines(lines, deaf, 60.0)] == ["the morning sun is rising", "over the hills"]


def test_silero_drops_a_line_it_hears_no_voice_under_only_where_it_heard_the_voice_around_it_and_whisper_doubts():
    """A folk guitar: Silero hears the verse, not the passage sung at a minute: the line Whisper barely believed
    amid the verse with no voice under it goes; one it heard as surely as the verse stays, and so do the
    passage's lines."""
    verse = [segment(10.0 + 4 * n, "the morning sun is rising") for n in range(4)]
    amid, sure = segment(26.5, "over the hills", 0.4, 0.1), segment(29.0, "a river runs")
    missed = [segment(60.0 + 4 * n, "my heart is calling") for n in range(2)]
    silero = Voice([(10.05 + 4 * n, 12.0 + 4 * n) for n in range(4)], 90.0)
    lines = sung_lines([*verse, amid, sure, *missed], silero, 90.0)
    # (the verse's lines between Whisper's onsets and Silero's, 0.05 s later: Voice.fit)
    assert [line.start for line in lines] == pytest.approx([10.0, 14.0, 18.0, 22.0, 29.0, 60.0, 64.0], abs=0.05)


def test_a_word_far_from_every_stretch_stays_where_whisper_put_it():
    voice = Voice([(10.0, 12.0)], 60.0)
    far, near = voice.fit(Word(30.0, 30.5, "far")), voice.fit(Word(8.0, 10.5, "near"))
    assert (far.start, far.end) == (30.0, 30.5) and near.start == 10.0  # it began with the voice, no earlier


def test_a_first_word_whisper_times_before_the_voice_begins_there_between_the_two_onsets():
    """tiny.en after 7.7 s of band (a generated song, seed 46): "The" 30.06-30.92 s, its end before Silero's voice
    at 31.3 s; the line was sung from 31.2 s. A typical word before that end alone began it 0.68 s early.
    Silero, late on recordings, sets the other bound: the line begins at the mean of the two."""
    voice = Voice([(20.0, 23.6), (31.3, 34.1)], 60.0, word=0.4)
    the = voice.fit(Word(30.06, 30.92, "The"), opening=True)
    assert the.start == pytest.approx((30.92 - 0.4 + 31.3) / 2) and abs(the.start - 31.2) <= 0.5
    assert voice.fit(Word(30.9, 31.8, "Sky"), opening=True).start == pytest.approx(31.3)  # Whisper's later: the voice's
    assert voice.fit(Word(29.0, 30.8, "The"), opening=True).start == 31.3  # a typical word before: no time there


def test_a_word_whisper_crushed_at_its_segments_start_goes_with_the_sung_word_after_it():
    # the voice sings "the ship is rising" from 18.56 s (and a line before, to 15.55 s); Whisper's segment begins
    # where the one before ended, with "the" crushed there and "ship" stretched back to meet it
    voice = Voice([(12.19, 15.55), (18.56, 21.31)], 30.0)
    heard = [Word(17.2, 17.22, "the"), Word(17.22, 19.08, "ship"), Word(19.08, 19.3, "is"), Word(19.3, 19.7, "rising")]
    the, ship, *_ = voice.fit_phrase(heard)
    assert ship.start == 18.56 and (the.start, the.end) == (18.56, 18.56)
    lines = sung_lines([Line(17.2, 19.7, "the ship is rising", words=heard)], voice, 30.0)
    assert [(line.start, line.text) for line in lines] == [(18.56, "the ship is rising")]
    # a word heard alone, a pause before the next, or the next one sung where it stands, stays where Whisper put it
    alone = [Word(16.0, 16.3, "oh"), Word(17.22, 19.08, "ship")]
    assert voice.fit_phrase(alone)[0].start == 16.0
    nowhere = [Word(25.0, 25.2, "la"), Word(25.2, 25.6, "la")]
    assert voice.fit_phrase(nowhere) == nowhere
    # also where it is crushed a lead after the voice of the line before stopped (seed 53's third refrain), as the
    # segment's first word; not as another (a line's last word, heard crushed there)
    voice = Voice([(30.592, 32.96), (34.08, 36.48)], 43.6, word=0.3)
    heard = [Word(33.02, 33.02, "My"), Word(33.02, 34.66, "heart"), Word(34.66, 34.94, "is")]
    assert [(w.start, w.end) for w in voice.fit_phrase(heard)[:2]] == [(34.08, 34.08), (34.08, 34.66)]
    lines = sung_lines([Line(33.02, 34.94, "My heart is", words=heard)], voice, 43.6)
    assert [line.text for line in lines] == ["My heart is"] and abs(lines[0].start - 34.0) < 0.2  # (sung from 34.0 s)
    ending = [Word(31.0, 32.9, "the"), Word(33.0, 33.02, "river"), Word(33.02, 34.66, "my")]
    assert voice.fit_phrase(ending)[1].start == 33.0
    # words Whisper gave their time are sung where it heard them, where Silero heard the voice only later
    # (Fantasma's "Soy un fantasma", led in together 2-4 s late), the opening one from a typical word before its end
    given = [Word(16.78, 18.18, "soy"), Word(18.18, 18.8, "un"), Word(18.8, 19.96, "fantasma")]
    assert Voice([(20.7, 24.0)], 30.0).fit_phrase(given)[:2] == [Word(17.88, 18.18, "soy"), given[1]]


def test_a_line_whisper_says_again_over_the_lines_after_it_is_a_loop_and_a_refrain_sung_again_is_not():
    verse = [segment(4.0, "the morning sun is rising over the hills"), segment(9.0, "my heart is calling to the sea")]
    refrain = [segment(start, "the wind is dancing in the sky", 0.45) for start in (14.0, 18.0, 22.5)]
    assert loops([*verse, *refrain]) == [] and may_be_sung([*verse, *refrain]) == [*verse, *refrain]
    # the line before said again over the two lines sung after it (18 s), as a flattened tiny.en did
    looped = segment(12.0, "my heart is calling to the sea", 18.0 / 7)
    assert loops([*verse, looped]) == [2] and may_be_sung([*verse, looped]) == verse
    # sung again a little slower, and once more after the loop: a refrain still
    slower, again = (
        segment(20.0, "my heart is calling to the sea", 0.7),
        segment(40.0, "my heart is calling to the sea"),
    )
    assert loops([*verse, slower, looped, again]) == [3]


def test_a_line_whisper_heard_after_the_voice_it_was_sung_in_moves_there():
    lines = [segment(10.0, "the morning sun is rising"), segment(29.0, "the ocean is", 0.45)]  # sung at 20 s
    silero = Voice([(10.05, 12.0), (20.0, 23.0)], 40.0)
    moved = sung_lines(lines, silero, 40.0)
    assert [line.text for line in moved] == ["the morning sun is rising", "the ocean is"]
    assert moved[1].start == pytest.approx(20.0) and moved[1].words[-1].end == pytest.approx(21.3)
    # no stretch of voice left unheard before it: heard as surely as the line before, it stays where it was heard
    stays = sung_lines(lines, Voice([(10.05, 12.0)], 40.0), 40.0)  # ("the", far from the voice: a typical word long)
    assert [(line.text, round(line.start, 3)) for line in stays] == [(lines[0].text, 10.025), ("the ocean is", 29.05)]


def test_a_voice_whisper_heard_nothing_of_is_heard_again_only_where_silero_and_whisper_agree():
    lines = [segment(2.0, "we sail into the dawn"), segment(10.0, "and the sea is gold")]
    sung = [(2.0, 4.0), (10.0, 12.0), (30.0, 33.0)]  # the third: a line Whisper missed
    assert unheard_voice(lines, Voice(sung, 60.0)).stretches == [(30.0, 33.0)]
    assert unheard_voice(lines, Voice([*sung[:2], (30.0, 30.6)], 60.0)).stretches == []  # a breath, not a line
    # a lead is the words begun between stretches, not the line before's (round 12: a refrain's third time, 0.44 s on)
    assert unheard_voice(lines, Voice([*sung[:2], (12.8, 14.5)], 60.0)).stretches == [(12.8, 14.5)]
    assert unheard_voice([*lines, segment(12.2, "oh")], Voice([*sung[:2], (12.8, 14.5)], 60.0)).stretches == []
    stretched = [lines[0], replace(lines[1], words=[*lines[1].words[:-1], replace(lines[1].words[-1], end=31.0)])]
    assert unheard_voice(stretched, Voice(sung, 60.0)).stretches == sung[2:]  # "gold" held over the line Whisper missed
    assert unheard_voice([], Voice(sung, 60.0)).stretches == []  # an instrumental: Silero's voice is the band's
    band = [(2.0, 4.0), (10.0, 12.0), (20.0, 40.0)]  # Whisper's belief under less than half of Silero's voice
    assert unheard_voice(lines, Voice(band, 60.0)).stretches == []


def test_silero_is_trusted_passage_by_passage():
    """A folk guitar: Silero hears the verse, and of the passage sung a minute later only two moments of the
    first line, a breath apart. Over the song it agrees with Whisper, but not around that passage: there the
    lines are Whisper's, whole, where Whisper heard them; in the verse Silero still places them."""
    verse = [segment(10.3 + 4 * n, "the morning sun is rising") for n in range(4)]
    passage = [segment(80.0 + 8 * n, "my heart is calling to the sea and the wind to the sky", 0.5) for n in range(2)]
    silero = Voice([*((10.0 + 4 * n, 12.3 + 4 * n) for n in range(4)), (83.5, 83.9), (84.6, 85.0)], 120.0)
    lines = sung_lines([*verse, *passage], silero, 120.0)
    assert [line.text for line in lines] == [line.text for line in [*verse, *passage]]
    assert [line.start for line in lines] == pytest.approx([10.0, 14.0, 18.0, 22.0, 80.0, 88.0])
    assert [line.end for line in lines[4:]] == pytest.approx([86.5, 94.5])


def test_legato_lines_are_cut_where_whisper_ends_their_clauses_but_not_in_a_number_or_a_short_cry():
    """A singer who leaves 0.15 s between lines: Whisper's one segment over three lines, with a comma at each
    line's end (it-legato, Whisper base), the song's other lines heard a segment each. A clause ends a line between
    two phrases inside a line over twice the song's median; "Oh," does not, nor a number's comma or an
    abbreviation's point, nor one that leaves a cry after it, nor any in a line of the usual length."""
    sung = ["sempre ti amerò,", "sotto le stelle,", "zitto nel silenzio"]
    lines = [segment(6.0 + 2.35 * n, text, 0.75) for n, text in enumerate(sung)]
    heard = Line(6.0, lines[-1].end, " ".join(sung), words=[w for line in lines for w in line.words])
    others = [segment(20.0 + 4 * n, "la notte è lunga", 0.55) for n in range(4)]  # 2.2 s each
    cut = lines_at_pauses([heard, *others])
    assert [(line.start, line.text) for line in cut] == [(line.start, line.text) for line in [*lines, *others]]
    for text in (
        "Oh, sotto le stelle vicino al mare",
        "we paid 1, 000 for the night and the day",
        "we sang to Mr. Jones all night and all day",
        "sotto le stelle vicino al mare, oh yeah",
    ):
        short = [segment(20.0 + 3 * n, "la notte", 0.55) for n in range(4)]  # (this line over twice their 1.1 s)
        assert [line.text for line in lines_at_pauses([segment(6.0, text, 0.6), *short])][0] == text
    # as long as the song's other lines, a line with a comma inside is one sung line (Veränderung, Whisper base)
    usual = [segment(30.0 + 4 * n, "gerade denke ich mir, wie schön das Leben ist.", 0.4) for n in range(3)]
    assert [line.text for line in lines_at_pauses(usual)] == [line.text for line in usual]


def test_a_voice_whisper_missed_most_of_is_heard_again_where_silero_hears_the_singer_under_all_it_heard():
    """Whisper base heard nothing of a Turkish song's first 30 s (tr-intro): what it believed lies under less than
    half of Silero's voice, but Silero's voice lies under all it believed, so Silero hears the singer. The lines
    it missed are heard again, as much as Whisper heard at most, the likest lines first: not 7 s of talk before."""
    heard = [segment(30.4 + 6 * n, "yollar uzun ama dönüyorum", 1.0) for n in range(3)]  # 12 s heard
    sung = [(1.0, 8.2), (14.7, 18.6), (20.0, 23.2), (25.2, 29.6), *((30.9 + 6 * n, 34.5 + 6 * n) for n in range(3))]
    assert unheard_voice(heard, Voice(sung, 50.0)).stretches == sung[1:4]
    # Silero deaf under one of the lines Whisper believed: the voice it hears elsewhere may be the band's
    assert unheard_voice(heard, Voice([*sung[:5], sung[6]], 50.0)).stretches == []


def test_a_held_note_silero_hears_in_part_is_no_pause_where_whisper_heard_no_pause():
    """Folk singing Silero hears in part (JamendoLyrics' "te amo"): "go" held from 10.8 s to 12 s, Whisper's words
    back to back. Fitted into the stretch Silero heard, "go" ends at its tail, 0.5 s before "of": no pause the
    singer made, and the line is whole. Where the voice itself pauses (2 s before the next line) it ends."""
    words = [("never", 10.0, 10.5), ("let", 10.5, 10.8), ("go", 10.8, 12.0), ("of", 12.0, 12.3), ("me", 12.3, 12.6)]
    held = Line(10.0, 12.6, "never let go of me", words=[Word(a, b, text, 0.9) for text, a, b in words])
    after = segment(14.6, "the river runs", 0.5, 0.9)
    silero = Voice([(10.0, 11.2), (14.6, 16.1)], 30.0)
    lines = sung_lines([held, after], silero, 30.0)
    assert [line.text for line in lines] == ["never let go of me", "the river runs"]
    assert [line.start for line in lines] == pytest.approx([10.0, 14.6])
    # the fitted words alone part at "of", as they did before the pauses were read from Whisper's times
    fitted = [replace(held, words=silero.fit_phrase(held.words)), after]
    assert [line.text for line in lines_at_pauses(fitted)][:2] == ["never let go", "of me"]


def test_the_voice_pausing_ends_a_line_only_between_two_phrases():
    """Over a folk guitar Silero's voice parts inside a sung line (te amo: "Tenía cargada con" 0.7 s before
    "depresión"): a cut that leaves a word or two of its segment is no line end. Between two phrases it is one, as
    a clause's end is (tiny.en heard two sung lines as one segment, the voice stopping 0.67 s between them)."""
    held = segment(54.5, "tenia cargada con depresion", 0.8, 0.9)
    two = segment(60.0, "the sun goes down the night comes up", 0.4, 0.9)
    silero = Voice([(54.5, 56.2), (56.9, 58.0), (60.0, 61.5), (62.0, 63.4)], 90.0)
    lines = sung_lines([held, two], silero, 90.0)
    assert [line.text for line in lines] == ["tenia cargada con depresion", "the sun goes down", "the night comes up"]


def test_a_line_run_on_over_whispers_cut_into_twice_the_usual_length_is_cut_there_where_no_clause_is_marked():
    """tiny.en heard a generated refrain's first line and, after a pause, its second in one segment, and the third,
    sung 0.43 s after the second, as the next: the second ran on into the third (one 7.3 s line, over twice the
    song's median), and no comma marked where it ends. Whisper's cut is then the line's end. A line begun after a
    pause and cut mid-line by Whisper still runs on, where that leaves it of the usual length."""
    first, second = (
        segment(3.5, "the winter sky is rising beneath the rain"),
        segment(9.5, "an empty road is running along the river"),
    )
    heard = Line(3.5, second.end, f"{first.text} {second.text}", words=[*first.words, *second.words])
    third = segment(13.0, "my shadow keeps on turning across the water")
    rest = [segment(18.5 + 5 * n, "a silver river is singing under the bridge") for n in range(3)]
    lines = lines_at_pauses([heard, third, *rest])
    assert [(line.start, line.text) for line in lines] == [
        (line.start, line.text) for line in [first, second, third, *rest]
    ]
    # cut by Whisper mid-line, three words after a pause: one line of the usual length, run on
    short = segment(9.5, "an empty road")
    heard = Line(3.5, short.end, f"{first.text} {short.text}", words=[*first.words, *short.words])
    tail = segment(11.0, "is running along the river")
    lines = lines_at_pauses([heard, tail, *rest])
    assert [line.text for line in lines][:2] == [first.text, "an empty road is running along the river"]


def test_a_segment_whose_last_word_whisper_timed_past_the_next_segment_leaves_the_next_its_own_line():
    """faster-whisper decodes a window again from its last whole segment: tiny.en's segment over two sung lines
    ended in an "a" timed at 59.98 s, where the next window's segment "The morning sun ..." begins at 40.43 s.
    Run on backwards from that "a" the line ended before it began, and went; a line is sung forwards."""
    two = segment(31.8, "a burning candle is shining inside my head")
    dangling = Line(two.start, 59.98, f"{two.text} a", words=[*two.words, Word(59.98, 59.98, "a", 0.3)])
    again = segment(40.43, "the morning sun is running across the water")
    later = segment(60.0, "the wind is fading beneath the rain")
    lines = lines_at_pauses([dangling, again, later])
    assert [(line.start, line.text) for line in lines if line.end > line.start] == [
        (two.start, two.text),
        (again.start, again.text),
        (later.start, later.text),
    ]


def test_a_clause_whisper_ends_where_the_voice_parts_for_less_than_a_lines_pause_ends_a_line():
    """Two lines sung 0.48 s apart (a fresh generated refrain, openai-whisper's tiny.en): Whisper heard them in one
    segment with a comma between, Silero's voice parting there. Either sign alone is no line's end (a comma inside a
    line, a breath); the two together are, between two phrases."""
    first, second = segment(14.94, "your voice is dancing in the sky,"), segment(17.9, "an empty road is rising")
    heard = Line(first.start, second.end, f"{first.text} {second.text}", words=[*first.words, *second.words])
    others = [segment(23.0 + 4 * n, "my shadow is fading around the fire") for n in range(3)]
    silero = Voice([(14.94, 17.42), (17.9, 19.9), *((23.0 + 4 * n, 25.8 + 4 * n) for n in range(3))], 40.0)
    assert [line.text for line in lines_at_pauses([heard, *others], silero)][:2] == [first.text, second.text]
    # the voice parting with no comma, or a comma with the voice going on, leaves the line whole
    bare = replace(heard, words=[replace(w, text=w.text.rstrip(",")) for w in heard.words])
    assert len(lines_at_pauses([bare, *others], silero)) == 4
    one_voice = Voice([(14.94, 19.9), *((23.0 + 4 * n, 25.8 + 4 * n) for n in range(3))], 40.0)
    assert len(lines_at_pauses([heard, *others], one_voice)) == 4


def timed_segment(*words: tuple[float, float, str]) -> Line:
    """A segment of Whisper's with its words' times as heard, each believed."""
    heard = [Word(start, end, text, 0.9) for start, end, text in words]
    return Line(heard[0].start, heard[-1].end, " ".join(w.text for w in heard), words=heard)


def test_a_word_whisper_stretched_over_the_band_goes_with_the_sung_word_after_it():
    """Seed 55's long song, as tiny.en heard it: two lines sung 13.5 s apart in one segment, its "A" over 9.3 s of
    band (longer than every stretch of the voice); the second line was lost in the first. A 2 s word stays."""
    first = [(58.52, 59.32, "The"), (59.32, 59.58, "wind"), (59.58, 61.22, "calling"), (61.22, 64.56, "town")]
    second = [(64.56, 73.86, "A"), (73.86, 75.82, "silver"), (75.82, 76.2, "river"), (76.2, 79.0, "road")]
    heard = timed_segment(*first, *second)
    voice = Voice([(59.1, 61.7), (75.2, 78.4)], 90.0, word=0.3)
    fitted = replace(heard, words=voice.fit_phrase(heard.words))
    a, silver = fitted.words[4:6]
    assert (a.start, a.end) == (silver.start, silver.start) and abs(silver.start - 75.16) < 0.3  # (sung from 75.16 s)
    lines = lines_at_pauses([fitted], voice, [heard])  # (Silero trusted: the pauses as Whisper heard them)
    assert [line.text for line in lines] == ["The wind calling town", "A silver river road"]
    held = [Word(71.8, 73.86, "A"), Word(73.86, 75.82, "silver")]  # (no longer than a stretch: Whisper's end)
    assert voice.fit_phrase(held)[0] == Word(73.56, 73.86, "A")


def test_a_line_whisper_did_not_time_where_nobody_sings_goes():
    """Seed 57: a window's end, "a burning" over 20.64-29.98 s ("a" longer than every stretch of the voice,
    "burning" crushed), where nobody sings: the line was sung from 15.49 s, and heard again there. Seed 56: the
    same at a window's end, but begun where the voice does, is a line sung."""
    voice = Voice([(9.38, 12.74), (15.49, 18.69), (44.0, 47.65), (119.94, 122.43)], 130.0, word=0.3)
    verse = [timed_segment((9.66, 10.1, "lonely"), (10.1, 12.24, "bird")), timed_segment((15.49, 18.69, "candle"))]
    lost = timed_segment((20.64, 29.98, "a"), (29.98, 29.98, "burning"))
    begun = timed_segment((119.94, 126.28, "my"), (126.28, 126.28, "heart"))
    said = [*verse, lost, timed_segment((44.2, 47.5, "again")), begun]
    assert voice.sung(said, said, 0.9) == [*verse, said[3], begun]
