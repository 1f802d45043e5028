"""A song end to end (python -m benchmarks.speed --song SECONDS): on a GPU with the default models'
architectures and random weights (the cost does not depend on their values): Whisper large-v2's aligning
the lyrics, ViPE-M's elaborating them and SD 1.5's drawing every frame; elsewhere with the tiny models.
Each stage's share, and the time the GPU waited between stages."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import torch

from musicvid.models.loading import ASRModel
from musicvid.models.precision import Precision, half_whisper
from musicvid.models.published import WHISPER_LARGE_V2
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import MODEL_STAGES, Timings
from musicvid.models.tiny import random_whisper
from musicvid.settings.presets import PRESETS, SD15_RANDOM, ModelSet
from vipe_core.inference import ViPE

# The default models' architectures, named for the report as what they are (built by FULL_SIZE_LOADERS)
FULL_SIZE = replace(
    PRESETS["tiny"], asr="large-v2-random", vipe="vipe-m-random", diffusion=SD15_RANDOM, size=(512, 512), steps=25
)


def whisper_large_v2(models: ModelSet, device: torch.device, precision: Precision) -> ASRModel:
    """openai-whisper of large-v2's architecture, in half precision where the run's says so (as load_asr)."""
    model = random_whisper(**WHISPER_LARGE_V2).to(device)
    if precision.asr == torch.float16:
        half_whisper(model)
    # one temperature: random weights fail Whisper's checks at every one, where real ones mostly pass the first
    return ASRModel(models.asr_backend, models.asr, model, (0.0,))


def vipe_medium(models: ModelSet, device: torch.device, precision: Precision) -> ViPE:
    """ViPE of ViPE-M's architecture (GPT-2 Medium's) and GPT-2's vocabulary, in the run's precision."""
    from benchmarks.elaborate import MEDIUM, load

    vipe = load(MEDIUM, device)
    vipe.model.to(device, precision.compute)
    return vipe


FULL_SIZE_LOADERS = {"asr": whisper_large_v2, "vipe": vipe_medium}


def song_registry(full_size: bool) -> ModelRegistry:
    """The registry the song is made with: of the default models' architectures, or the tiny models."""
    if full_size:
        return ModelRegistry(FULL_SIZE, loaders=FULL_SIZE_LOADERS)
    return ModelRegistry(PRESETS["tiny"])


def whole_song(seconds: float, full_size: bool, folder: Path) -> dict:
    """The pipeline on a song end to end, stage by stage, and where the GPU waited."""
    from benchmarks.render import synthesize_song
    from musicvid.core.audio import load_audio
    from musicvid.lyrics.align import align_lyrics
    from musicvid.pipeline import make_video
    from musicvid.settings.render import resolve_render_settings
    from musicvid.settings.song import SongRequest

    registry = song_registry(full_size)
    song = synthesize_song(folder, seconds)
    timed = [line.removeprefix("[").split("]", 1) for line in song.with_suffix(".lrc").read_text().splitlines()]
    lines = [text for _, text in timed]
    # Whisper runs only where its voice detector hears a voice: sing the lines where espeak-ng can
    voiced = shutil.which("espeak-ng") is not None
    if voiced:
        from tests.fixtures.songs import make_song

        sung = [(int(t[:2]) * 60 + float(t[3:]), text) for t, text in timed]
        make_song(song, seconds, sung)
    timings = Timings()
    # Whisper aligning the known lines: its cost over the whole song, whatever random weights make of it
    audio = load_audio(song)
    with registry.use("asr", timings) as asr, timings.measure("align", registry.device):
        align_lyrics(asr, audio.samples, lines, audio.info.sha256, quiet=True)
    # then the rest from the timed lyrics, so that the scenes fall every 3 s as sung
    settings = resolve_render_settings(registry.models, {"batch_size": 8})
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=folder / "song", quiet=True)
    started = time.perf_counter()
    made = make_video(request, settings, registry, output=folder / "song.mp4", timings=timings)
    wall = time.perf_counter() - started + timings.seconds["align"] + timings.seconds.get("load asr", 0.0)
    return {
        "song_seconds": seconds,
        "models": timings.models,  # as each stage left its model, read back from the modules
        "sung": voiced,  # without a voice Whisper's stage is its voice detector alone
        "frames": made.frames,
        "pictures_drawn": made.pictures_drawn,
        "wall_seconds": round(wall, 1),
        "stages": {k: round(v, 2) for k, v in timings.seconds.items()},
        "peak_memory_gb": timings.peak_gb,
        "share": {k: round(v / wall, 4) for k, v in timings.seconds.items()},
        **gpu_use(timings, wall),
    }


def gpu_use(timings: Timings, wall: float) -> dict:
    """The share of `wall` the models computed, and the largest waits between stages."""
    busy = sum(end - start for stage, start, end in timings.intervals if stage in MODEL_STAGES or stage == "align")
    gaps = sorted(
        (
            (round(later[1] - earlier[2], 2), f"{earlier[0]} → {later[0]}")
            for earlier, later in zip(timings.intervals, timings.intervals[1:])
            if later[1] - earlier[2] > 0.05
        ),
        reverse=True,
    )
    return {
        "gpu_busy_share": round(busy / wall, 4),
        "gpu_idle_seconds": round(wall - busy, 1),
        "largest_gaps_seconds": gaps[:5],
    }


def song_markdown(song: dict) -> list[str]:
    models = ", ".join(f"{role} {m['name']} in {m['dtype']}" for role, m in song["models"].items())
    out = [f"\n### A {song['song_seconds']:g} s song end to end ({models})"]
    out.append("| stage | seconds | share |\n| --- | ---: | ---: |")
    out += [f"| {k} | {v} | {song['share'][k]:.1%} |" for k, v in song["stages"].items()]
    out.append(
        f"\nwall {song['wall_seconds']} s for {song['frames']} frames; GPU busy {song['gpu_busy_share']:.1%}, "
        f"idle {song['gpu_idle_seconds']} s; largest gaps: {song['largest_gaps_seconds']}"
    )
    return out
