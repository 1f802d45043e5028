"""Lyrics timed on a song as hard as real ones (benchmarks/songs.py: a 20 s intro, a passage of over 20 s
between two lines, a refrain sung three times at the end, a loud band), through both backends with the
real Whisper tiny.en weights: recognized, and aligned from known words."""

import re
import shutil
from itertools import groupby

import pytest
import torch

from benchmarks.songs import RATE, make_song, voice
from benchmarks.whisper_ct2 import load_tiny_en
from musicvid.audio import load_audio
from musicvid.cli import main
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import transcribe
from musicvid.storyboard import load_storyboard, plan_scenes
from tests.hearing import heard_once

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed"),
]

SECONDS = 80.0
REFRAIN = "we will never let it go"
SUNG = [
    (20.0, "the morning sun is rising over the hills"),  # after a 20 s intro
    (25.0, "we are walking down an empty road"),
    (52.0, "my heart is beating like a drum"),  # after a passage of 24 s
    (57.0, "the night is falling on the quiet town"),
    (63.0, REFRAIN),
    (67.0, REFRAIN),
    (71.0, REFRAIN),
]
# A line the person remembers that nobody sings: it must be kept, and flagged.
NOT_SUNG = "a silver train is leaving for the coast"
TOLERANCE = 1.0  # seconds
# Song C: nine lines, each followed by an instrumental gap of 2 to 15 s (the line after the 15 s gap
# used to be aligned 2.1 s early: its first word stretched back over the music before it).
GAPPED = [
    ("the morning sun is rising over the hills", 2.0),
    ("we are walking down an empty road", 12.0),
    ("my heart is beating like a drum", 4.5),
    ("the night is falling on the quiet town", 15.0),
    ("a silver river running to the sea", 3.0),
    ("the stars are burning in the sky", 10.0),
    ("we will never let it go", 6.0),
    ("the wind is singing through the trees", 8.0),
    ("hold on to the light tonight", 8.0),
]


@pytest.fixture(scope="module", autouse=True)
def hearing():
    """Aligning a song starts from the decode transcribing it made (tests/hearing.py)."""
    with heard_once() as hearing:
        yield hearing


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    path = make_song(tmp_path_factory.mktemp("sung") / "song.mp3", SECONDS, SUNG)
    return load_audio(path)


@pytest.fixture(scope="module")
def gapped(tmp_path_factory):
    """Song C, and when each of its lines is sung (start, text): a 12 s intro, then each line and its gap."""
    folder = tmp_path_factory.mktemp("gapped")
    start, sung = 12.0, []
    for text, gap in GAPPED:
        sung.append((start, text))
        start += len(voice(text, folder)) / RATE + gap
    return load_audio(make_song(folder / "song.mp3", start, sung)), sung


@pytest.fixture(scope="module", params=["faster-whisper", "openai-whisper"])
def asr(request, tmp_path_factory):
    return load_tiny_en(request.param, tmp_path_factory.mktemp("openai-whisper"))


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def start_errors(lines, sung) -> list[float]:
    """For each sung line, in order, the start error of the line found for it."""
    assert len(lines) == len(sung), [line.text for line in lines]
    for line, (_, text) in zip(lines, sung):
        assert len(words(line.text) & words(text)) >= len(words(text)) / 2, (line.text, text)
    return [round(line.start - start, 2) for line, (start, _) in zip(lines, sung)]


def test_every_sung_line_is_its_own_scene_where_it_is_sung(song, asr):
    threads = torch.get_num_threads()
    transcript = transcribe(asr, song.samples, song.info.sha256, quiet=True)
    assert torch.get_num_threads() == threads  # what draws the pictures next computes as a resume would
    errors = start_errors(transcript.lines, SUNG)
    print(f"\n{asr.backend} recognized: start errors {errors} s")
    assert max(map(abs, errors)) <= TOLERANCE
    scenes = plan_scenes(transcript.lines, song.info.duration)
    assert [kind for kind, _ in groupby(s.kind for s in scenes)] == ["intro", "lyric", "break", "lyric", "outro"]
    # one scene per line, the refrain's three included
    assert [s.text for s in scenes if s.kind == "lyric"] == [line.text for line in transcript.lines]


def test_known_lyrics_are_placed_where_they_are_sung_and_a_line_nobody_sings_is_flagged(song, asr):
    texts = [text for _, text in SUNG[:2]] + [NOT_SUNG] + [text for _, text in SUNG[2:]]
    transcript = align_lyrics(asr, song.samples, texts, song.info.sha256, quiet=True)
    assert [line.text for line in transcript.lines] == texts  # every line kept, in order
    sung = [line for line in transcript.lines if line.text != NOT_SUNG]
    errors = start_errors(sung, SUNG)
    print(
        f"\n{asr.backend} aligned: start errors {errors} s, confidence {[line.confidence for line in transcript.lines]}"
    )
    assert max(map(abs, errors)) <= TOLERANCE
    assert all(line.confidence >= 0.5 for line in sung)
    assert transcript.lines[2].confidence < 0.5


def test_known_lines_after_long_instrumental_gaps_start_where_they_are_sung(gapped, asr):
    song, sung = gapped
    transcript = align_lyrics(asr, song.samples, [text for _, text in sung], song.info.sha256, quiet=True)
    errors = start_errors(transcript.lines, sung)
    print(f"\n{asr.backend} aligned after gaps: start errors {errors} s")
    assert max(map(abs, errors)) <= 0.5
    # a line's scene starts at its first sung word, not across the gap before it
    scenes = [s for s in plan_scenes(transcript.lines, song.info.duration) if s.kind == "lyric"]
    assert [s.start for s in scenes] == [line.start for line in transcript.lines]


def test_lyrics_pasted_without_line_breaks_become_the_phrases_sung(song, asr):
    paragraph = " ".join(text for _, text in SUNG)  # copied from a web page: one line
    transcript = align_lyrics(asr, song.samples, [paragraph], song.info.sha256, quiet=True)
    errors = start_errors(transcript.lines, SUNG)
    print(f"\n{asr.backend} aligned from one paragraph: start errors {errors} s")
    assert max(map(abs, errors)) <= TOLERANCE
    assert " ".join(line.text for line in transcript.lines) == paragraph  # every word, once, in order


def test_a_lyrics_file_reaches_the_storyboard_and_the_table(song, tiny_en, tmp_path, capsys):
    lyrics = tmp_path / "song.txt"
    lyrics.write_text(
        "[Verse]\n"
        + "\n".join(text for _, text in SUNG[:2])
        + f"\n{NOT_SUNG}\n\n[Chorus]\n"
        + "\n".join(text for _, text in SUNG[2:])
        + "\n"
    )
    command = [
        "storyboard",
        str(song.info.path),
        "--models",
        "tiny",
        "--asr",
        "faster-whisper",
        "--asr-model",
        tiny_en,
        "--lyrics",
        str(lyrics),
        "--workdir",
        str(tmp_path / "w"),
        "-q",
    ]
    assert main(command) == 0
    table = capsys.readouterr().out
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    lyric = [s for s in board.scenes if s.kind == "lyric"]
    assert [s.text for s in lyric] == [text for _, text in SUNG[:2]] + [NOT_SUNG] + [text for _, text in SUNG[2:]]
    assert [s.unsure for s in lyric] == [False, False, True] + [False] * 5
    [note] = [row for row in table.splitlines() if row.startswith("? ")]
    assert note.startswith("? 1 of") and f"(scenes {lyric[2].index})" in note
    assert board.settings["transcript"].startswith(f"aligned:faster-whisper:{tiny_en}:song.txt:")
    # the person takes out the line nobody sings: the lines are timed again, and none is in doubt
    lyrics.write_text(lyrics.read_text().replace(NOT_SUNG, ""))
    assert main(command) == 0
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    assert [s.text for s in board.scenes if s.kind == "lyric"] == [text for _, text in SUNG]
    assert not any(s.unsure for s in board.scenes) and "\n? " not in capsys.readouterr().out
