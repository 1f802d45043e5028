"""Pictures that show the lyric, measured: one storyboard rendered once per variant (CSA morphs and plain slerp),
each render scored by `musicvid score`, the report's figures side by side.

    python -m benchmarks.quality SONG --lyrics LYRICS [--models default] [--fps 10] [--out FILE]
    python -m benchmarks.quality SONG --variant "fast=--fast"      # another row: a name and render's options
    python -m benchmarks.quality --quick     # the tiny models on a 4 s band: checks the script, in seconds

The storyboard is made once (`musicvid storyboard`) and every variant renders that file (`--storyboard`), so
the variants differ in their render options alone. Each row gives the mean lyric and prompt scores
(CLIPScore, 0–2.5), the morphs' mean step and largest-step share (how much of a morph's change falls in one
frame: the paper's claim is that CSA morphs more smoothly than plain slerp), the mean distance of the
pictures' changes from the song's onsets (and from evenly spread times, for scale) and the scenes' mean
offset from their transcript lines (musicvid.quality). A render with random weights (the tiny preset, or
the tiny scorer) is labelled a check of the mechanics: its pictures are noise and its scores say nothing
of quality.
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

from benchmarks.songs import band, write_song
from musicvid.cli import main as musicvid
from musicvid.models.choose import choose_models
from musicvid.models.presets import SD15_RANDOM, SDXL_RANDOM, TINY, TINY_XL, ModelSet
from musicvid.models.registry import ModelRegistry
from musicvid.quality import RANDOM_WEIGHTS, score_render

RANDOM_MODELS = (TINY, TINY_XL, SD15_RANDOM, SDXL_RANDOM)
QUICK_SECONDS, QUICK_FPS = 4.0, 5.0
QUICK_LYRICS = "[00:00.80]the sky is burning\n[00:02.00]rivers made of glass\n[00:03.20]\n"


@dataclass(frozen=True)
class Variant:
    """One row: a name and the render options that make it."""

    name: str
    options: tuple[str, ...] = ()


VARIANTS = (
    Variant("csa"),  # Chunked Similarity Alignment, the default
    Variant("slerp", ("--no-align",)),
)  # best-of-N's rows join these once render takes --keyframe-candidates (issue 44); --variant adds any now
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


def random_weights(models: ModelSet) -> bool:
    return models.diffusion in RANDOM_MODELS or models.scorer == TINY


def run(musicvid_args: list) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # its tables and paths; the benchmark prints its own
        code = musicvid([str(a) for a in musicvid_args])
    if code != 0:
        raise SystemExit(f"musicvid {musicvid_args[0]} failed (exit {code})")


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
        workdir, started = folder / variant.name.replace(" ", "-"), time.perf_counter()
        storyboard = folder / "storyboard" / "storyboard.json"
        video = ["-o", workdir / "video.mp4", "--storyboard", storyboard, "--workdir", workdir, "--fps", fps]
        run(["render", song, *video, *common, *variant.options])
        render_seconds = time.perf_counter() - started
        report = score_render(workdir, registry, fps)
        rows[variant.name] = {"options": list(variant.options), "render_seconds": round(render_seconds, 1)}
        rows[variant.name] |= {"summary": report["summary"], "smoothness": report["smoothness"]}
    result = {"song": str(song), "models": preset, "scorer": models.scorer, "fps": fps, "variants": rows}
    return result | ({"note": RANDOM_WEIGHTS} if random_weights(models) else {})


def table(result: dict) -> str:
    def cell(value) -> str:
        return "–" if value is None else f"{value:.4f}"

    lines = [f"| variant | {' | '.join(COLUMNS.values())} |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, row in result["variants"].items():
        lines.append(f"| {name} | {' | '.join(cell(row['summary'][key]) for key in COLUMNS)} |")
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
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
