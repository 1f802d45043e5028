"""Pictures that show the lyric, measured: one storyboard rendered once per variant (CSA morphs, plain slerp, and
the best of 4 keyframe candidates), each render scored by `musicvid score`, the report's figures side by side.

    python -m benchmarks.quality SONG --lyrics LYRICS [--models default] [--fps 10] [--out FILE]
    python -m benchmarks.quality SONG --variant "fast=--fast"      # another row: a name and render's options
    python -m benchmarks.quality --quick     # the tiny models on a 4 s band: checks the script, in seconds

The storyboard is made once (`musicvid storyboard`) and every variant renders that file (`--storyboard`), so
the variants differ in their render options alone. Each row gives the mean lyric and prompt scores
(CLIPScore, 0–2.5), the morphs' mean step and largest-step share (how much of a morph's change falls in one
frame: the paper's claim is that CSA morphs more smoothly than plain slerp), the mean distance of the
pictures' changes from the song's onsets (and from evenly spread times, for scale) and the scenes' mean
offset from their transcript lines (musicvid.review.score). A render with random weights (the tiny preset, or
the tiny scorer) is labelled a check of the mechanics: its pictures are noise and its scores say nothing
of quality.

A second table sets the keyframe picks side by side: csa draws one candidate a scene (the default), "4
candidates" the best of 4 by the scorer, the storyboard and every other option the same. Each row gives the
kept keyframes' mean lyric and prompt scores, the candidates drawn (timings.json), their seconds (the drawing
stages' seconds shared out by the pictures denoised, every picture being as many steps, and the scoring's) and
their TFLOP: the candidates drawn times one picture's steps (the UNet on the picture and, with guidance, its
unguided twin) and decode, counted by torch on the meta device from the model's config as the memory plan
builds it (musicvid.models.sizes; benchmarks/transition_flops.py counts the same way). An estimate to compare by.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

import torch

from benchmarks.against_whole import against_whole
from benchmarks.transition_flops import rounded, tflop
from musicvid.cli import build_parser, render_settings
from musicvid.cli import main as musicvid
from musicvid.memory.activations import TEXT_TOKENS, transformer_call
from musicvid.memory.pictures import twins
from musicvid.models import sizes
from musicvid.models.choose import choose_models
from musicvid.models.families import diffusion_family
from musicvid.models.registry import ModelRegistry
from musicvid.review.score import RANDOM_WEIGHTS, score_render
from musicvid.settings.presets import (
    FLOW_FAMILIES,
    SD15_RANDOM,
    SDXL_RANDOM,
    TINY,
    TINY_KLEIN,
    TINY_XL,
    TINY_ZIMAGE,
    ModelSet,
)
from musicvid.settings.render import RenderSettings
from tests.fixtures.songs import band, write_song
from vipe_core.atomic import write_text

RANDOM_MODELS = (TINY, TINY_XL, TINY_ZIMAGE, TINY_KLEIN, SD15_RANDOM, SDXL_RANDOM)
QUICK_SECONDS, QUICK_FPS = 4.0, 5.0
QUICK_LYRICS = "[00:00.80]the sky is burning\n[00:02.00]rivers made of glass\n[00:03.20]\n"


@dataclass(frozen=True)
class Variant:
    """One row: a name and the render options that make it."""

    name: str
    options: tuple[str, ...] = ()

    @property
    def folder(self) -> str:
        """Its work directory's name in the benchmark's folder."""
        return self.name.replace(" ", "-")


VARIANTS = (
    Variant("csa"),  # Chunked Similarity Alignment, the default: one keyframe candidate a scene
    Variant("slerp", ("--no-align",)),
    Variant("4 candidates", ("--keyframe-candidates", "4")),  # csa's, each keyframe the best of 4
)
COLUMNS = {
    "lyric": "lyric",
    "prompt": "prompt",
    "mean_step": "mean step",
    "largest_step_share": "largest step",
    "onset_seconds": "onset s",
    "chance_onset_seconds": "chance s",
    "lyric_offset_seconds": "offset s",
}


def parse_variant(text: str) -> Variant:
    name, _, options = text.partition("=")
    if not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=OPTIONS, e.g. 'fast=--fast'")
    return Variant(name.strip(), tuple(shlex.split(options)))


def variant_problem(variants: tuple[Variant, ...]) -> str | None:
    """Why these rows cannot each render into a folder of their own, in a sentence; None where they can."""
    folders: dict[str, str] = {}
    for variant in variants:
        folder = variant.folder
        if "/" in folder or "\\" in folder or folder.startswith(".") or folder == "storyboard":
            return f"--variant {variant.name!r}: a row's name is its folder's, so no '/', leading '.' or 'storyboard'"
        if folder in folders:
            return f"--variant {variant.name!r} renders into the same folder as {folders[folder]!r}: name it apart"
        folders[folder] = variant.name
    return None


def random_weights(models: ModelSet) -> bool:
    return models.diffusion in RANDOM_MODELS or models.scorer == TINY


def run(musicvid_args: list) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # its tables and paths; the benchmark prints its own
        code = musicvid([str(a) for a in musicvid_args])
    if code != 0:
        raise SystemExit(f"musicvid {musicvid_args[0]} failed (exit {code})")


def tflop_per_candidate(models: ModelSet, settings: RenderSettings) -> float:
    """One keyframe candidate's TFLOP: its steps of the UNet or a flow-matching family's transformer (on the picture
    and, where guidance is on, its unguided twin, as diffusers batches them) and its decode (TAESD's with --fast),
    counted on the meta device."""
    kind, name = ("fast_decoder", models.fast_decoder) if settings.fast else ("diffusion", models.diffusion)
    decoder = sizes.part_in(kind, name, "vae", torch.float32)
    family = diffusion_family(models.diffusion)
    batch = twins(family, settings.guidance)
    if family in FLOW_FAMILIES:
        _, step = transformer_call(models.diffusion, torch.float32, tuple(settings.size), batch)
        with torch.device("meta"):
            latent = (decoder.config.latent_channels, settings.height // 8, settings.width // 8)
            return settings.steps * tflop(step) + tflop(lambda: decoder.decode(torch.empty(1, *latent)))
    unet = sizes.part_in("diffusion", models.diffusion, "unet", torch.float32)
    xl = unet.config.addition_embed_type == "text_time"  # SDXL: conditioned on the pooled text and six sizes
    pooled = unet.config.projection_class_embeddings_input_dim - 6 * unet.config.addition_time_embed_dim if xl else 0
    latent = (unet.config.in_channels, settings.height // 8, settings.width // 8)
    with torch.device("meta"):
        text = torch.empty(batch, TEXT_TOKENS, unet.config.cross_attention_dim)
        extra = {"text_embeds": torch.empty(batch, pooled), "time_ids": torch.empty(batch, 6)} if xl else None
        step = tflop(
            lambda: unet(torch.empty(batch, *latent), torch.full((batch,), 500), text, added_cond_kwargs=extra)
        )
        decode = tflop(lambda: decoder.decode(torch.empty(1, *latent)))
    return settings.steps * step + decode


def pick_figures(workdir: Path, report: dict, per_candidate: float) -> dict:
    """What a render's keyframe picks cost, from its timings.json: the candidates drawn, their seconds (the
    drawing stages' shared out by the pictures denoised, and the scoring's), their TFLOP."""
    timings = json.loads((workdir / "timings.json").read_text(encoding="utf-8"))
    seconds, drawn = timings["seconds"], timings.get("keyframe_candidates_drawn", 0)
    # every picture denoised: the candidates, and the frames between (each picked scene's keyframe is a candidate)
    picked = sum("pick" in row for row in report["scenes"])
    pictures = drawn + timings["pictures_drawn"] - picked
    drawing = seconds.get("denoise", 0.0) + seconds.get("decode", 0.0)
    share = drawing * drawn / pictures if pictures else 0.0
    return {
        "candidates_drawn": drawn,
        "pictures_denoised": pictures,
        "seconds": round(share + seconds.get("score keyframes", 0.0), 3),
        "scoring_seconds": round(seconds.get("score keyframes", 0.0), 3),
        "tflop_per_candidate": rounded(per_candidate),
        "tflop": rounded(drawn * per_candidate),
    }


def compare(
    song: Path, lyrics: Path | None, folder: Path, variants: tuple[Variant, ...], preset: str, fps: float, device: str
) -> dict:
    """Each variant rendered from one storyboard into `folder` and scored; the figures by variant."""
    common = ["--models", preset, "--device", device, "-q", *(["--lyrics", lyrics] if lyrics else [])]
    run(["storyboard", song, "--workdir", folder / "storyboard", *common])
    models = choose_models(preset)
    registry = ModelRegistry(models, device, keep_loaded=True)  # one scorer for every row
    rows = {}
    for variant in variants:
        workdir, started = folder / variant.folder, time.perf_counter()
        storyboard = folder / "storyboard" / "storyboard.json"
        video = ["-o", workdir.with_suffix(".mp4"), "--storyboard", storyboard, "--workdir", workdir, "--fps", fps]
        argv = [str(a) for a in ["render", song, *video, *common, *variant.options]]
        run(argv)
        render_seconds = time.perf_counter() - started
        report = score_render(workdir, registry)  # at the rate its timings.json records
        settings = render_settings(build_parser().parse_args(argv))[0]  # as the render resolved them
        rows[variant.name] = {"options": list(variant.options), "render_seconds": round(render_seconds, 1)}
        rows[variant.name] |= {"summary": report["summary"], "smoothness": report["smoothness"]}
        picks = pick_figures(workdir, report, tflop_per_candidate(models, settings))
        rows[variant.name]["picks"] = {"candidates": settings.keyframe_candidates, **picks}
        if variant != variants[0]:  # (the first, csa, draws every frame whole: the others are set beside it)
            with registry.use("scorer") as scorer:
                rows[variant.name]["against_whole"] = against_whole(folder / variants[0].folder, workdir, scorer)
    result = {"song": str(song), "models": preset, "scorer": models.scorer, "fps": fps, "variants": rows}
    return result | ({"note": RANDOM_WEIGHTS} if random_weights(models) else {})


def whole_cells(figures: dict) -> str:
    """A row of the table against the pictures drawn whole: its figures, or why there are none."""
    if "not_comparable" in figures:
        return f"{figures['not_comparable']} | | | |"
    if not figures["pictures"]:
        return "0 | | | |"
    shown = [("same" if figures[key] is None else f"{figures[key]:.2f}") for key in ("psnr_db", "worst_psnr_db")]
    return f"{figures['pictures']} | {' | '.join(shown)} | {figures['clip_image']:.4f} | {figures['lowest_clip_image']:.4f}"


def table(result: dict) -> str:
    def cell(value) -> str:
        return "–" if value is None else f"{value:.4f}"

    lines = [f"| variant | {' | '.join(COLUMNS.values())} |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, row in result["variants"].items():
        lines.append(f"| {name} | {' | '.join(cell(row['summary'][key]) for key in COLUMNS)} |")
    lines += ["", "Keyframe picks (the kept keyframes' scores; what drawing and scoring the candidates cost):", ""]
    lines += ["| variant | candidates | lyric | prompt | drawn | seconds | TFLOP |", "|---" * 7 + "|"]
    for name, row in result["variants"].items():
        picks, figures = row["picks"], row["summary"]
        lines.append(
            f"| {name} | {picks['candidates']} | {cell(figures['lyric'])} | {cell(figures['prompt'])} | "
            f"{picks['candidates_drawn']} | {picks['seconds']:.2f} | {picks['tflop']:.4g} |"
        )
    lines += [
        "",
        f"Against {next(iter(result['variants']))}'s pictures, drawn whole (benchmarks/against_whole.py):",
        "",
    ]
    lines += ["| variant | pictures | PSNR dB | worst dB | CLIP image | lowest |", "|---" * 6 + "|"]
    for name, row in result["variants"].items():
        for kind, figures in row.get("against_whole", {}).items():
            lines.append(f"| {name}: {kind} | {whole_cells(figures)} |")
    if "note" in result:
        lines.append(f"\n{result['note'].capitalize()}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__.splitlines()[0])
    parser.add_argument("song", type=Path, nargs="?", help="the song (not with --quick)")
    parser.add_argument("--lyrics", type=Path, help="its lyrics, as render takes them (else Whisper hears them)")
    parser.add_argument("--models", default="default", help="model preset (tiny: a check of the mechanics)")
    parser.add_argument("--fps", type=float, default=10.0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--variant", type=parse_variant, action="append", default=[], help="NAME=OPTIONS: a row")
    parser.add_argument("--keep", type=Path, help="render into this folder and keep it (default: a temporary one)")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    parser.add_argument("--quick", action="store_true", help="the tiny models on a 4 s band: for the test suite")
    args = parser.parse_args(argv)
    if args.quick == (args.song is not None):
        parser.error("give a SONG, or --quick")
    variants = VARIANTS + tuple(args.variant)
    if problem := variant_problem(variants):
        parser.error(problem)
    if args.keep and args.keep.exists() and not (args.keep.is_dir() and not any(args.keep.iterdir())):
        parser.error(f"--keep {args.keep} is not an empty folder: give a new or empty one, as the renders fill it")
    with TemporaryDirectory(prefix="musicvid-quality-") as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        song, lyrics, preset, fps = args.song, args.lyrics, args.models, args.fps
        if args.quick:
            song = write_song(folder / "song.wav", band(QUICK_SECONDS), [], 0.0)
            lyrics, preset, fps = folder / "song.lrc", "tiny", QUICK_FPS
            lyrics.write_text(QUICK_LYRICS, encoding="utf-8")
        result = compare(song, lyrics, folder, variants, preset, fps, args.device)
    if args.out:
        write_text(args.out, json.dumps(result, indent=2, allow_nan=False) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
