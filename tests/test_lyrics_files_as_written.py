"""Lyrics files as their sources write them (musicvid.lyrics.lrc, srt, known): Chinese and Japanese LRC, syllable-timed
karaoke LRC, a held line's end marker, bilingual LRC, walaoke singers, lyrics pasted from Genius, WebVTT saved as
.srt, an LRC's language tag. Each is read as what its writer meant: nothing of the site or the format is sung."""

import json
import logging

import pytest

from musicvid.core.errors import UserError
from musicvid.lyrics.known import check_lyrics_file, parse_srt, read_lyrics, read_plain_lyrics
from musicvid.lyrics.lrc import parse_lrc, reads_as_english, sung_seconds
from musicvid.lyrics.transcript import Line, Transcript, fit_to_duration
from musicvid.storyboard.board import load_storyboard
from musicvid.storyboard.scenes import scenes_from_lines
from tests.helpers import make_tone, run

CJK = "[ti:测试]\n[00:05.00]我的心是暴风雨中的一座灯塔\n[00:10.50]你的声音是一条金色的河流\n[00:14.00]城市在纸月亮下沉睡\n"


def lines_of(tmp_path, text: str, name: str = "song.lrc"):
    (path := tmp_path / name).write_text(text, encoding="utf-8")
    return check_lyrics_file(path)


def test_a_line_of_an_unspaced_script_lasts_as_long_as_its_syllables_take():
    # a Latin line's guess is as it was: a second and 0.4 s a word (the lyric benchmarks' rows rest on it)
    for latin in ["one", "My heart is a lighthouse in the storm", "Mi corazón es un faro", "word " * 100]:
        assert sung_seconds(latin) == min(8.0, 1.0 + 0.4 * len(latin.split()))
    assert sung_seconds("我的心是暴风雨中的一座灯塔") == pytest.approx(1.0 + 13 * 0.25)
    assert sung_seconds("사랑해 너를") == pytest.approx(1.0 + 5 * 0.25)  # Hangul: its syllables, not its words
    assert sung_seconds("君が好き love") == pytest.approx(1.0 + 4 * 0.25 + 0.4)
    lines = parse_lrc(CJK, 41.0)
    assert [(line.start, line.end) for line in lines[:2]] == [(5.0, 5.0 + 1.0 + 13 * 0.25), (10.5, 14.0)]
    scenes = scenes_from_lines(lines, 41.0)
    assert [s.kind for s in scenes if 5.0 <= s.start < 14.0] == ["lyric", "lyric"]  # no break inside a sung line


def test_enhanced_lrc_tags_inside_a_word_time_its_syllables():
    text = (
        "[00:05.00]<00:05.00>Hel<00:05.30>lo <00:05.60>beau<00:05.90>ti<00:06.10>ful <00:06.50>world<00:07.20>\n"
        "[00:10.00]<00:10.00>我<00:10.40>爱<00:10.80>你<00:11.20>\n"
        "[00:20.00]<00:20.00>Hel<00:20.50>lo again\n"  # the last word, untimed at its end: the line's end ends it
    )
    lines = parse_lrc(text, 41.0)
    assert [line.text for line in lines] == ["Hello beautiful world", "我爱你", "Hello again"]
    words = [[(round(w.start, 2), round(w.end, 2), w.text) for w in line.words] for line in lines]
    assert words[0] == [(5.0, 5.6, "Hello"), (5.6, 6.5, "beautiful"), (6.5, 7.2, "world")]
    # a character of a script written without spaces is a word of its own, timed as the file times it
    assert words[1] == [(10.0, 10.4, "我"), (10.4, 10.8, "爱"), (10.8, 11.2, "你")] and lines[0].end == 7.2
    assert [w for _, _, w in words[2]] == ["Hello", "again"] and words[2][0][0] == 20.0
    assert words[2][1][1] == round(lines[2].end, 2)


@pytest.mark.parametrize(
    "line, said",
    [
        ("[00:01.00]<00:01.00>one <00:03.00>two <00:02.00>three", "its word time <00:02.00> is before the one before"),
        ("[00:01.00]<00:02.00>a<00:02.00>b<00:01.50>c <00:03.00>", "its word time <00:01.50> is before the one"),
        ("[00:00.50]<00:00.20>early <00:01.50>mid", "line 1: its first word's time is before the line's"),
    ],
)
def test_enhanced_lrc_word_times_that_run_backwards_are_refused_by_their_line(line, said):
    with pytest.raises(UserError, match=said):
        parse_lrc(line + "\n[00:06.00]end line\n", 41.0)


def test_enhanced_lrc_word_times_past_the_line_are_said_and_the_line_kept(caplog):
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lines = parse_lrc("[00:01.00]<00:01.00>one <00:09.00>two <00:10.00>\n[00:06.00]end line\n", 41.0)
    assert [(x.start, x.end, x.text, x.words) for x in lines[:1]] == [(1.0, 6.0, "one two", [])]
    assert "1 line with word times past the line's end" in caplog.text


@pytest.mark.parametrize("marker", ["", "♪", "[Chorus]", " [Verse 2]", "..."])
def test_an_lrc_end_marker_ends_the_line_before_where_the_file_says(marker):
    lines = parse_lrc(f"[00:05.00]Ooooh baby\n[00:13.00]{marker}\n[00:20.00]next line comes\n", 41.0)
    assert [(line.start, line.end, line.text) for line in lines] == [
        (5.0, 13.0, "Ooooh baby"),
        (20.0, 20.0 + sung_seconds("next line comes"), "next line comes"),
    ]


def test_a_timed_section_name_is_not_sung():
    text = "[00:05.00]first line sung\n[00:09.00][Chorus]\n[00:09.50]chorus line one\n[00:14.00] [Verse 2]\n"
    lines = parse_lrc(text + "[00:15.00]the second verse\n", 41.0)
    assert [line.text for line in lines] == ["first line sung", "chorus line one", "the second verse"]
    assert lines[1].end == 14.0


def test_lines_at_one_time_are_a_sung_line_and_its_translation(tmp_path, caplog):
    text = (
        "[00:05.00]我的心是灯塔\n[00:05.00]My heart is a lighthouse\n"  # the translation ViPE can read
        "[00:09.00]original line\n[00:09.00]译文\n"  # no line reads as English: both sung, nothing dropped
        "[00:12.00]la la la\n[00:12.00]la la la\n"  # the same line again (merge tools write it twice)
    )
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lines = lines_of(tmp_path, text).lines
    assert [(line.start, line.text, line.text_en) for line in lines] == [
        (5.0, "我的心是灯塔", "My heart is a lighthouse"),
        (9.0, "original line / 译文", None),
        (12.0, "la la la", None),
    ]
    assert lines[0].end == 5.0 + sung_seconds("我的心是灯塔") and lines[1].end > 9.0  # not ended by its twin
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "1 line at the time of another taken as its translation (ViPE reads the English); 1 line at the time of "
        "another sung "
        "with it (one caption, ' / ' between); 1 line the same as another at its time: one line"
    ]


@pytest.mark.parametrize(
    ("line", "english"),
    [
        ("My heart is a lighthouse", True),
        ("I can hear your voice", True),
        ("Stars shining in the night sky", True),
        ("Into the night", True),
        ("Mi corazón es un faro", False),
        ("yozora ni kagayaku hoshi", False),
        ("kimi no koe ga kikoeru", False),
        ("wǒ ài nǐ", False),
        ("Tu voz es un río de oro", False),
        ("Je t'aime mon amour", False),
    ],
)
def test_a_line_reads_as_english_by_its_common_words(line, english):
    assert reads_as_english(line) is english


def test_a_bilingual_lrc_gives_its_english_whatever_its_script_and_order():
    es = "[la:es]\n[00:05.00]Mi corazón es un faro\n[00:05.00]My heart is a lighthouse\n"
    assert [(x.text, x.text_en) for x in parse_lrc(es, 41.0, language="es")] == [
        ("Mi corazón es un faro", "My heart is a lighthouse")
    ]
    ja = (
        "[00:05.00]夜空に輝く星\n[00:05.00]yozora ni kagayaku hoshi\n[00:05.00]Stars shining in the night sky\n"
        "[00:10.00]我爱你\n[00:10.00]wǒ ài nǐ\n"  # a romanization, no English: sung with its line, never English
        "[00:15.123]Into the night\n[00:15.12]走进黑夜\n"  # a few ms apart, translation first: one time
    )
    assert [(x.start, x.text, x.text_en) for x in parse_lrc(ja, 41.0, language="ja")] == [
        (5.0, "夜空に輝く星 / yozora ni kagayaku hoshi", "Stars shining in the night sky"),
        (10.0, "我爱你 / wǒ ài nǐ", None),
        (15.12, "走进黑夜", "Into the night"),
    ]


def test_an_english_songs_lines_beside_their_translation_are_sung_where_the_song_is_said_to_be_english(tmp_path):
    """NetEase's tools write a Western song's lines beside their Chinese translation: said to be English (the file's
    [la:en], or --language en over it), the English lines are sung and the translation is not; said nothing, a line
    beside one not in Latin letters is taken as the translation (a Chinese song's, as most such files are)."""
    pairs = "[00:00.50]I will always love you\n[00:00.50]我会永远爱你\n[00:04.00]And I hope life treats you kind\n"
    pairs += "[00:04.00]我希望生活善待你\n"
    sung = [("I will always love you", None), ("And I hope life treats you kind", None)]
    assert [(x.text, x.text_en) for x in lines_of(tmp_path, "[la:en]\n" + pairs).lines] == sung
    assert [(x.text, x.text_en) for x in check_lyrics_file(tmp_path / "song.lrc", "en").lines] == sung
    assert lines_of(tmp_path, pairs).lines[0].text == "我会永远爱你"  # (said nothing)
    assert check_lyrics_file(tmp_path / "song.lrc", "en").lines[0].text == "I will always love you"
    assert check_lyrics_file(tmp_path / "song.lrc", "zh").lines[0].text_en == "I will always love you"


def test_a_duet_of_one_language_sings_both_singers_lines():
    text = "[00:05.00]M: I will stay with you tonight\n[00:05.00]F: And I will never let you go\n"
    text += "[00:10.00]<00:10.00>M: Hold <00:10.50>me\n[00:10.00]F: Hold me\n[00:15.00]M: Hold me\n[00:15.00]F: too\n"
    lines = parse_lrc(text, 41.0)
    assert [(x.text, x.text_en) for x in lines] == [
        ("I will stay with you tonight / And I will never let you go", None),
        ("Hold me", None),
        ("Hold me / too", None),
    ]
    assert [w.text for w in lines[1].words] == ["Hold", "me"] and not lines[2].words


def test_an_end_marker_holds_its_line_only_as_long_as_a_note_is_held():
    lines = parse_lrc("[00:05.00]first\n[00:20.00]last line\n[00:40.50]\n[00:42.00]held\n[00:50.00]\n", 60.0)
    assert [(x.start, x.end) for x in lines] == [(5.0, 5.0 + sung_seconds("first")), (20.0, 21.8), (42.0, 50.0)]


def test_an_enhanced_lines_own_end_is_its_end_and_a_break_follows():
    text = "[00:05.00]<00:05.00>I <00:05.20>can <00:05.40>not <00:05.60>stop <00:05.80>now<00:07.00>\n[00:11.50]next\n"
    lines = parse_lrc(text, 41.0)
    assert lines[0].end == 7.0
    assert [(s.kind, s.start) for s in scenes_from_lines(lines, 41.0) if 5.0 <= s.start < 11.5][1] == ("break", 7.0)


@pytest.mark.parametrize(
    "name, text, notice",
    [
        ("a.lrc", "[00:00.00](Instrumental)\n", "(Instrumental)"),
        (
            "b.lrc",
            "[00:00.000] 作曲 : 久石让\n[00:01.00]此歌曲为没有填词的纯音乐，请您欣赏\n",
            "此歌曲为没有填词的纯音乐，请您欣赏",
        ),
        ("c.txt", "[Intro]\nInstrumental\n", "Instrumental"),
        (
            "d.srt",
            "1\n00:00:00,000 --> 00:00:05,000\n[Music]\n\n2\n00:00:05,000 --> 00:00:08,000\n[Music]\n",
            "[Music]",
        ),
    ],
)
def test_lyrics_that_say_the_song_has_no_words_make_an_instrumentals_video(tmp_path, caplog, name, text, notice):
    """An instrumental song is no error: lyrics sites and players write it so, and nothing in them is sung."""
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lyrics = lines_of(tmp_path, text, name)
    assert lyrics.timed and lyrics.lines == () and read_lyrics(lyrics, 8.0).lines == []
    assert f"says the song has no words ({notice!r}): the video has no lyric scene" in caplog.text
    with pytest.raises(UserError, match="has no lines of lyrics$"):  # (no line sung, and none says why)
        lines_of(tmp_path, text.replace(notice, "(Chorus)"), name)
    lines = parse_lrc("[00:01.00]Instrumental\n[00:04.00]words sung at last\n", 8.0)
    assert [line.text for line in lines] == ["words sung at last"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="musicvid"):  # (a title's tag is not the line that says so)
        lines_of(tmp_path, "[ti:纯音乐]\n" * name.endswith(".lrc") + text, name)
    assert f"({notice!r})" in caplog.text


def test_a_transcript_of_no_line_is_an_instrumentals_lyrics(capsys, tmp_path, caplog):
    """The transcript Whisper makes of an instrumental, given back as --lyrics (round 12: refused as no lyrics)."""
    Transcript([], "en", "faster-whisper:base", "ab" * 32).save(tmp_path / "transcript.json")
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lyrics = check_lyrics_file(tmp_path / "transcript.json")
    assert lyrics.timed and lyrics.lines == () and read_lyrics(lyrics, 8.0).lines == []
    assert "transcript.json holds no line: the song has no words, and the video no lyric scene" in caplog.text
    with pytest.raises(UserError, match="has no lines of lyrics$"):  # (an LRC of no line says nothing of the song)
        lines_of(tmp_path, "[ti:Song]\n", "song.lrc")
    song = make_tone(tmp_path / "song.wav", 3)
    argv = [
        "storyboard",
        song,
        "--models",
        "tiny",
        "--lyrics",
        tmp_path / "transcript.json",
        "--workdir",
        tmp_path / "w",
    ]
    assert run(capsys, *argv)[0] == 0
    assert {s.kind for s in load_storyboard(tmp_path / "w" / "storyboard.json").scenes} == {"intro"}


def test_credits_and_directions_to_the_band_are_not_sung(tmp_path, caplog):
    text = (
        "[00:00.000] 作词 : 周杰伦\n[00:01.000] 作曲：周杰伦\n[00:01.500]Produced by: Someone\n"
        "[00:05.00]窗外的麻雀\n[00:08.00](Instrumental)\n[00:20.00]作词 : 我\n[00:25.00]*guitar solo*\n"
    )
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lines = parse_lrc(text, 41.0)
    assert [(x.start, x.end, x.text) for x in lines] == [(5.0, 8.0, "窗外的麻雀"), (20.0, 25.0, "作词 : 我")]
    assert "3 credit lines ('作词 : 周杰伦') before the first sung line not sung" in caplog.text
    plain = "First line\n(Instrumental)\n(Guitar solo)\n*Repeat chorus*\n(all the way)\n"
    assert read_plain_lyrics(lines_of(tmp_path, plain, "song.txt")) == ["First line", "(all the way)"]


def test_an_srt_duet_is_one_caption():
    srt = "1\n00:00:05,000 --> 00:00:09,000\nHe: I stay\n\n2\n00:00:05,000 --> 00:00:09,000\nShe: I go\n"
    assert [(x.start, x.end, x.text) for x in parse_srt(srt, "d.srt")] == [(5.0, 9.0, "He: I stay / She: I go")]
    # one singer holds on: still one caption, in the file's order (its second cue ends first), until the later end
    held = "1\n00:00:01,000 --> 00:00:03,000\nfirst שלום\n\n2\n00:00:01,000 --> 00:00:02,000\nsecond\n"
    assert [(x.start, x.end, x.text) for x in parse_srt(held, "d.srt")] == [(1.0, 3.0, "first שלום / second")]


def test_lines_of_one_start_share_a_scene_in_their_order():
    lines = [Line(3.0, 5.0, "first"), Line(3.0, 4.0, "segundo", "second"), Line(6.0, 8.0, "third")]
    scenes = scenes_from_lines(fit_to_duration(lines, 9.0), 9.0)
    assert [(s.start, s.end, s.text, s.text_en) for s in scenes if s.kind == "lyric"] == [
        (3.0, 6.0, "first / segundo", "first / second"),
        (6.0, 9.0, "third", None),
    ]


def test_a_walaoke_singer_is_not_sung():
    lines = parse_lrc("[00:05.00]M: I sing first\n[00:08.00]F:then I sing\n[00:11.00]<00:11.00>D: together\n", 41.0)
    assert [line.text for line in lines] == ["I sing first", "then I sing", "together"]
    assert [w.text for w in lines[2].words] == ["together"]


GENIUS = """3 ContributorsLighthouse Lyrics
[Verse 1: The Tiny Models]
My heart is a lighthouse in the storm
You might also like me

[Chorus]
The city sleeps beneath a paper moon (x2)
(x2)
See The Tiny Models LiveGet tickets as low as $45You might also like
[Verse 2]
Time is a feather drifting on the sea
I will carry your light back home5Embed
"""


def test_what_a_lyrics_site_adds_is_left_out_and_said(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lyrics = lines_of(tmp_path, GENIUS, "genius.txt")
    assert read_plain_lyrics(lyrics) == [
        "My heart is a lighthouse in the storm",
        "You might also like me",
        *["The city sleeps beneath a paper moon"] * 4,  # (the line twice, and its stanza, that line, twice)
        "Time is a feather drifting on the sea",
        "I will carry your light back home",
    ]
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "4 lines held what a lyrics site adds (its 'Contributors…Lyrics' heading, 'You might also like', 'Embed', a "
        "repeat mark such as '(x2)'): left out",
        "3 lines sung again where it marks a repeat ('[Chorus x2]', '(Repeat chorus)', a heading alone, '(x3)' after a "
        "line, '(x2)' under a stanza): each gets its caption",
    ]
    ordinary = "Lyrics of my life\nEmbed me in your arms\nI was 2x as strong\nthe last word is Embed\n"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        assert read_plain_lyrics(lines_of(tmp_path, ordinary, "plain.txt")) == ordinary.splitlines()
    assert not caplog.records


def test_genius_as_spotdl_delivers_it_and_lyrics_that_only_look_like_it(tmp_path):
    glued = (
        "47 ContributorsTranslationsEspañolDeutschLighthouse Lyrics[Verse 1]\nMy heart is a lighthouse\n"
        "You might also like\n[Chorus]\nI will carry your light home1Embed\n"
    )
    assert read_plain_lyrics(lines_of(tmp_path, glued, "g.txt")) == [
        "My heart is a lighthouse",
        "I will carry your light home",
    ]
    teaser = '3 ContributorsLighthouse Lyrics\n"Lighthouse" is about a sailor… Read More \n[Verse 1]\nMy heart\n'
    assert read_plain_lyrics(lines_of(tmp_path, teaser, "t.txt")) == ["My heart"]
    plain = "You might also like\nthe way I move\n"  # no sign of Genius (heading, footer): a lyric
    assert read_plain_lyrics(lines_of(tmp_path, plain, "p.txt")) == plain.splitlines()
    year = "I was born in the year\nWe were born in 1985Embed\n"  # a count has at most 3 digits: the year is sung
    assert read_plain_lyrics(lines_of(tmp_path, year, "y.txt"))[-1] == "We were born in 1985"


def test_an_lrc_names_its_language(tmp_path, caplog):
    assert lines_of(tmp_path, "[la:ES]\n[00:05.00]Mi corazón es un faro\n").language == "es"
    assert lines_of(tmp_path, "[language: zh-CN]\n[00:05.00]我的心\n").language == "zh"
    assert lines_of(tmp_path, "[lang:]\n[00:05.00]My heart\n").language == "en"
    assert lines_of(tmp_path, "[la:Spanish]\n[00:05.00]Mi corazón\n").language == "es"  # Whisper's name of it
    assert lines_of(tmp_path, "[la:jp]\n[00:05.00]君が好き\n").language == "ja"  # the country's code, mistaken
    with caplog.at_level(logging.WARNING, logger="musicvid"):  # a tag of no language: read as saying none, said
        assert lines_of(tmp_path, "[ti:Faro]\n[la:xx]\n[00:05.00]Mi corazón\n").language == "en"
    assert "song.lrc line 2: [la:xx] names no language Whisper knows" in caplog.text


def test_files_are_read_or_refused_as_what_they_are(tmp_path, caplog):
    with pytest.raises(UserError, match="webvtt.srt is WebVTT, not SRT: convert it"):
        lines_of(tmp_path, "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nhello\n", "webvtt.srt")
    assert [line.start for line in lines_of(tmp_path, "[ar:]\n[offset:]\n[00:05.00]hello\n").lines] == [5.0]
    for offset, start in (("+ 500", 4.5), ("- 500", 5.5)):  # a sign parted from its number, as some editors write it
        assert [line.start for line in lines_of(tmp_path, f"[offset:{offset}]\n[00:05.00]hello\n").lines] == [start]
    srt = "1\n00:00:01,000 --> 00:00:03,000\nRock &amp; roll &lt;3 it&#39;s\n"
    assert [line.text for line in lines_of(tmp_path, srt, "song.srt").lines] == ["Rock & roll <3 it's"]
    with pytest.raises(UserError, match=r"line 3 \(still first\) has no time"):  # as an editor numbers its lines
        lines_of(tmp_path, "[00:01.00]first\u2028still first\n[00:02.00]second\nstill first\n")
    nested = "1\n00:00:05,000 --> 00:00:08,000\nfirst\n\n2\n00:00:06,000 --> 00:00:07,000\ninside first\n"
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lines_of(tmp_path, nested, "nested.srt")
    lines = [{"start": 5.0, "end": 8.0, "text": "first"}, {"start": 6.0, "end": 7.0, "text": "inside first"}]
    with caplog.at_level(logging.WARNING, logger="musicvid"):  # a transcript edited by hand, as an SRT
        lines_of(tmp_path, json.dumps({"lines": lines}), "nested.json")
        duet = [{"start": 5.0, "end": 8.0, "text": "duet a"}, {"start": 5.0, "end": 9.0, "text": "duet b"}]
        lines_of(tmp_path, json.dumps({"lines": duet}), "duet.json")  # (one caption: no word of one ending another)
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "1 cue starts before the cue before ends: a caption ends where the next starts",
        "1 line starts before the line before ends: a caption ends where the next starts",
    ]


def test_a_backing_vocal_beside_an_english_line_is_sung_with_it_never_taken_for_a_translation(tmp_path):
    text = "[la:en]\n[00:01.00]I will always love you\n[00:01.00](Ooh ooh, yeah yeah)\n[00:01.00]我会永远爱你\n"
    text += (
        "[00:05.00]And I hope life treats you kind\n[00:05.00]Na na na, whoa\n[00:09.00]Hold me in your arms tonight\n"
    )
    text += "[00:09.00]Abrázame en tus brazos esta noche\n"  # (a Latin-script translation is one still)
    assert [(x.text, x.text_en) for x in lines_of(tmp_path, text).lines] == [
        ("I will always love you / (Ooh ooh, yeah yeah)", None),
        ("And I hope life treats you kind / Na na na, whoa", None),
        ("Hold me in your arms tonight", None),
    ]
    bracketed = "[la:en]\n[00:01.00]I will always love you\n[00:01.00](我会永远爱你)\n"  # (a translation still)
    assert [(x.text, x.text_en) for x in lines_of(tmp_path, bracketed).lines] == [("I will always love you", None)]
    spanish = "[la:es]\n[00:01.00]Te quiero\n[00:01.00](oh oh)\n[00:01.00]I love you\n"
    assert [(x.text, x.text_en) for x in lines_of(tmp_path, spanish).lines] == [("Te quiero / (oh oh)", "I love you")]


def test_cues_nobody_sings_in_an_srt_are_left_out_and_language_reaches_an_srt_and_a_transcript(tmp_path):
    cues = ["[Music]", "I will always love you", "(Instrumental)", "[Chorus]", "And I hope life treats you kind"]
    srt = "\n".join(
        f"{n}\n00:00:{2 * n:02d},000 --> 00:00:{2 * n + 1:02d},500\n{cue}\n" for n, cue in enumerate(cues, 1)
    )
    known = lines_of(tmp_path, srt, "song.srt")
    assert [(x.start, x.text) for x in known.lines] == [(4.0, "I will always love you"), (10.0, cues[-1])]
    assert known.language == "en" and check_lyrics_file(tmp_path / "song.srt", "es").language == "es"
    only = lines_of(tmp_path, "1\n00:00:01,000 --> 00:00:09,000\n[Music]\n", "song.srt")
    assert only.lines == ()  # (an instrumental's, as an LRC's or a plain file's "[Music]" alone)
    board = '{"language": "fr", "lines": [{"start": 1.0, "end": 2.0, "text": "Bonjour"}]}'
    assert lines_of(tmp_path, board, "transcript.json").language == "fr"
    assert check_lyrics_file(tmp_path / "transcript.json", "de").language == "de"
