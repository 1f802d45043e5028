"""ffmpeg describes a song once per version of its file in a process: a render checks the song's length, decodes it
and muxes it, each wanting ffmpeg's description of it; a file written again under its name is described again."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from scipy.io import wavfile

from musicvid.core import ffmpeg
from musicvid.core.audio import load_audio
from musicvid.delivery.mux import encode_video


@pytest.fixture
def probes(monkeypatch) -> list[list[str]]:
    """The ffmpeg runs that only describe a file (`-i` and no output), as they are made."""
    made: list[list[str]] = []
    real = subprocess.run

    def run(command, *args, **kwargs):
        if command[0] == ffmpeg.exe() and command[-2] == "-i":
            made.append(command)
        return real(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    return made


def test_a_songs_analysis_and_mux_describe_it_once(tmp_path, probes):
    song = tmp_path / "song.wav"
    wavfile.write(song, 16_000, np.sin(np.arange(16_000) / 5).astype(np.float32) * 0.3)
    audio = load_audio(song)  # its length checked, then decoded
    grey = (np.full((16, 16, 3), 128, np.uint8) for _ in range(2))
    encode_video(grey, width=16, height=16, fps=2, audio=song, output=tmp_path / "v.mp4")
    assert audio.info.duration == 1 and (tmp_path / "v.mp4").stat().st_size > 0
    assert probes == [[ffmpeg.exe(), "-hide_banner", "-nostdin", "-i", ffmpeg.file_url(song)]]


def test_a_file_written_again_in_place_is_described_again(tmp_path, probes):
    song = tmp_path / "song.wav"
    wavfile.write(song, 16_000, np.zeros(16_000, np.int16))
    first = ffmpeg.declared_duration(song)
    # the same count of bytes, the same inode: only its times tell the new version from the old
    wavfile.write(song, 32_000, np.zeros(16_000, np.int16))
    second, again = ffmpeg.declared_duration(song), ffmpeg.declared_duration(song)
    assert first == pytest.approx(1) and second == again == pytest.approx(0.5) and len(probes) == 2
