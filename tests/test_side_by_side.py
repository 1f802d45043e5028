"""The side-by-side benchmark's musicvid walk: the frame count it promises, and a valid video.

(stable-diffusion-videos' side needs its own multi-GB environment, so it runs only in the benchmark.)"""

import json
import subprocess
import sys
from pathlib import Path

import av
import pytest

from benchmarks import side_by_side, walk
from musicvid.models.tiny import local_diffusion
from musicvid.settings.presets import TINY


@pytest.mark.slow
@pytest.mark.ci
def test_musicvid_walk_draws_each_frame_once_and_writes_the_video(tmp_path):
    weights = tmp_path / "weights"
    local_diffusion(TINY).save_pretrained(weights)
    out = tmp_path / "walk"
    command = [
        sys.executable,
        walk.__file__,
        "--tool",
        "musicvid",
        "--weights",
        str(weights),
        "--out",
        str(out),
        "--prompts",
        "a lighthouse",
        "a storm",
        "a boat",
        "--seeds",
        "1",
        "2",
        "3",
        "--frames-per-prompt",
        "5",
        "--width",
        "32",
        "--height",
        "32",
        "--steps",
        "2",
        "--batch-size",
        "3",
        "--device",
        "cpu",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=Path(walk.__file__).parents[1])
    result = json.loads(done.stdout.splitlines()[-1])
    # two transitions of 5 frames, then the last keyframe; no picture drawn twice
    assert result["video_frames"] == 11 and result["pictures"] == 11
    with av.open(str(out / "walk.mp4")) as container:
        assert sum(1 for _ in container.decode(video=0)) == 11
        assert container.streams.video[0].codec_context.width == 32


@pytest.mark.parametrize(
    "argv", [["--size", "512"], ["--size", "60x60"], ["--rounds", "0"], ["--sdv-python", "/nonexistent/python"]]
)
def test_bad_flags_are_refused_before_any_weights_are_built(argv, monkeypatch, capsys):
    monkeypatch.setattr(side_by_side, "local_diffusion", lambda name: pytest.fail("built"))
    monkeypatch.setattr(side_by_side, "sdv_python", lambda given: pytest.fail("made an environment"))
    with pytest.raises(SystemExit) as refused:
        side_by_side.main(argv)
    assert refused.value.code == 2 and capsys.readouterr().err.count("error:") == 1
