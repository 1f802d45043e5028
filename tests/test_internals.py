"""Library internals: public APIs only, but for musicvid.models.internals, which names each private it touches;
and a kept-loaded pipeline that one job offloaded serves the next job, which did not ask for it, unhooked on its
device."""

import re
from pathlib import Path

import numpy as np
import torch

from musicvid.models.internals import has_offload_hooks
from musicvid.models.timing import Timings
from musicvid.models.tiny import local_diffusion, tiny_ltx_video
from musicvid.pictures import job as job_module
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.job import compute_device, job_pipeline
from musicvid.pictures.plan import Picture
from musicvid.pictures.render import draw
from musicvid.pictures.transitions import video_job
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard

ROOT = Path(__file__).resolve().parents[1]
# A library's private names as musicvid's code would reach them: attributes (read, or named as strings), the
# private keyword of a public call, private modules, and private names imported
ATTRIBUTES = (
    "forward_hooks|forward_pre_hooks|backward_hooks|orig_mod|hf_hook|old_forward|execution_device|all_hooks"
    "|offload_device|offload_gpu_id|exclude_from_cpu_offload"
)
PRIVATE = re.compile(
    rf"[.'\"]_({ATTRIBUTES})\b|(?<!\w)_pipeline=|torch\._(dynamo|inductor|C)\b|torch\.utils\._"
    r"|from [\w.]+ import (\(\s*)?_[a-z]|import [\w.]*\._[a-z]"
)


def test_no_private_of_a_library_is_reached_for_outside_internals():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in ("musicvid", "ui", "vipe_core", "benchmarks")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "musicvid" / "models" / "internals.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert not found, "a library's private outside musicvid/models/internals.py:\n" + "\n".join(found)


def modules(pipe) -> dict[str, torch.nn.Module]:
    return {name: m for name, m in pipe.components.items() if isinstance(m, torch.nn.Module)}


def pictures(pipe, settings: RenderSettings) -> np.ndarray:
    scenes = [
        Scene(index=i, kind="lyric", start=float(i), end=i + 1.0, text="", prompt=prompt, seed=10 + i)
        for i, prompt in enumerate(["a red sky over the city", "blue water under a bridge"])
    ]
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    job = job_pipeline(pipe, settings)
    group = [Picture(path=None, key="", scene=0, target=1, t=t) for t in (0.0, 0.5)]
    return draw(job, SceneInputs(job, board, [0, 1], settings), group, settings, Timings())


def test_a_job_that_asks_for_no_offloading_gets_a_kept_pipeline_back_unhooked(monkeypatch):
    # offloading "from" the CPU: accelerate's hooks as on CUDA, moving the weights between the CPU and itself
    monkeypatch.setattr(job_module, "OFFLOADED_FROM", frozenset({"cpu"}))
    plain = RenderSettings(size=(64, 64), steps=2)
    kept = local_diffusion()
    first = pictures(kept, RenderSettings(size=(64, 64), steps=2, low_vram=True))  # model offload, slicing
    assert all(has_offload_hooks(m) for m in modules(kept).values())  # the first job ran offloaded
    assert kept.vae.use_slicing
    second = pictures(kept, plain)
    for name, module in modules(kept).items():
        assert not has_offload_hooks(module), name
        assert {p.device.type for p in module.parameters()} == {"cpu"}, name
    assert compute_device(kept).type == "cpu"
    assert not kept.vae.use_slicing and not kept.vae.use_tiling
    assert not any("Sliced" in type(p).__name__ for p in kept.unet.attn_processors.values())
    assert np.array_equal(second, pictures(local_diffusion(), plain))  # as a fresh pipeline draws them
    # offloading moves the weights and changes no picture (the first job's sliced attention rounds otherwise)
    assert np.abs(first.astype(int) - second).max() <= 1


def test_sequential_offloading_comes_off_with_its_weights_back(monkeypatch):
    monkeypatch.setattr(job_module, "OFFLOADED_FROM", frozenset({"cpu"}))
    kept, fresh = local_diffusion(), local_diffusion()
    job_pipeline(kept, RenderSettings(), ("sequential-offload",))
    assert {p.device.type for p in kept.unet.parameters()} == {"meta"}  # each layer's weights wait in the hook
    job_pipeline(kept, RenderSettings())
    assert not any(has_offload_hooks(m) for m in modules(kept).values())
    assert {p.device.type for m in modules(kept).values() for p in m.parameters()} == {"cpu"}
    for name, module in modules(kept).items():
        assert all(
            torch.equal(a, b) for a, b in zip(module.state_dict().values(), modules(fresh)[name].state_dict().values())
        )


def test_a_video_job_without_offloading_gets_the_kept_video_pipeline_unhooked(monkeypatch):
    monkeypatch.setattr(job_module, "OFFLOADED_FROM", frozenset({"cpu"}))
    kept = tiny_ltx_video()
    video_job(kept, RenderSettings(low_vram=True))
    assert has_offload_hooks(kept.transformer) and kept.vae.use_tiling
    video_job(kept, RenderSettings())
    assert not any(has_offload_hooks(m) for m in modules(kept).values()) and not kept.vae.use_tiling
    assert {p.device.type for m in modules(kept).values() for p in m.parameters()} == {"cpu"}
