"""A song end to end, from its MP3 to the MP4 (python -m benchmarks.speed --song SECONDS; benchmarks/device.py's
headline): on a GPU with the default models' architectures and random weights (the cost does not depend on their
values): Whisper large-v2's aligning the lyrics, ViPE-M's elaborating them, SD 1.5's drawing every frame and
Real-ESRGAN's upscaling them (x4plus, with --fast x4v3: what auto takes); elsewhere with the tiny models. The render
takes the options given (e.g. `--look music-video`, `--fast`) and no batch: the memory plan's for the default models
on this card. librosa's kernels are compiled first, in a process of their own (compile_kernels). Each stage's
seconds and share (the delivery runs beside the drawing: the shares can add up to more than 1), its own peak memory
(sampled) and the run's, the time the GPU waited from the models' first work to their last (prepare's seconds before
it, apart), and the seconds spent building random weights (a real run loads published ones instead). A render that
does not finish within `stop_after` seconds is stopped, and written as such with what it drew."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from functools import cache
from pathlib import Path

import torch

from benchmarks.peaks import MemorySampler, run_peak_gb
from musicvid.core.errors import Cancelled
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
    PRESETS["tiny"],
    asr="large-v2-random",
    vipe="vipe-m-random",
    diffusion=SD15_RANDOM,
    size=(512, 512),
    steps=25,
    guidance=7.5,
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


def upscaler(name: str):
    """A loader of Real-ESRGAN's x4plus (the default upscaler on a GPU) or general x4v3 architecture, as
    musicvid.models.loading loads an upscaler."""

    def load(models: ModelSet, device: torch.device, precision: Precision):
        from spandrel import ModelLoader
        from spandrel.architectures.Compact import Compact
        from spandrel.architectures.ESRGAN import ESRGAN

        torch.manual_seed(0)
        network = (
            ESRGAN(num_filters=64, num_blocks=23, scale=4)
            if name == "x4plus"
            else Compact(num_feat=64, num_conv=32, upscale=4)
        )
        model = ModelLoader().load_from_state_dict(network.state_dict())
        return model.eval().to(device).to(dtype=precision.upscaler(model.supports_half, model.supports_bfloat16))

    return load


FULL_SIZE_LOADERS = {"asr": whisper_large_v2, "vipe": vipe_medium}


def song_registry(full_size: bool, folder: Path, upscaling: str | None = None) -> ModelRegistry:
    """The registry the song is made with: of the default models' architectures (the upscaler auto takes, x4plus and
    with --fast x4v3, or `upscaling`'s for both; --fast's decoder saved in `folder`, published_taesd), or the tiny
    models."""
    if full_size:
        normal, fast = (upscaling, upscaling) if upscaling else ("x4plus", "x4v3")
        loaders = FULL_SIZE_LOADERS | {"upscaler": upscaler(normal), "fast_upscaler": upscaler(fast)}
        models = replace(
            FULL_SIZE,
            auto_upscaler=f"{normal}-random",
            fast_upscaler=f"{fast}-random",
            fast_decoder=published_taesd(folder),
        )
        return ModelRegistry(models, loaders=loaders)
    return ModelRegistry(PRESETS["tiny"])


def published_taesd(folder: Path) -> str:
    """TAESD at its published size (64 channels, 1+3+3+3 blocks) with random weights, saved as a model's folder
    that --fast loads as it loads the published one (the tiny preset's costs a twentieth of its FLOPs)."""
    from diffusers import AutoencoderTiny

    torch.manual_seed(0)
    AutoencoderTiny().save_pretrained(folder / "taesd-random")
    return str(folder / "taesd-random")


def sung_song(folder: Path, seconds: float) -> tuple[Path, list[str], str]:
    """The song, its lines and its voice: sung where espeak-ng can. Whisper runs only where its voice detector hears
    one, so a song of no voice leaves Whisper's cost out of the headline, and says so."""
    from benchmarks.render import synthesize_song

    song = synthesize_song(folder, seconds)
    timed = timed_lines(song.with_suffix(".lrc"))
    if shutil.which("espeak-ng") is None:
        return song, [text for _, text in timed], "none: espeak-ng is not installed, so Whisper aligned nothing"
    from tests.fixtures.songs import make_song

    make_song(song, seconds, timed)
    return song, [text for _, text in timed], "espeak-ng"


def given_song(song: Path) -> tuple[Path, list[str], str]:
    """A song made beforehand with its timed lyrics beside it (song.lrc): `python -m benchmarks.kit` sings the
    headline's where espeak-ng is installed, for a machine that has none."""
    return song, [text for _, text in timed_lines(song.with_suffix(".lrc"))], f"given: {song.name}"


def timed_lines(lrc: Path) -> list[tuple[float, str]]:
    """An LRC's lines, as musicvid reads them: each line's start and text."""
    from musicvid.lyrics.lrc import lrc_stamps

    return [(start, text) for start, text, _ in lrc_stamps(lrc.read_text(encoding="utf-8"), str(lrc))]


def whole_song(
    seconds: float,
    full_size: bool,
    folder: Path,
    given: dict | None = None,
    stop_after: float | None = None,
    upscaling: str | None = None,
    made: Path | None = None,
) -> dict:
    """The pipeline on a song end to end, stage by stage, and where the GPU waited, after librosa's kernels are
    compiled (compile_kernels); stopped `stop_after` seconds after that began; upscaled at full size by the
    architecture auto takes (x4plus, with --fast x4v3), or `upscaling`'s; of `seconds` made here, or the song `made`
    beforehand."""
    from benchmarks.rows import plan_batch
    from musicvid.core.audio import load_audio
    from musicvid.lyrics.align import align_lyrics
    from musicvid.pipeline import make_video
    from musicvid.settings.resolve import resolve_render_settings
    from musicvid.settings.song import SongRequest

    registry = song_registry(full_size, folder, upscaling)
    song, lines, voice = given_song(made) if made else sung_song(folder, seconds)
    began = time.perf_counter()
    compiled = compile_kernels(song)  # (not the song's time: an install's first render's, once)
    left = stop_after and max(stop_after - (time.perf_counter() - began), 1.0)  # (of the run's budget)
    settings = resolve_render_settings(registry.models, given or {})
    if full_size and settings.batch_size is None:  # (the random weights' names are not the plan's to size)
        settings = replace(settings, batch_size=plan_batch(PRESETS["default"], settings, registry.device))
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=folder / "song", quiet=True)
    timings, stop = Timings(), threading.Event()
    row = {"song_seconds": seconds, "voice": voice, "options": given or {}, "batch_size_asked": settings.batch}
    row["kernels_compiled_seconds"] = compiled
    timer = threading.Timer(left, stop.set) if left else None
    started = time.perf_counter()
    with MemorySampler() as memory:
        try:
            if timer:
                timer.start()
            # Whisper aligning the known lines: its cost over the whole song, whatever random weights make of it
            audio = load_audio(song)
            row["song_seconds"] = round(audio.info.duration, 2)
            with registry.use("asr", timings) as asr, timings.measure("align", registry.device):
                align_lyrics(asr, audio.samples, lines, audio.info.sha256, quiet=True)
            # then the rest from the timed lyrics, so that the scenes fall every 3 s as sung
            made = make_video(request, settings, registry, output=folder / "song.mp4", timings=timings, stop=stop)
            row |= {"frames": made.frames, "pictures_drawn": made.pictures_drawn, "video": probed(made.video)}
            row["batch_size"] = made.timings["batch_size"]  # as the render drew, after its memory plan
            # the learned upscaler's GPU work, on its own stream in the delivery's thread: inside "mux", not the models'
            row["upscale"] = made.timings.get("upscale", "none: ffmpeg scaled the frames")
        except Cancelled:
            drawn = sum(1 for _ in (folder / "song").glob("*/*.png"))
            row["did_not_finish"] = f"stopped after {stop_after:.0f} s (the run's budget), {drawn} pictures drawn"
        finally:
            if timer:
                timer.cancel()
    wall = time.perf_counter() - started
    return row | {"upscaler": upscaler_used(timings.models)} | figures(timings, started, wall, memory, registry.device)


@cache
def compile_kernels(song: Path) -> float | str:
    """The seconds a storyboard of `song` took in a process of its own (the tiny models on the CPU, from its timed
    lyrics), which compiled librosa's numba kernels into their cache (musicvid.core.kernels) as an install's first
    render does, once: the song is then timed as every later render runs (a second song of this process takes the
    first's figure). The H200's first song, on a fresh install, read its form in 30.7 s, which takes 1.2 s on two
    cores here once they are compiled (2026-12-04). Where that storyboard fails, why (the song then compiles them
    on its own clock, as before)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="musicvid-kernels-") as folder:
        command = [sys.executable, "-m", "musicvid", "storyboard", str(song), "--models", "tiny", "--device", "cpu"]
        command += ["--lyrics", str(song.with_suffix(".lrc")), "--workdir", folder]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"not compiled beforehand: the storyboard exited {done.returncode} ({said})"
    return round(time.perf_counter() - started, 1)


def upscaler_used(models: dict) -> str:
    """The upscaler the render ran, as its registry read it back: a learned one's name, else none (a model set whose
    upscaler loads no network: ffmpeg's Lanczos scales)."""
    read = models.get("upscaler")
    if read is None:
        return "none loaded (the render stopped before it, or asked for none)"
    return read["name"] if read["dtype"] is not None else f"none: {read['name']} loaded no network (Lanczos)"


def probed(video: Path) -> dict:
    """The MP4's size, rate and length, as its container declares them (no frame decoded)."""
    import av

    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        return {
            "size": [stream.codec_context.width, stream.codec_context.height],
            "fps": float(stream.average_rate),
            "seconds": round(container.duration / av.time_base, 2),
        }


def figures(timings: Timings, started: float, wall: float, memory: MemorySampler, device: torch.device) -> dict:
    """A render's wall time, each stage's seconds, share and own peak memory, the run's peak, and the GPU's use."""
    loading = sum(v for k, v in timings.seconds.items() if k.startswith("load "))
    return {
        "models": timings.models,  # as each stage left its model, read back from the modules
        "wall_seconds": round(wall, 1),
        "random_weights_seconds": round(loading, 1),  # building random weights: a real run loads published ones
        "stages": {k: round(v, 2) for k, v in timings.seconds.items()},
        "share": {k: round(v / wall, 4) for k, v in timings.seconds.items()},
        "stage_peak_gb": memory.stage_peaks(timings, column=2 if device.type == "cuda" else 1),
        "run_peak_gb": run_peak_gb(device),
        **gpu_use(timings, started, wall),
    }


def gpu_use(timings: Timings, started: float, wall: float) -> dict:
    """The share of `wall` (from `started`) the models' stages computed (the upscaler's stream, beside them in the
    delivery's thread, is the row's `upscale`); apart, the seconds before their first work
    (prepare: the song decoded, Whisper built); and the GPU's idle seconds and largest waits from the models' first
    work to their last alone (where nothing could have run on it yet, or is left to)."""
    computed = [(start, end) for stage, start, end in timings.intervals if stage in MODEL_STAGES or stage == "align"]
    busy = sum(end - start for start, end in computed)
    first = min((start for start, _ in computed), default=started + wall)
    last = max((end for _, end in computed), default=first)
    within = [interval for interval in timings.intervals if first <= interval[1] and interval[2] <= last]
    gaps = sorted(
        (
            (round(later[1] - earlier[2], 2), f"{earlier[0]} → {later[0]}")
            for earlier, later in zip(within, within[1:])
            if later[1] - earlier[2] > 0.05
        ),
        reverse=True,
    )
    return {
        "gpu_busy_share": round(busy / wall, 4),
        "prepare_seconds": round(first - started, 1),
        "gpu_idle_seconds": round(last - first - busy, 1),
        "largest_gaps_seconds": gaps[:5],
    }


def song_markdown(song: dict) -> list[str]:
    models = ", ".join(f"{role} {m['name']} in {m['dtype']}" for role, m in song["models"].items())
    options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in song["options"].items()) or "no options"
    out = [f"\n### A {song['song_seconds']:g} s song end to end, {options} ({models})"]
    if "did_not_finish" in song:
        out.append(f"\n**did not finish**: {song['did_not_finish']}")
    out.append("| stage | seconds | share | own peak GB |\n| --- | ---: | ---: | ---: |")
    out += [
        f"| {k} | {v} | {song['share'][k]:.1%} | {song['stage_peak_gb'].get(k, '')} |"
        for k, v in song["stages"].items()
    ]
    out.append(
        f"\nwall {song['wall_seconds']} s ({song['random_weights_seconds']} s of it building random weights) for "
        f"{song.get('frames', '–')} frames; run's peak {song['run_peak_gb']} GB; GPU busy {song['gpu_busy_share']:.1%}, "
        f"idle {song['gpu_idle_seconds']} s after {song['prepare_seconds']} s of prepare; "
        f"largest gaps: {song['largest_gaps_seconds']}; the upscaler's (its own stream, in mux) {song.get('upscale')}"
    )
    return out
