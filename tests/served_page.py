"""The page as `musicvid ui` serves it, for the tests that drive it as programs and people do: a server in a
process of its own on a free port, and the page's advanced settings in the order its API takes them."""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import av
import pytest

from musicvid.core.assets import DEMO_LYRICS
from ui.config import JOBS_FOLDER

# The settings controls as the tests set them, in the page's order (its groups', ui.controls.page_groups): the order
# of the API's inputs after the song's (tests/test_one_source.py checks it).
PAGE_CONTROLS = dict(
    language="detect", context_size=7, seed=0,  # song and lyrics
    preset="tiny",  # models
    size="64x64", aspect="", steps=4, guidance=7.5, keyframe_candidates=1, reroll_below="", style="", reference=None,
    reference_strength=0.6, lora="", lora_upload=None, fast=False,  # pictures
    fps=4, pacing="linear", motion="none", pulse=0, transitions="slerp", align=True, preview=False,  # motion
    look="", output_fps="", resolution="", captions="none",  # video and delivery
)  # fmt: skip


def controls(**changed) -> list:
    """The controls' values as the API takes them, some changed."""
    assert set(changed) <= set(PAGE_CONTROLS)
    return list({**PAGE_CONTROLS, **changed}.values())


TIMED_LYRICS = DEMO_LYRICS.read_text()  # pasted as they are: timed lines need no Whisper, which keeps the tests short


def page_jobs(jobs_dir: Path) -> Path:
    """Where the page served with `--jobs-dir jobs_dir` keeps its jobs (ui.config.jobs_root)."""
    return jobs_dir / JOBS_FOLDER


def a_lora(path: Path, note: str = "") -> Path:
    """A style LoRA as its header reads (one layer, kohya's names, its down and up matrices), `note` in its metadata:
    files of one name differ."""
    import numpy as np
    from safetensors.numpy import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    layer = {"lora_unet_down.lora_down.weight": np.zeros((1, 4), np.float32)}
    layer["lora_unet_down.lora_up.weight"] = np.zeros((4, 1), np.float32)
    save_file(layer, str(path), {"note": note})
    return path


def cpu_seconds(pid: int) -> float:
    """User + system time of the process and its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    # its output to a file: a pipe nobody reads would stop the server once it held 64 KB
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "musicvid", *argv],
        stdout=log,
        stderr=subprocess.STDOUT,
        # a visitor who leaves is noticed within a second or two (Gradio's heartbeat; 15 s unless told)
        env={**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_HEARTBEAT_INTERVAL": "1"},
    )
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                log.seek(0)
                pytest.fail(f"the page's server did not start within 120 s: {log.read().decode()}")
            time.sleep(0.5)
    try:
        yield url, process
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
