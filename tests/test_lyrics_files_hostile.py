"""Lyrics files as people save them (musicvid.lyrics.known): LRC or SRT saved as .txt, a transcript's JSON on one
line or with an overlong language, a lyric whose text holds line breaks. Each is read as what it is, or refused in
one sentence before any work; never read as something else."""

import json

import pytest

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.delivery import captions
from musicvid.lyrics.known import MAX_LINE_WORDS, check_lyrics_file, parse_srt
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import make_tone, run

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


def test_lrc_saved_as_txt_is_refused_before_any_work_where_it_cannot_be_read(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    (lyrics := tmp_path / "lyrics.txt").write_text("[00:00.50]one\nan untimed line\n")
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and "line 2 (an untimed line) has no time" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


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
    texts = [INJECTED, "Your voice\r\n\r\nis gold", "   "]
    scenes = [Scene(index=i, kind="lyric", start=i + 1.0, end=i + 2.0, text=t) for i, t in enumerate(texts)]
    board = Storyboard(audio=SongAudio(4.0), language="en", scenes=scenes)
    cues = parse_srt(captions.srt(board), "the .srt")
    assert [(c.start, c.end, c.text) for c in cues] == [
        (1.0, 2.0, " ".join(INJECTED.split())),
        (2.0, 3.0, "Your voice is gold"),
    ]
    dialogue = [line for line in captions.ass_script(board, 320, 240).splitlines() if line.startswith("Dialogue:")]
    assert len(dialogue) == 2 and dialogue[1].endswith(",,Your voice is gold")


def test_a_transcripts_line_breaks_reach_the_srt_as_one_cue(tmp_path):
    path = tmp_path / "nl.json"
    path.write_text(
        json.dumps(
            {"lines": [{"start": 1.0, "end": 4.0, "text": INJECTED}, {"start": 5, "end": 8, "text": "Your voice"}]}
        )
    )
    lines = check_lyrics_file(path).lines
    scenes = [Scene(index=i, kind="lyric", start=ln.start, end=ln.end, text=ln.text) for i, ln in enumerate(lines)]
    srt = captions.srt(Storyboard(audio=SongAudio(10.0), language="en", scenes=scenes))
    assert [c.text for c in parse_srt(srt, "the .srt")] == [" ".join(INJECTED.split()), "Your voice"]
