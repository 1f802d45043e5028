"""A person's files read as their editors write them: every number in them (a lyrics file's times, a storyboard's or a
transcript's numbers) bounded before it is read, every field of a storyboard of its type, and a UTF-8 byte-order mark
read wherever people's editors write one. Whatever is refused is one sentence, before any work."""

import json
import logging

import pytest

from musicvid.batch.command import read_playlist
from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS, parse_json
from musicvid.lyrics.known import check_lyrics_file, read_lyrics, read_plain_lyrics
from musicvid.lyrics.lrc import parse_lrc
from musicvid.lyrics.transcript import Transcript
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard, parse_storyboard
from tests.helpers import TINY_QUIET, make_tone, run, timed_lyrics, valid_board

# Numbers no file of ours holds: too long to read (a few dozen digits, hundreds, thousands: Python refuses 4,300),
# written in range but past 2^53, past a float (1e999), and JSON's constants that are no numbers.
LONG = {"41 digits": "7" * 41, "400 digits": "12" * 200, "5,000 digits": "9" * 5_000}
PAST = {"1e999": "1e999", "-1e400": "-1e400"}


def lyrics_with(number: str) -> dict[str, str]:
    """Lyrics files of every timed kind, `number` in one of their times."""
    return {
        "minutes.lrc": f"[00:01.00]first light\n[{number}:02.00]second light\n",
        "seconds.lrc": f"[ti:A song]\n[00:{number}]a line\n",
        "word.lrc": f"[00:01.00]every <00:{number}>word\n",
        "offset.lrc": f"[offset:{number}]\n[00:01.00]a line\n",
        "hours.srt": f"1\n{number}:00:01,000 --> 00:00:02,000\nhello\n",
        "fraction.srt": f"1\n00:00:01,{number} --> 00:00:02,000\nhello\n",
        "start.json": f'{{"lines": [{{"start": {number}, "end": 2, "text": "a"}}]}}',
        "probability.json": f'{{"lines": [{{"start": 1, "end": 2, "text": "a", "words": [{{"start": 1, "end": 2, '
        f'"text": "a", "probability": {number}}}]}}]}}',
    }


@pytest.mark.parametrize("number", [*LONG.values(), *PAST.values()], ids=[*LONG, *PAST])
def test_a_number_past_any_a_lyrics_file_holds_is_one_sentence_naming_where(tmp_path, number):
    for name, text in lyrics_with(number).items():
        (path := tmp_path / name).write_text(text)
        with pytest.raises(UserError) as refused:
            check_lyrics_file(path)
        said = str(refused.value)
        assert said.startswith(f"lyrics file {path}") and ("line" in said or "cue 1" in said), said
        assert len(said) < 300 and "\n" not in said, said  # the number is not written out whole


@pytest.mark.parametrize("change", ["scenes.1.seed", "scenes.0.start", "audio.duration", "settings.seed", "version"])
@pytest.mark.parametrize("number", [LONG["400 digits"], LONG["5,000 digits"], PAST["1e999"], "NaN", "-Infinity"])
def test_a_number_past_any_a_storyboard_holds_is_one_sentence(tmp_path, change, number):
    board, marker = valid_board(), 1234.5678
    *parents, key = change.split(".")
    place = board
    for part in parents:
        place = place[int(part)] if part.isdigit() else place[part]
    place[key] = marker
    (path := tmp_path / "storyboard.json").write_text(json.dumps(board).replace(str(marker), number))
    with pytest.raises(UserError, match=rf"^storyboard {path} line 1: .*(not a number|longer than|out of range)"):
        load_storyboard(path)


def test_a_long_number_in_a_storyboard_is_refused_by_render_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 3)
    board = valid_board() | {"audio": {"path": str(song), "sha256": "", "duration": 3.0}}
    board["scenes"] = [dict(board["scenes"][0], end=3.0, seed=111)]
    text = json.dumps(board, indent=1).replace("111", "3" * 400)
    (path := tmp_path / "board.json").write_text(text)
    code, out, err = run(capsys, "render", song, *TINY_QUIET, "--storyboard", path, "--workdir", tmp_path / "w")
    line = text[: text.index("3" * 400)].count("\n") + 1
    assert code == 2 and err.count("\n") == 1 and f"storyboard {path} line {line}: the number 333333333333…" in err
    assert "(400 characters)" in err and not (tmp_path / "w").exists()


@pytest.mark.parametrize("lyrics", ["[00:01.00]one\n[00:0{}.00]two\n", "1\n00:00:0{},000 --> 00:00:02,000\nhi\n"])
def test_a_long_time_in_a_lyrics_file_is_refused_by_render_before_any_work(capsys, tmp_path, lyrics):
    song = make_tone(tmp_path / "song.wav", 3)
    path = tmp_path / ("words.lrc" if lyrics.startswith("[") else "words.srt")
    path.write_text(lyrics.format("4" * 300))
    code, out, err = run(capsys, "render", song, *TINY_QUIET, "--lyrics", path, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "is longer than any this file holds" in err
    assert not (tmp_path / "w").exists() and not list(tmp_path.glob("*.mp4"))


def test_numbers_as_written_are_read_as_before():
    read = parse_json('{"a": [0, -3, 2.5, 1e3, 9007199254740992, -0.0, 1.0000000000000002]}', "it")
    assert read == {"a": [0, -3, 2.5, 1000.0, 2**53, 0.0, 1.0000000000000002]}
    assert [type(x) for x in read["a"][:3]] == [int, int, float]
    with pytest.raises(UserError, match=r"^it line 2: 9007199254740993 is out of range \(from -9,007,199,254,740,992"):
        parse_json('{"seed":\n 9007199254740993}', "it")  # past 2^53: no float holds it exactly


def test_a_lone_surrogate_in_a_storyboard_or_transcript_is_refused_before_any_work(capsys, tmp_path):
    """JSON may write half of a UTF-16 pair ("\\ud800"), which is no character: it would end a render at its first
    write or in ViPE's tokenizer, after the work."""
    assert parse_json('{"title": "caf\\u00e9 \\ud83c\\udfb5"}', "it") == {"title": "caf\u00e9 \U0001f3b5"}
    board = valid_board()
    board["scenes"][1]["lyric"] = "half \ud800 a pair"
    (path := tmp_path / "storyboard.json").write_text(json.dumps(board))
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, *TINY_QUIET, "--storyboard", path, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "holds '\\ud800', half of a UTF-16 pair" in err, err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("field", ["title", "artist", "language"])
@pytest.mark.parametrize(
    "value, written", [({"name": "x"}, '{"name": "x"}'), (["x"], '["x"]'), (5, "5"), (True, "true")]
)
def test_a_storyboards_title_artist_and_language_must_be_text(tmp_path, field, value, written):
    (path := tmp_path / "storyboard.json").write_text(json.dumps(valid_board() | {field: value}))
    with pytest.raises(UserError) as refused:
        load_storyboard(path)
    assert (
        str(refused.value) == f"storyboard {path}: {field} must be a string, got {written}"
    )  # (as the file writes it)


def test_a_storyboards_text_fields_are_bounded_and_may_be_left_out(tmp_path):
    path = tmp_path / "storyboard.json"
    path.write_text(json.dumps(valid_board() | {"title": "t" * (MAX_TEXT_CHARS + 1)}))
    with pytest.raises(UserError, match=f"title must be at most {MAX_TEXT_CHARS:,} characters, got 1,001"):
        load_storyboard(path)
    board = valid_board() | {"title": None, "language": None}
    del board["artist"]
    path.write_text(json.dumps(board))
    read = load_storyboard(path)
    assert (read.title, read.artist, read.language) == ("", "", "en")
    board["scenes"][1]["prompt"] = "p" * 100_001
    path.write_text(json.dumps(board))
    with pytest.raises(UserError, match=r"scenes\[1\].prompt must be at most 100,000 characters"):
        load_storyboard(path)


def test_a_byte_order_mark_is_read_where_editors_write_one(tmp_path):
    """Notepad before 2019 and PowerShell 5 begin a UTF-8 file with EF BB BF."""
    bom = "\ufeff"
    (board := tmp_path / "storyboard.json").write_text(bom + json.dumps(valid_board() | {"title": "Été"}))
    assert load_storyboard(board).title == "Été"
    transcript = {"lines": [{"start": 1.0, "end": 2.0, "text": "ça va"}], "language": "fr"}
    (saved := tmp_path / "transcript.json").write_text(bom + json.dumps(transcript))
    assert Transcript.load(saved).lines[0].text == "ça va"
    assert timed_lyrics(saved, 10.0).language == "fr"  # a transcript given as --lyrics
    for name, text in {"a.lrc": "[00:01.00]ça va\n", "a.srt": "1\n00:00:01,000 --> 00:00:02,000\nça va\n"}.items():
        (tmp_path / name).write_text(bom + text)
        assert timed_lyrics(tmp_path / name, 10.0).lines[0].text == "ça va"
    (playlist := tmp_path / "songs.csv").write_text(bom + "path,title\r\na.mp3,Été\r\n")
    assert read_playlist(playlist)[0].title == "Été"
    for name, text in {"b.lrc": "[00:01.00]ça va\n", "b.srt": "1\n00:00:01,000 --> 00:00:02,000\nça va\n"}.items():
        (tmp_path / name).write_bytes(text.encode("utf-16"))  # UTF-16 after its mark, as Notepad's "Unicode"
        assert timed_lyrics(tmp_path / name, 10.0).lines[0].text == "ça va"
    board.write_bytes(json.dumps(valid_board()).encode("latin-1") + b"\xe9")  # another encoding: refused in a sentence
    with pytest.raises(UserError, match=f"^storyboard {board} is not UTF-8 text$"):
        load_storyboard(board)


PASTED = """[Verse 1: Sam]
the city lights are fading out (yeah yeah)

[Chorus x2 - Sam]
hold on to me tonight

we will never let it go
[x2]

Pre-Chorus
Verse 2:
your shadow dances (x3)
on the wall [2x]
(Repeat chorus)
(Instrumental)
the chorus of the birds
Refrain x2
Couplet 2
(Instrumental)
Chorus:
"""


def test_a_chorus_written_once_is_sung_each_time_the_text_repeats_it_and_headings_are_not_sung(tmp_path, caplog):
    (path := tmp_path / "pasted.txt").write_text(PASTED)
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        lines = read_plain_lyrics(check_lyrics_file(path))
    chorus = "hold on to me tonight"  # (its stanza ends at the blank line; a repeat sings it as written: once)
    verse = ["your shadow dances"] * 3 + ["on the wall"] * 2
    birds = "the chorus of the birds"  # (sung, once: no heading, and "(Instrumental)" names no section)
    first = ["the city lights are fading out (yeah yeah)", chorus, chorus, *["we will never let it go"] * 2]
    assert lines == [*first, *verse, chorus, birds, chorus]  # ("Refrain x2": no refrain was written)
    assert "7 lines sung again where it marks a repeat" in caplog.text
    said = "'refrain' sung again, yet no lines are written under that name before: nothing sung there (write them out"
    assert said in caplog.text  # ("Couplet 2" alone: a verse's heading; no lines under it may be an instrumental part)
    timed = parse_lrc("[00:05.00]first line\n[00:12.00]Chorus:\n[00:20.00]Verse 2\n[00:22.00]a line\n", 41.0)
    assert [(line.start, line.end, line.text) for line in timed] == [(5.0, 12.0, "first line"), (22.0, 23.8, "a line")]


def test_repeats_of_repeats_past_any_songs_lines_are_refused_at_once(tmp_path, capsys):
    """A 7 KB text of nested marks asks for 350 million lines: refused by their count, none of them made."""
    bomb = "[Chorus x99]\n" + "la (x99)\n" * 60 + "\n" + "Chorus x99\n" * 600
    (lyrics := tmp_path / "bomb.txt").write_text(bomb)
    code, _, err = run(capsys, "storyboard", make_tone(tmp_path / "song.wav", 1), *TINY_QUIET, "--lyrics", lyrics)
    said = f"musicvid: lyrics file {lyrics} sings 353,424,060 lines once the repeats it marks are counted, more than "
    assert code == 2 and err == said + "2,000: is it one song's lyrics?\n", err


def test_unseen_marks_make_no_part_of_a_line_and_a_numbered_chorus_is_sung_again_by_a_heading_alone(tmp_path):
    # a zero-width space or a word joiner, as text copied from a web page carries them, is no word of a line
    (pasted := tmp_path / "pasted.txt").write_text("\ufeffsing\u200b\n[Chorus]\u200b\nla la\n\n\u2060[Chorus]\n")
    assert read_plain_lyrics(check_lyrics_file(pasted)) == ["sing", "la la", "la la"]
    # and no part of a timed line, nor is a bidi override, which shows a line backwards (the marks of direction stay)
    (timed := tmp_path / "pasted.lrc").write_text("[00:01.00]he\u200bllo \u202eworld\n[00:02.00]\u200fשלום\u2060\n")
    assert [line.text for line in read_lyrics(check_lyrics_file(timed), 5.0).lines] == ["hello world", "\u200fשלום"]
    line = {"start": 1, "end": 2, "text": "\u202eworld", "words": [{"start": 1.0, "end": 1.5, "text": "\u202eworld"}]}
    (transcript := tmp_path / "pasted.json").write_text(json.dumps({"lines": [line]}))
    [line] = read_lyrics(check_lyrics_file(transcript), 5.0).lines
    assert (line.text, line.words[0].text) == ("world", "world")
    said = [(0.5, 1.0, "one"), (1.0, 1.2, " \u200b"), (1.2, 2.0, " two")]  # a word of nothing shown is none
    line = {
        "start": 0.5,
        "end": 2,
        "text": "one \u200b two",
        "words": [dict(zip(("start", "end", "text"), w)) for w in said],
    }
    transcript.write_text(json.dumps({"lines": [line]}))
    [line] = read_lyrics(check_lyrics_file(transcript), 5.0).lines
    assert (line.text, [w.text for w in line.words]) == ("one two", ["one", " two"])
    # a numbered chorus written out is the one a heading alone, of its number or none, sings again
    (numbered := tmp_path / "numbered.txt").write_text("[Chorus 1]\nla la\n\n[Verse]\nsing\n\n[Chorus]\n[Chorus 2]\n")
    assert read_plain_lyrics(check_lyrics_file(numbered)) == ["la la", "sing", "la la", "la la"]


def test_a_heading_glued_to_its_first_line_is_a_heading_and_the_line_is_sung(tmp_path):
    """As people type lyrics: "Chorus: ..." on the chorus's first line. A bracket naming no section stays sung."""
    text = "Verse 1: I walk alone\n[Chorus x2] oh oh\n\nChorus: la la la\nthe night\n\n[Sam] hello\nBridge over water\n"
    (path := tmp_path / "typed.txt").write_text(text + "[Chorus]\n")
    chorus = ["la la la", "the night"]  # (written out again under its name: the heading alone sings it)
    sung = ["I walk alone", "oh oh", "oh oh", *chorus, "[Sam] hello", "Bridge over water", *chorus]
    assert read_plain_lyrics(check_lyrics_file(path)) == sung


def test_repeats_marked_in_words_or_alone_under_a_stanza_are_sung_and_numbered_headings_in_words_read(tmp_path):
    """Marks as people type them: a count in words or bare after a line, a mark alone under its stanza, a section
    numbered in words or named by its place. A word that only looks like a mark stays sung."""
    text = (
        "Verse One\nwake up the morning (twice)\nsun is rising 3 times (2 times)\nhey hey x3\nmorgen bis\n\n"
        "First Chorus:\nfly away\nfly so high\n(Repeat)\n\nVerse Two\nstill here\n\nbis\nsing it now\n2x\n\n"
        "Final Chorus\n"
    )
    (path := tmp_path / "typed.txt").write_text(text)
    chorus = ["fly away", "fly so high"]
    first = ["wake up the morning"] * 2 + ["sun is rising 3 times"] * 2 + ["hey hey"] * 3 + ["morgen bis"]
    sung = [*first, *chorus * 2, "still here", "bis", "sing it now", "bis", "sing it now", *chorus]
    assert read_plain_lyrics(check_lyrics_file(path)) == sung
    lines = parse_lrc("[00:05.00]fly away\n[00:07.00](x2)\n[00:09.00]Verse Two\n[00:10.00]still here\n", 41.0)
    assert [(line.start, line.end, line.text) for line in lines] == [(5.0, 7.0, "fly away"), (10.0, 11.8, "still here")]


def test_an_edited_storyboards_unseen_marks_are_no_part_of_its_scenes():  # (a bidi override turned a caption round)
    data = Storyboard(audio=SongAudio(2.0), scenes=[Scene(0, "lyric", 0.0, 2.0, "hi", "a sea", 0)]).to_json()
    data["scenes"][0]["text"] = "Your voice \u202eis a river\u200b made \u200fשלום"
    assert parse_storyboard(data, "sb.json").scenes[0].text == "Your voice is a river made \u200fשלום"


def test_a_transcripts_language_is_one_whisper_knows(tmp_path):  # (as --language's; "klingon" was taken as said)
    line = {"start": 5, "end": 8, "text": "hello"}
    for said, read in (("Spanish", "es"), ("klingon", None)):
        (path := tmp_path / "t.json").write_text(json.dumps({"lines": [line], "language": said}))
        if read:
            assert read_lyrics(check_lyrics_file(path), 41.0).language == read
            continue
        with pytest.raises(
            UserError, match="its language must be one of Whisper's language codes or names .*'klingon'"
        ):
            read_lyrics(check_lyrics_file(path), 41.0)


def test_a_storyboard_given_as_lyrics_is_named_as_one(tmp_path):  # (it was "lines must be a list of lines")
    # (a person's own key in a storyboard is kept as a note; a .txt holding JSON is the JSON it holds, not lyrics)
    for note, name in (({}, "storyboard.json"), ({"lines": "my note"}, "storyboard.json"), ({}, "board.txt")):
        (path := tmp_path / name).write_text("\n " + json.dumps(valid_board() | note, indent=1))
        with pytest.raises(UserError, match=rf"^lyrics file .*{name} is a storyboard, not a transcript"):
            check_lyrics_file(path)


def test_plain_text_that_opens_as_a_json_object_is_read_as_json_and_a_brace_as_a_lyric(tmp_path):
    line = {"start": 5, "end": 8, "text": "hello"}
    (path := tmp_path / "t.txt").write_text(json.dumps({"lines": [line], "language": "es"}))
    assert [(one.start, one.text) for one in check_lyrics_file(path).lines] == [(5, "hello")]
    (path := tmp_path / "broken.txt").write_text('{ "lines": [')
    with pytest.raises(UserError, match=r"broken.txt is not valid JSON"):
        check_lyrics_file(path)
    (path := tmp_path / "p.txt").write_text('{Chorus}\nthe sky is "burning"\n')
    assert not check_lyrics_file(path).timed
