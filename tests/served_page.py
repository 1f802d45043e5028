"""The page as `musicvid ui` serves it, for the tests that drive it as programs and people do: a server in a
process of its own on a free port, and the page's advanced settings in the order its API takes them."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import av
import pytest

from musicvid.core.assets import DEMO_LYRICS

ADVANCED = [
    "tiny",
    4,
    7,
    4,
    7.5,
    "64x64",
    0,
    "",
    True,
    1,
    "",
    "",
    "none",
    "",
    "linear",
    "",
    "",
    "none",
    "slerp",
    0,
    False,
    False,
    None,
    0.6,
    "",
    None,
]  # preset, fps, context, steps, guidance, size, seed, style, align, keyframe candidates, reroll below (none); the
# Look group: look, captions, aspect,
# pacing, output fps, resolution, camera move, transitions, pulse, preview, fast, reference picture, its strength,
# the LoRAs' box (names and weights), the LoRAs uploaded
TIMED_LYRICS = DEMO_LYRICS.read_text()  # pasted as they are: timed lines need no Whisper, which keeps the tests short


def free_port() -> int:
    """A port no process listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def codecs(path: Path) -> tuple[str, str]:
    """The codecs of a video the page made: its picture's and its sound's."""
    with av.open(str(path)) as container:
        return container.streams.video[0].codec_context.name, container.streams.audio[0].codec_context.name


@contextmanager
def served(jobs: Path, *options) -> Iterator[tuple[str, subprocess.Popen]]:
    """`musicvid ui --models tiny OPTIONS` keeping its jobs in `jobs`, once it answers: its address and process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    argv = ["ui", "--models", "tiny", "--port", str(port), "--jobs-dir", str(jobs), *map(str, options)]
    process = subprocess.Popen(
        [sys.executable, "-m", "musicvid", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                pytest.fail(f"the page's server did not start within 120 s: {process.stdout.read().decode()}")
            time.sleep(0.5)
    try:
        yield url, process
    finally:
        process.terminate()
        process.wait(timeout=30)
