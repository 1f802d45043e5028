"""The default models as a new user's first run meets them: loaded by hub name, offline, from a cache holding
stand-ins laid out like the real repositories (tests/standins/): the default preset renders every scene from ViPE,
a cache without the scorer makes an unscored video, and the stand-ins keep the real layouts."""

import json
import os
import subprocess
import sys

import huggingface_hub.constants
import pytest

from musicvid.settings.presets import SCORER, SD15
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, probe
from tests.helpers import run as run_cli
from tests.standins.hub import snapshot
from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER

pytestmark = pytest.mark.slow


@pytest.mark.ci
def test_the_default_preset_by_hub_name_renders_every_scene_from_vipe(standin_home, tiny_en, demo_song, tmp_path):
    """`musicvid render song.mp3` with the default models, as a new user's first run (only Whisper large
    is replaced: a faster-whisper model does the recognition)."""
    env = {**os.environ, "HF_HOME": str(standin_home), "HF_HUB_OFFLINE": "1"}
    workdir, video = tmp_path / "w", tmp_path / "song.mp4"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "musicvid",
            "render",
            str(demo_song),
            "--asr",
            "faster-whisper",
            "--asr-model",
            tiny_en,
            "--workdir",
            str(workdir),
            "-o",
            str(video),
            "--size",
            "64x64",
            "--steps",
            "2",
            "--fps",
            "2",
            "-q",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    # -q: its summary alone; the hub said "Could not reach the Hub … Using cached commit hash" offline at every load
    assert run.stderr.count("\n") == 1 and " frames (" in run.stderr, run.stderr
    board = load_storyboard(workdir / "storyboard.json")
    assert board.settings.models["vipe"] == DEFAULT_VIPE and board.settings.models["diffusion"] == SD15
    lyric = [s for s in board.scenes if s.kind == "lyric"]
    assert len(lyric) >= 3
    # every prompt came from the model: none fell back to its lyric, and none is its lyric or context
    assert not any(s.fallback for s in board.scenes) and "kept their lyric" not in run.stderr
    assert all(s.prompt.strip() and s.prompt != s.text for s in board.scenes)
    info = probe(video)
    assert info["video_codec"] == "h264" and info["size"] == (64, 64)
    assert info["frames"] == round(board.duration * 2)


def test_a_render_by_hub_name_without_the_scorer_in_the_cache_makes_its_video_unscored(
    standin_hub, tmp_path, monkeypatch, capsys, caplog
):
    """The drawing models on this machine, the scorer not: it costs the scores, said in one line (issue 50)."""
    hub = tmp_path / "hub"  # the stand-ins' cache without the scorer's repository
    hub.mkdir()
    for repository in standin_hub.iterdir():
        if repository.name != f"models--{SCORER.replace('/', '--')}":
            (hub / repository.name).symlink_to(repository)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]a light in the storm\n")
    options = ["--lyrics", tmp_path / "song.lrc", "--size", "64x64", "--steps", "2", "--fps", "2", "-q"]
    code, out, err = run_cli(capsys, "render", song, *options, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4")
    assert code == 0 and out.strip() == str(tmp_path / "v.mp4"), err
    assert probe(tmp_path / "v.mp4")["frames"] == 4
    [said] = [record.getMessage() for record in caplog.records if SCORER in record.getMessage()]
    assert said.startswith("the keyframes are not scored, and the render goes on") and "\n" not in said
    timings = json.loads((tmp_path / "w" / "timings.json").read_text())
    assert timings["models"]["diffusion"]["name"] == SD15 and "scorer" not in timings["models"]
    # picked by their scores, the keyframes need it: refused before the work
    code, _, err = run_cli(capsys, "render", song, *options, "--keyframe-candidates", "2", "--workdir", tmp_path / "w2")
    assert code == 2 and "pick keyframes by their scores" in err and not (tmp_path / "w2").exists()


def test_a_quiet_fast_render_by_hub_name_says_its_summary_alone(standin_home, tmp_path):
    """Offline, the hub said "Could not reach the Hub … Using cached commit hash" as the picture model and the tiny
    decoder loaded, each twice (in its own line and in ours), and diffusers' tiny decoder an argument it passes
    the hub deprecated."""
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]a light in the storm\n")
    options = ["--lyrics", tmp_path / "song.lrc", "--size", "64x64", "--fps", "2", "--fast", "-q"]
    command = ["render", song, *options, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4"]
    env = {**os.environ, "HF_HOME": str(standin_home), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "musicvid", *map(str, command)], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0 and probe(tmp_path / "v.mp4")["frames"] == 4, run.stderr
    assert run.stderr.count("\n") == 1 and " frames (" in run.stderr, run.stderr


def test_the_stand_ins_keep_the_real_repositories_layouts(standin_hub):
    vipe = snapshot(standin_hub, DEFAULT_VIPE)
    assert sorted(p.name for p in vipe.iterdir()) == [
        "README.md",
        "config.json",
        "generation_config.json",
        "pytorch_model.bin",
    ]
    tokenizer = snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER)
    assert json.loads((tokenizer / "tokenizer_config.json").read_text()) == {"model_max_length": 1024}
    sd = snapshot(standin_hub, SD15)
    index = json.loads((sd / "model_index.json").read_text())
    assert index["safety_checker"] == ["stable_diffusion", "StableDiffusionSafetyChecker"]
    for folder in ("unet", "vae"):
        assert {p.name for p in (sd / folder).iterdir()} >= {
            "config.json",
            "diffusion_pytorch_model.safetensors",
            "diffusion_pytorch_model.fp16.safetensors",
            "diffusion_pytorch_model.bin",
            "diffusion_pytorch_model.fp16.bin",
        }
