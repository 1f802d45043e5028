"""Lyrics files as people save them (musicvid.lyrics.known): LRC or SRT saved as .txt, a transcript's JSON on one
line or with an overlong language, a lyric whose text holds line breaks. Each is read as what it is, or refused in
one sentence before any work; never read as something else."""

import json
import re

import pytest
from wcwidth import wcswidth

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.delivery import captions, subtitles
from musicvid.lyrics.known import MAX_LINE_WORDS, check_lyrics_file, fit_lyrics, parse_srt
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, parse_storyboard
from musicvid.storyboard.picks import KeyframePick
from musicvid.storyboard.table import scene_table, weakest_keyframes
from tests.helpers import make_tone, run, timed_lyrics

LRC = (
    "[ti:Lighthouse]\n[ar:The Tiny Models]\n"
    "[00:01.00]My heart is a lighthouse in the storm\n"
    "[00:04.50]Your voice is a river made of gold\n"
    "[00:08.00]The city sleeps beneath a paper moon\n"
)
SRT = "1\n00:00:01,000 --> 00:00:04,000\nMy heart is a lighthouse\n\n2\n00:00:05,000 --> 00:00:08,000\nYour voice\n"


def timed(path, text: str) -> list[tuple[float, float, str]]:
    path.write_text(text)
    lyrics = check_lyrics_file(path)
    assert lyrics.timed, path
    return [(line.start, line.end, line.text) for line in lyrics.lines]


@pytest.mark.parametrize("text, kind", [(LRC, ".lrc"), (SRT, ".srt"), ("\ufeff" + SRT.replace("\n", "\r\n"), ".srt")])
def test_times_saved_as_txt_are_read_as_the_file_they_are(tmp_path, text, kind):
    lines = timed(tmp_path / "lyrics.txt", text)
    assert lines == timed(tmp_path / f"lyrics{kind}", text)
    assert lines[0][0] == 1.0 and not any("[" in t or "-->" in t or t.isdigit() for _, _, t in lines)


def test_a_txt_without_times_stays_plain_lyrics(tmp_path):
    (path := tmp_path / "lyrics.txt").write_text("[Chorus]\nlove --> hate\n(00:05) we sing\nin [00:05.00] time\n")
    assert not check_lyrics_file(path).timed


def refused_render(capsys, tmp_path, name: str, text: str) -> str:
    """What `musicvid render` says, in one line with exit 2 and no work directory made, of lyrics `name` holding
    `text`."""
    song = make_tone(tmp_path / "song.wav", 2)
    (lyrics := tmp_path / name).write_text(text)
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "w").exists(), err
    return err


@pytest.mark.parametrize("name", ["blank.lrc", "blank.srt", "blank.txt", "blank.json"])
def test_a_lyrics_file_of_blank_lines_is_refused_as_an_empty_one_is(capsys, tmp_path, name):
    """An LRC of spaces and blank lines was read as an instrumental's lyrics, silently; a .txt said "no lines"."""
    assert f"lyrics file {tmp_path / name} holds only blank lines" in refused_render(capsys, tmp_path, name, " \n\t\n")


def test_lrc_saved_as_txt_is_refused_before_any_work_where_it_cannot_be_read(capsys, tmp_path):
    err = refused_render(capsys, tmp_path, "lyrics.txt", "[00:00.50]one\nan untimed line\n")
    assert "line 2 (an untimed line) has no time" in err


@pytest.mark.parametrize("field", ["language", "model"])
def test_a_transcripts_overlong_name_is_refused_with_the_lyrics_file(tmp_path, field):
    path = tmp_path / "longlang.json"
    path.write_text(json.dumps({field: "e" * 3000, "lines": [{"start": 1.0, "end": 4.0, "text": "My heart"}]}))
    with pytest.raises(UserError, match=f"^lyrics file {path}: {field} must be at most {MAX_TEXT_CHARS:,} characters"):
        check_lyrics_file(path)


def test_an_overlong_language_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    lyrics = tmp_path / "longlang.json"
    lyrics.write_text(json.dumps({"language": "e" * 3000, "lines": [{"start": 0.5, "end": 1.5, "text": "My heart"}]}))
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and f"lyrics file {lyrics}: language must be at most" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


def transcript(lines: int, words: int) -> dict:
    """A transcript's JSON with word times, `lines` lines of `words` words."""
    text = " ".join(["la"] * words)
    return {
        "language": "en",
        "lines": [
            {
                "start": i,
                "end": i + 0.9,
                "text": text,
                "words": [{"start": i, "end": i + 0.1, "text": "la", "probability": 0.9}] * words,
                "confidence": 0.9,
            }
            for i in range(lines)
        ],
    }


def test_a_transcript_is_read_whatever_its_whitespace(tmp_path):
    data = transcript(19, 6)  # on one line: some 1,200 of JSON's tokens
    assert len(json.dumps(data).split()) > MAX_LINE_WORDS
    minified = timed(tmp_path / "minified.json", json.dumps(data))
    assert minified == timed(tmp_path / "pretty.json", json.dumps(data, indent=1)) and len(minified) == 19


@pytest.mark.parametrize(
    "name, text",
    [
        (
            "long.json",
            json.dumps(
                [{"start": 0, "end": 1, "text": "one"}, {"start": 2, "end": 9, "text": "la " * (MAX_LINE_WORDS + 1)}]
            ),
        ),
        ("long.srt", "1\n00:00:02,000 --> 00:00:09,000\n" + "la la la la\n" * (MAX_LINE_WORDS // 4 + 1)),
        ("long.lrc", "[00:01.00]one\n[00:02.00]" + "la " * (MAX_LINE_WORDS + 1)),
    ],
)
def test_a_sung_line_of_too_many_words_is_refused_by_its_time(tmp_path, name, text):
    (path := tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=f"^lyrics file {path}: the line at 2 s has 1,00[14] words, more than the"):
        check_lyrics_file(path)


INJECTED = "My heart is a lighthouse\n\n7\n00:00:00,000 --> 00:00:09,000\ninjected"


def test_a_lyric_with_line_breaks_is_one_cue(tmp_path):
    texts = [INJECTED, "Your voice\r\n\r\nis gold", "   ", "{forever} and {\\an8}"]
    scenes = [Scene(index=i, kind="lyric", start=i + 1.0, end=i + 2.0, text=t) for i, t in enumerate(texts)]
    board = Storyboard(audio=SongAudio(5.0), language="en", scenes=scenes)
    cues = parse_srt(subtitles.srt(board), "the .srt")  # (its braces read back as written)
    assert [(c.start, c.end, c.text.replace(subtitles.WORD_JOINER, "")) for c in cues] == [
        (1.0, 2.0, " ".join(INJECTED.split())),
        (2.0, 3.0, "Your voice is gold"),
        (4.0, 5.0, "{forever} and {\\an8}"),
    ]
    dialogue = [line for line in captions.ass_script(board, 320, 240).splitlines() if line.startswith("Dialogue:")]
    assert len(dialogue) == 3 and dialogue[1].endswith(",,Your voice is gold")


def test_a_transcripts_line_breaks_reach_the_srt_as_one_cue(tmp_path):
    path = tmp_path / "nl.json"
    path.write_text(
        json.dumps(
            {"lines": [{"start": 1.0, "end": 4.0, "text": INJECTED}, {"start": 5, "end": 8, "text": "Your voice"}]}
        )
    )
    lines = check_lyrics_file(path).lines
    scenes = [Scene(index=i, kind="lyric", start=ln.start, end=ln.end, text=ln.text) for i, ln in enumerate(lines)]
    srt = subtitles.srt(Storyboard(audio=SongAudio(10.0), language="en", scenes=scenes))
    assert [c.text for c in parse_srt(srt, "the .srt")] == [" ".join(INJECTED.split()), "Your voice"]


@pytest.mark.parametrize(
    "name, text, line",
    [
        ("nul.lrc", "[00:00.50]Tab\there\n[00:01.50]nul\x00 bell\x07\n", 2),
        ("esc.txt", "hello \x1b[2J\x1b]0;title\x07 world\nsecond line\n", 1),
        ("del.srt", "1\n00:00:01,000 --> 00:00:02,000\none\n\n2\n00:00:03,000 --> 00:00:04,000\ntwo\x7f\n", 7),
        ("c1.txt", "one\r\ntwo\r\nthree \x9b2J\n", 3),
        ("raw.json", '{"lines": [{"start": 1, "end": 2,\n"text": "a\x00"}]}', 2),
    ],
)
def test_a_control_character_in_a_lyrics_file_is_refused_by_its_line(tmp_path, name, text, line):
    (path := tmp_path / name).write_text(text, newline="")
    with pytest.raises(UserError, match=rf"^lyrics file {path} line {line} holds a control character \(U\+00"):
        check_lyrics_file(path)


def test_a_control_character_is_refused_before_any_work(capsys, tmp_path):
    err = refused_render(capsys, tmp_path, "nul.lrc", "[00:00.50]I <3 you\x00\n")
    assert "line 1 holds a control character (U+0000)" in err


@pytest.mark.parametrize("where", ["text", "text_en", "words", "language", "model"])
def test_a_control_character_escaped_in_a_transcripts_json_is_refused_by_its_field(tmp_path, where):
    line = {"start": 1.0, "end": 2.0, "text": "one", "words": [{"start": 1.0, "end": 2.0, "text": "one"}]}
    transcript = {"lines": [{"start": 0, "end": 1, "text": "zero"}, line]}
    held = line["words"][0] if where == "words" else transcript if where in ("language", "model") else line
    held["text" if where == "words" else where] = "one\u001b" if where == "words" else "one\u0000"
    (path := tmp_path / "t.json").write_text(json.dumps(transcript))
    field = {"words": "lines[1].words[0].text", "text": "lines[1].text", "text_en": "lines[1].text_en"}.get(
        where, where
    )
    with pytest.raises(UserError, match=rf"^lyrics file {path}: {re.escape(field)} holds a control"):
        check_lyrics_file(path)


@pytest.mark.parametrize("field", ["text", "prompt", "mood", "title", "artist", "language"])
def test_a_control_character_in_a_storyboard_is_refused_by_its_field(field):
    data = Storyboard(audio=SongAudio(2.0), scenes=[Scene(0, "lyric", 0.0, 2.0, "hi", "a sea", 0)]).to_json()
    scene = field in ("text", "prompt", "mood")  # (a terminal's command in a scene, a NUL in the song's)
    (data["scenes"][0] if scene else data)[field] = "hello \x1b]52;c;ZWNobyBwd25lZA==\x07" if scene else "a\x00b"
    where = f"scenes\\[0\\]\\.{field}" if scene else field
    with pytest.raises(UserError, match=rf"^storyboard sb\.json: {where} holds a control character"):
        parse_storyboard(data, "sb.json")


def test_a_persons_text_reaches_the_terminal_escaped():
    pick = KeyframePick(0, 2, 1, 1, 0.5, 0.5, "s", "k0")
    text, prompt = "hello \x1b[2J\u202e world\r\nagain", "a sea\x9b"
    board = Storyboard(audio=SongAudio(2.0), scenes=[Scene(0, "lyric", 0.0, 2.0, text, prompt, 0, pick=pick)])
    printed = scene_table(board) + "\n".join(weakest_keyframes(board, [0]))
    assert not any(c in printed for c in "\x1b\u202e\r\x9b")
    assert "hello U+001B[2JU+202E world again" in printed and "a seaU+009B" in printed


def test_srt_markup_is_stripped_and_a_lyrics_brackets_kept():
    cues = "1\n00:00:01,000 --> 00:00:02,000\nI <3 you and you <3 me >_<\n\n2\n00:00:03,000 --> 00:00:04,000\n"
    cues += "<B>hold</b> <font color='red'>me</FONT> {\\an8}{forever} <i>now</i>\n"
    assert [line.text for line in parse_srt(cues, "x.srt")] == ["I <3 you and you <3 me >_<", "hold me {forever} now"]


FAR = {"start": 3.1, "end": 3.4, "text": "far"}


@pytest.mark.parametrize(
    "words, field, reason",
    [
        ([FAR | {"start": -0.5}, FAR], "words[0].start", "must not be before the song's start"),
        ([FAR, {"start": 4.5, "end": 4.0}], "words[1].end", "must not be before its start"),
        ([FAR, {"start": 3.0, "end": 3.1}], "words[1].start", "must not be before the word before's start"),
        ([FAR, {"start": 40.0, "end": 41.0}], "words[1].start", "must be inside its line"),
        ([FAR, {"start": 3.2, "end": 9.0}], "words[1].end", "must be inside its line"),
    ],
)
def test_a_transcripts_word_times_are_checked(tmp_path, words, field, reason):
    line = {"start": 3.0, "end": 5.0, "text": "far away", "words": [words[0], words[1] | {"text": "away"}]}
    (path := tmp_path / "t.json").write_text(json.dumps([{"start": 0, "end": 1, "text": "one"}, line]))
    with pytest.raises(UserError, match=rf"^lyrics file {path}: lines\[1\]\.{re.escape(field)} {reason}"):
        check_lyrics_file(path)


def test_a_transcripts_words_may_poke_out_of_their_line_a_little(tmp_path):
    words = [{"start": 2.6, "end": 3.4, "text": "far"}, {"start": 3.4, "end": 5.8, "text": "away"}]
    (path := tmp_path / "t.json").write_text(
        json.dumps([{"start": 3.0, "end": 5.0, "text": "far away", "words": words}])
    )
    assert [w.start for w in check_lyrics_file(path).lines[0].words] == [2.6, 3.4]


def test_plain_lyrics_with_a_clock_before_an_arrow_stay_plain(tmp_path):
    (path := tmp_path / "nine.txt").write_text("Workin 9 to 5\n9:00 --> 5:00 barely gettin by\n")
    assert not check_lyrics_file(path).timed
    (path := tmp_path / "cue.txt").write_text("1\n0:00:01 --> 0:00:02,500\nWorkin 9 to 5\n")
    assert timed(path, path.read_text()) == [(1.0, 2.5, "Workin 9 to 5")]


CUE_1 = "1\n00:00:01,000 --> 00:00:03,000\nline one\n"
CUE_2 = "2\n00:00:04,000 --> 00:00:06,000\nline two\n"
UNTIMED = "has no cue time, as the cues around it have"


@pytest.mark.parametrize(
    "text, reason",
    [
        (CUE_1 + CUE_2, r": cue 1 runs into the next cue's times \(00:00:04,000 --> 00:00:06,000\): put a blank line"),
        (
            CUE_1 + "\nan untimed verse line\nanother untimed\n\n" + CUE_2,
            f": the text at 'an untimed verse.*' {UNTIMED}",
        ),
        (
            CUE_1 + "\n2\nsung too early\n00:00:04,000 --> 00:00:06,000\nline two\n",
            f": the text at 'sung too early' {UNTIMED}",
        ),
        ("[00:01.00]an lrc line\n" + CUE_1, r": '\[00:01.00\]an lrc line' is a line of LRC, not SRT"),
        (
            CUE_1 + "\n[00:05.00]an lrc line\n[00:07.00]another\n",
            r": '\[00:05.00\]an lrc line' is a line of LRC, not SRT",
        ),
    ],
    ids=["no blank line", "a block without times", "words above the times", "lrc above a cue", "lrc between cues"],
)
def test_srt_that_would_be_sung_wrong_or_lost_is_refused_as_a_file_and_pasted(tmp_path, text, reason):
    from ui.jobs import check_pasted_lyrics  # (the page's check before any job is made)

    for name in ("lyrics.srt", "lyrics.txt"):
        (path := tmp_path / name).write_text(text)
        with pytest.raises(UserError, match=f"^lyrics file {re.escape(str(path))}{reason}"):
            check_lyrics_file(path)
    with pytest.raises(UserError, match=f'^"Lyrics"{reason}'):
        check_pasted_lyrics(text)


def test_an_srt_without_cue_times_is_refused_not_read_as_no_lines(tmp_path):
    (path := tmp_path / "words.srt").write_text("My heart is a lighthouse\n\nYour voice\n")
    with pytest.raises(UserError, match=r"words\.srt has no cue times: an SRT cue is its number, its times"):
        check_lyrics_file(path)


def test_an_srt_cue_missing_its_blank_line_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 8)
    (lyrics := tmp_path / "lyrics.srt").write_text(CUE_1 + CUE_2)
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and "cue 1 runs into the next cue's times" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


def test_srt_as_written_reads_as_before():
    text = (
        "\ufeff1\r\n00:00:01,000 --> 00:00:03,000\r\nlove --> hate\r\n9:00 --> 5:00 barely gettin by\r\n\r\n\r\n"
        "2\n00:00:04.000-->00:00:06,500 X1:10 X2:20\n<i>two</i>\n1999\n\n♪\n\n3\n00:00:07,000 --> 00:00:08,000\n\n4\n"
    )
    assert [(c.start, c.end, c.text) for c in parse_srt(text, "x.srt")] == [
        (1.0, 3.0, "love --> hate 9:00 --> 5:00 barely gettin by"),
        (4.0, 6.5, "two 1999"),
        (7.0, 8.0, ""),  # a cue without words, which no scene holds (fit_to_duration)
    ]


def test_musicvids_own_srt_reads_back_whole_whatever_its_lyrics():
    texts = [
        "00:00:05,000 --> 00:00:06,000",
        " 1:2:3.4 --> 5:6:7.8 and words",
        "1:2:3abc --> x",
        "love-->00:00:02,000",
        "[00:05.00] an lrc time sung",
        "2",
        "00:00:01,000 --> 00:00:02,000 and\n\n3\n00:00:09,000 --> 00:00:10,000\nmore",
    ]
    scenes = [Scene(index=i, kind="lyric", start=i + 1.0, end=i + 2.0, text=t) for i, t in enumerate(texts)]
    cues = parse_srt(subtitles.srt(Storyboard(audio=SongAudio(9.0), language="en", scenes=scenes)), "the .srt")
    assert [(c.start, c.text.removeprefix(subtitles.WORD_JOINER)) for c in cues] == [
        (i + 1.0, " ".join(t.split())) for i, t in enumerate(texts)
    ]


def test_lines_past_the_songs_end_are_left_out_and_said(tmp_path, caplog):
    (path := tmp_path / "song.lrc").write_text("[00:01.00]in the song\n[00:10.00]at its end\n[09:00.00]far past\n")
    assert [line.text for line in fit_lyrics(check_lyrics_file(path), 10.0, "").lines] == ["in the song"]
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said == [f"lyrics file {path}: 2 lines start at or after the song's end (10.0 s) and are left out"]
    (path := tmp_path / "one.srt").write_text(CUE_1 + "\n" + CUE_2)
    assert [line.text for line in fit_lyrics(check_lyrics_file(path), 4.0, "").lines] == ["line one"]
    assert "one.srt: 1 line starts at or after the song's end (4.0 s) and is left out" in caplog.text
    caplog.clear()
    timed_lyrics(path, 4.0)  # (a check against a song's length says nothing: musicvid.batch.lengths)
    fit_lyrics(check_lyrics_file(path), 7.0, "")
    assert not caplog.records


def test_a_whole_songs_lrc_fits_a_clip_of_it_and_too_many_lines_inside_are_refused(tmp_path, caplog):
    # 60 lines 3 s apart (a 3-minute song): a 10 s clip holds 4 of them, whatever the rest of the file holds
    stamps = "".join(f"[{i * 3 // 60:02d}:{i * 3 % 60:02d}.00]line number {i}\n" for i in range(60))
    (path := tmp_path / "long.lrc").write_text(stamps)
    assert [line.text for line in fit_lyrics(check_lyrics_file(path), 10.0, "").lines] == [
        f"line number {i}" for i in range(4)
    ]
    assert "56 lines start at or after the song's end" in caplog.text
    (crowded := tmp_path / "crowded.lrc").write_text("".join(f"[00:0{i // 10}.{i % 10}0]la\n" for i in range(30)))
    with pytest.raises(UserError, match="has 21 lines, more than a 2.1 s song can hold"):
        timed_lyrics(crowded, 2.1)


@pytest.mark.parametrize("lyrics", [LRC, SRT, "line a\nline b\n(x2)\n"])
def test_files_joined_or_made_crlf_twice_read_as_they_were_written(tmp_path, lyrics):
    def read(name, text):
        (path := tmp_path / name).write_text(text, encoding="utf-8", newline="")
        found = check_lyrics_file(path)
        return [(line.start, line.end, line.text) for line in found.lines] if found.timed else found.lines

    kind = ".txt" if "(x2)" in lyrics else ".lrc" if "[ti" in lyrics else ".srt"
    as_written = read(f"a{kind}", lyrics)
    assert read(f"b{kind}", lyrics.replace("\n", "\r\r\n")) == as_written  # (a file made CRLF twice)
    first, rest = lyrics.split("\n", 1)  # a byte-order mark inside, where `cat a b` joined two files
    assert read(f"c{kind}", f"{first}\n\ufeff{rest}") == as_written


def test_a_refusal_quotes_a_persons_text_escaped_and_cut_between_letters(tmp_path, capsys):
    (lyrics := tmp_path / "l.lrc").write_text("[00:01.00]one\n\u202eevil untimed line\n" + "ế" * 50 + "\n")
    with pytest.raises(UserError, match=r"\(U\+202Eevil untimed line\) has no time"):
        check_lyrics_file(lyrics)
    lyrics.write_text("[00:01.00]one\n" + "e\u0302\u0301" * 50 + "\n")
    with pytest.raises(UserError) as refused:
        check_lyrics_file(lyrics)
    assert "(" + "e\u0302\u0301" * 13 + "e…)" not in str(refused.value) and "e\u0302\u0301…)" in str(refused.value)
    persian = Storyboard(audio=SongAudio(2.0), scenes=[Scene(0, "lyric", 0.0, 2.0, "می\u200cخواهم", "a sea", 0)])
    assert "می\u200cخواهم" in scene_table(persian)  # a joiner is a letter's shape, not a command


def test_the_table_gives_a_lyric_its_columns_in_a_terminal():
    lyrics = ["我爱你" * 30, "a" * 58 + "e\u0302\u0301" + "b" * 5, "short"]
    scenes = [Scene(n, "lyric", n, n + 1.0, text, "a sea", 0) for n, text in enumerate(lyrics)]
    rows = scene_table(Storyboard(audio=SongAudio(3.0), scenes=scenes)).splitlines()[1:]
    assert len({wcswidth(row[: row.index("a sea")]) for row in rows}) == 1  # the prompts in one column
    assert "我爱你" * 9 + "我爱…" in rows[0]  # 29 wide characters, the ellipsis: 59 columns, one space to pad
    assert "a" * 58 + "e\u0302\u0301…" in rows[1]  # (not "e…": a letter is kept with its marks)
