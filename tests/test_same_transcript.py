"""The same song gives the same transcript: a fresh song with long gaps (tests/fixtures/fresh_songs.py), its known
lyrics aligned and its lyrics recognized by the real Whisper tiny.en on both backends, in two processes (each
its own models, threads and random generators), writes the same transcripts byte for byte."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.fresh_songs import fresh_song

pytestmark = [
    pytest.mark.slow,
    pytest.mark.ci,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed"),
]

# One process's transcripts: the known lines aligned, and the song recognized, through each backend.
TRANSCRIBED = """
import json, sys
from pathlib import Path
from musicvid.core.audio import load_audio
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import transcribe
from tests.fixtures.whisper_ct2 import load_tiny_en

song, folder, texts = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
audio = load_audio(song)
for backend in ("faster-whisper", "openai-whisper"):
    asr = load_tiny_en(backend, folder)
    for made in (align_lyrics(asr, audio.samples, texts, "", quiet=True), transcribe(asr, audio.samples, "", quiet=True)):
        print(json.dumps(made.to_json(), sort_keys=True))
"""


def test_a_song_twice_in_two_processes_gives_the_same_transcripts(tmp_path):
    song = fresh_song("gaps", 12, tmp_path)
    path, texts = song.make(tmp_path), [text for *_, text in song.sung]
    runs = []
    for n in range(2):
        (tmp_path / f"models-{n}").mkdir()
        command = [sys.executable, "-c", TRANSCRIBED, str(path), str(tmp_path / f"models-{n}"), json.dumps(texts)]
        ran = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parents[1], timeout=600)
        assert ran.returncode == 0, ran.stderr
        runs.append(
            ran.stdout.replace(str(tmp_path / f"models-{n}"), "<models>").splitlines()
        )  # (its checkpoint's path)
    assert len(runs[0]) == 4 and runs[0] == runs[1]
    known = [json.loads(line) for line in runs[0][::2]]
    assert all(len(made["lines"]) == len(texts) for made in known)  # every line kept, in both backends
