"""The trained checkpoint drives musicvid end to end: `musicvid storyboard --models tiny --vipe CKPT`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .helpers import REPO, SCENES, subprocess_env

DEMO_SONG = REPO / "assets" / "demo" / "demo.mp3"


@pytest.mark.slow
@pytest.mark.ci
def test_storyboard_of_the_demo_song_uses_the_trained_checkpoint(trained, tmp_path):
    out, _ = trained
    env = subprocess_env()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "musicvid",
            "storyboard",
            str(DEMO_SONG),
            "--models",
            "tiny",
            "--vipe",
            str(out / "best"),
            "--lyrics",  # timed lyrics: what is tested is the trained model, not Whisper
            str(DEMO_SONG.with_suffix(".lrc")),
            "--workdir",
            str(tmp_path / "work"),
            "--quiet",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    storyboards = list((tmp_path / "work").rglob("storyboard.json"))
    assert len(storyboards) == 1
    made = json.loads(storyboards[0].read_text())
    scenes = made["scenes"]
    assert made["settings"]["context_size"] == 1  # each line read with as many before it as the model learned
    assert scenes and all(scene["prompt"] for scene in scenes)
    # The prompts are the trained model's: it only ever learned "a <colour> <thing> <scene>".
    assert any(
        scene["prompt"].startswith("a ") and any(s in scene["prompt"] for s in SCENES.values()) for scene in scenes
    )
