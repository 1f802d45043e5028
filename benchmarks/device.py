"""One command that measures a GPU, at full size with random weights (the cost does not depend on the weights'
values), in one run, with its checks printed at the end, so that a session with a GPU measures it all at once.

    python -m benchmarks.device                 # on a GPU: the sections below, within a budget of 8 minutes
    python -m benchmarks.device --only sd15 song-fast
    python -m benchmarks.device --dry-run       # on the CPU with the tiny models: runs every row and section

Sections, in this order (on a GPU, within the run's --budget, 480 s, so that one call of the device tool, 600 s, holds
it: a song with fewer than 150 s left, sd15 with fewer than 120 s, or another section past the budget, is written as
skipped, and a song that would run past it is stopped and written as not finished; benchmarks/budget.py; a dry run
has no budget):
  song-fast  the headline, first, since it must finish to say anything: a 3-minute song (generated, so it runs
             offline) from its MP3 to the MP4 with `--look music-video --fast` (1080p, 30 fps, karaoke), Whisper
             large-v2's, ViPE-M's, SD 1.5's, TAESD's and Real-ESRGAN general x4v3's architectures (the upscaler auto
             takes with --fast; --song-upscaler x4plus: x4plus's; --song-compile: with --compile): wall time and
             each stage's share
             (benchmarks/whole_song.py)
  delivery   the learned upscalers' seconds a 1080p frame (x4plus and x4v3: auto's without and with --fast), given
             their published weights their PSNR beside Lanczos's, and a PNG's write and read (what handing frames
             over saves)
  sd15       SD 1.5's architecture at 512², 25 steps, float16: the rows of benchmarks/levers.py (DEVICE_ROWS), each
             in its steady state (benchmarks/steady.py), the baseline first and last, the baseline, --compile and
             --fast rows profiled; the versions that decide the kernels, the GPU's clocks at the start and the end;
             on a GPU, a row expected to end past the budget with the baseline drawn again is skipped
  quality    benchmarks/quality.py's scores of the rows that change pictures (--deep-cache, --deep-share, --fast)
             beside the render as it is, with the tiny models (random weights: a check of the mechanics, not of
             quality)
  song-25    the headline's song at SD 1.5's 25 steps (where the budget leaves it time)
and on request (--only): sdxl (its baseline and batch rows at 1024²), pictures (Z-Image and FLUX.2 klein
keyframes), video (one transition per video model), measured on 2026-11-26 and left out of the default run.

Writes benchmarks/results/gpu-<device>-<date>.json (with the time added where that file exists: an earlier run's
is never replaced) or --out, through a temporary renamed onto it at each write: every planned section first, as not
started (a run killed shows what it did not reach), then each section as running before it starts, its figures as
they come, and when it ends its seconds (with its error where it fails, beside the figures it had written). A run
where a section failed exits 1, naming it. torch.compile's work is kept in --compile-cache (TORCHINDUCTOR_CACHE_DIR),
and with --compile-artifacts loaded from and saved to one file (torch.compiler's mega-cache), which a later machine
can be given so that its compile rows start warm.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import torch

from benchmarks import families
from benchmarks.budget import COLD_COMPILE, SECTION_ROOM, WARM_COMPILE, RowBudget
from benchmarks.delivery import UPSCALERS, upscaling
from benchmarks.device_checks import checks, planned, png_round_trip
from benchmarks.what_ran import machine, versions
from musicvid.core.errors import UserError, either
from vipe_core.atomic import atomic_path, new_temporary, write_json

HERE = Path(__file__).parent
# The rows the goals read first (--fast's 30 frames/s, deep-cache's 10), then the other eager ones, then the compiled
# ones, each minutes of compiling where the cache is cold (benchmarks/budget.py starts none it has no time for)
DEVICE_ROWS = (
    "fast",
    "deep-cache-3",
    "deep-share-2-cache-3",
    "deep-share-2",
    "batch-1",
    "attention-unet-flash",
    "fast-compile-32",
    "compile",
    "compile-deep-cache-3",
    "compile-deep-share-2-cache-3",
    "compile-autotune",
)
SONG_SECONDS, DRY_SONG_SECONDS = 180.0, 6.0
# (named as the rows they score: benchmarks.device_checks.quality_beside)
QUALITY_VARIANTS = (
    "deep-cache-3=--deep-cache 3",
    "deep-share-2=--deep-share 2",
    "deep-share-2-cache-3=--deep-share 2 --deep-cache 3",
    "fast=--fast",
)


def sd15(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.speed import drawing_rows

    compiled = COLD_COMPILE if args.compile_cold else WARM_COMPILE
    budget = None if args.budget is None else RowBudget(args.started + args.budget, compiled)
    return drawing_rows(False, list(args.rows), args.dry_run, args.groups, write, budget)


def sdxl(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.speed import drawing_rows

    return drawing_rows(True, ["batch-8"], args.dry_run, args.groups, write)


def pictures(args, write: Callable[[dict], None]) -> dict:
    rows = {
        family: families.keyframes(family, args.device, torch.bfloat16, args.dry_run)
        for family in families.PICTURE_FAMILIES
    }
    rows["text_encoders"] = families.text_encoders(args.device, torch.bfloat16, args.dry_run)
    return rows


def video(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.transitions import timed_transition

    # LTX-Video 0.9.5, as --transitions video draws today: a 3 s morph (a 33-frame clip), 40 steps
    rows = {"ltx-video-0.9.5": timed_transition(args.dry_run, False, 1, 704, 384, 33)}
    for family in families.VIDEO_FAMILIES:
        rows[family] = families.clip(family, args.device, torch.bfloat16, args.dry_run)
    return rows


def delivery(args, write: Callable[[dict], None]) -> dict:
    options = SimpleNamespace(quick=args.dry_run, repeats=1 if args.dry_run else 3, weights=args.upscaler_weights)
    return {"upscaling": upscaling(options), "png": png_round_trip()}


def song(args, given: dict) -> dict:
    """The headline: a song from its MP3 to the MP4, stopped where it would run past the run's budget."""
    from benchmarks.whole_song import whole_song

    left = None if args.dry_run else max(args.budget - (time.perf_counter() - args.started), 1.0)
    with tempfile.TemporaryDirectory(prefix="musicvid-device-") as folder:
        seconds = DRY_SONG_SECONDS if args.dry_run else SONG_SECONDS
        row = whole_song(seconds, not args.dry_run, Path(folder), given, left, args.song_upscaler, args.song)
    return row | {"memory_plan": planned(given)}


def quality(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.quality import QUICK_FPS, QUICK_LYRICS, QUICK_SECONDS, VARIANTS, compare, parse_variant
    from tests.fixtures.songs import band, write_song

    with tempfile.TemporaryDirectory(prefix="musicvid-quality-") as temporary:
        folder = Path(temporary)
        song = write_song(folder / "song.wav", band(QUICK_SECONDS), [], 0.0)
        (folder / "song.lrc").write_text(QUICK_LYRICS, encoding="utf-8")
        variants = (VARIANTS[0], *(parse_variant(text) for text in QUALITY_VARIANTS))
        device = "cpu" if args.dry_run else "cuda"
        return compare(song, folder / "song.lrc", folder, variants, "tiny", QUICK_FPS, device)


# Each section takes the run's options and `write`, which records the figures it has so far (sd15's and sdxl's rows
# as they come, so that a run cut short, or a section that fails, keeps them).
SECTIONS = {
    "sd15": sd15,
    "delivery": delivery,
    "song-fast": lambda args, write: song(args, {"look": "music-video", "fast": True, **args.song_options}),
    "song-25": lambda args, write: song(args, {"look": "music-video", **args.song_options}),
    "quality": quality,
    "sdxl": sdxl,
    "pictures": pictures,
    "video": video,
}
# The headline first (it must finish to say anything), the upscalers' cost (seconds), then the rows in what is left
DEFAULT = ("song-fast", "delivery", "sd15", "quality", "song-25")


BUDGET = 480.0  # seconds: a GPU run's, unless --budget (the call's 600, less unpacking, imports and a song's overrun)
RUNNING, CUT_SHORT = "running", "started, not finished: the run was cut short here"


def results_file(device_name: str) -> Path:
    """benchmarks/results/gpu-<device>-<date>.json, with the time added where an earlier run wrote that name."""
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    now = datetime.datetime.now()
    day, clock = f"{now:%Y-%m-%d}", f"{now:%H%M%S}"
    suffixes = itertools.chain(("", f"-{clock}"), (f"-{clock}-{n}" for n in itertools.count(2)))
    return next(path for end in suffixes if not (path := HERE / "results" / f"gpu-{slug}-{day}{end}.json").exists())


def previous_results(path: Path) -> bool:
    """Whether `path` holds a results file of this benchmark's, which --out may name to have it replaced."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(report, dict) and {"machine", "dry_run", "sections"} <= set(report)


def readable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.R_OK)


def writable(parser: argparse.ArgumentParser, flag: str, path: Path) -> None:
    """Refused unless `path` is no folder and a file can be written beside it (its folder made where missing)."""
    if path.is_dir():
        parser.error(f"{flag} {path} is a folder: name a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        new_temporary(path).unlink()
    except OSError as error:
        parser.error(f"{flag} {path} cannot be written ({error.strerror or error})")


def out_file(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path:
    """--out, a new file or an earlier results file; else a new name: in benchmarks/results on a GPU, a fresh
    temporary file on a dry run (whose figures are no measurement)."""
    if args.out is None and args.dry_run:
        handle, name = tempfile.mkstemp(prefix="musicvid-gpu-dry-run-", suffix=".json")
        os.close(handle)
        return Path(name)
    out = args.out or results_file(torch.cuda.get_device_name(0))
    writable(parser, "--out", out)
    if out.exists() and not previous_results(out):
        parser.error(f"--out {out} is a file this benchmark did not write, and is left as it is: name another")
    return out


def upscaler_weights(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, str]:
    """--upscaler-weights' NAME=FILE pairs: each NAME an upscaler's, once, and FILE a file that can be read."""
    names = [name for name, _ in UPSCALERS]
    weights: dict[str, str] = {}
    for item in items:
        name, given, file = item.partition("=")
        if not given or name not in names or name in weights:
            parser.error(f"--upscaler-weights {item}: give NAME=FILE, NAME {either(names)}, each once")
        if not readable(Path(file)):
            parser.error(f"--upscaler-weights {item}: {file or 'FILE'} is not a file that can be read")
        weights[name] = file
    return weights


def compile_cache(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """torch.compile's caches in --compile-cache, and --compile-artifacts loaded where it exists: refused where it
    is not torch's mega-cache, which the run would replace."""
    if args.compile_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(args.compile_cache.resolve())
    path = args.compile_artifacts
    # cold unless an earlier run's work is given (benchmarks/budget.py allows a cold compile minutes)
    args.compile_cold = not (path and path.is_file()) and not (args.compile_cache and any(args.compile_cache.glob("*")))
    if path is None:
        return
    writable(parser, "--compile-artifacts", path)
    try:
        loaded = not path.exists() or torch.compiler.load_cache_artifacts(path.read_bytes()) is not None
    except OSError as error:
        parser.error(f"--compile-artifacts {path} cannot be read ({error.strerror or error})")
    if not loaded:
        parser.error(f"--compile-artifacts {path} is not torch's mega-cache, and is left as it is: name another")


def save_compile_artifacts(args: argparse.Namespace, section: dict) -> None:
    """torch.compile's mega-cache written to --compile-artifacts; where that fails, the section says why."""
    try:
        saved = torch.compiler.save_cache_artifacts() if args.compile_artifacts else None
        if saved:
            with atomic_path(args.compile_artifacts) as temporary:
                temporary.write_bytes(saved[0])
    except Exception as error:  # the section's figures stand; the next run compiles again
        section["compile_artifacts_error"] = error_text(error)


def inductor_compiles(parser: argparse.ArgumentParser) -> None:
    """Refused unless --compile's backend is inductor: on a GPU only inductor's compiled rows count toward the goals
    (another, such as an inherited MUSICVID_COMPILE_BACKEND=eager, compiles nothing), so the run would spend the GPU's
    time on rows that measure nothing."""
    from musicvid.pictures.switches import compile_backend  # (diffusers' import: only where the run compiles)

    try:
        backend = compile_backend()
    except UserError as error:
        parser.error(str(error))
    if backend != "inductor":
        parser.error(
            f"MUSICVID_COMPILE_BACKEND={backend}: on a GPU only rows compiled by inductor count toward the goals, so "
            "this run would spend the GPU's time on compile rows that measure nothing; unset it (a dry run may keep "
            "it), or leave the compile rows out"
        )


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.device", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), default=list(DEFAULT), help="these sections")
    parser.add_argument("--rows", nargs="+", default=list(DEVICE_ROWS), help="sd15's rows besides the baseline")
    parser.add_argument("--groups", type=int, help="groups timed a row, 2 or more (default 10; 2 in a dry run)")
    parser.add_argument("--dry-run", action="store_true", help="on the CPU with tiny models: checks the script")
    parser.add_argument(
        "--budget",
        type=float,
        help=f"a GPU run's seconds (default {BUDGET:g}): a song is stopped, a later section skipped",
    )
    parser.add_argument("--compile-cache", type=Path, help="torch.compile's cache folder (TORCHINDUCTOR_CACHE_DIR)")
    parser.add_argument("--compile-artifacts", type=Path, help="torch.compile's mega-cache: loaded, then saved")
    parser.add_argument("--upscaler-weights", nargs="+", default=[], metavar="NAME=FILE", help="x4plus=, x4v3=")
    parser.add_argument(
        "--song-upscaler", choices=[n for n, _ in UPSCALERS], help="the songs' upscaler (default: auto's)"
    )
    parser.add_argument("--song-compile", action="store_true", help="the songs rendered with --compile too")
    parser.add_argument(
        "--song", type=Path, help="the songs' audio, its timed lyrics beside it (.lrc); default: one made here"
    )
    parser.add_argument("--out", type=Path, help="JSON file to write (a new one, or an earlier results file)")
    args = parser.parse_args(argv)
    if not args.dry_run and not torch.cuda.is_available():
        parser.error("no GPU here: --dry-run checks the script on the CPU")
    if len(set(args.only)) < len(args.only):
        parser.error("--only names a section twice: each is run once")
    from benchmarks.levers import levers

    known = levers(True)
    if unknown := sorted(set(args.rows) - {lever.name for lever in known}):
        parser.error(f"unknown rows: {', '.join(unknown)}; known: {', '.join(lever.name for lever in known)}")
    compiles = "sd15" in args.only and any(lever.settings.get("compile") for lever in known if lever.name in args.rows)
    if not args.dry_run and (compiles or args.song_compile):
        inductor_compiles(parser)
    if args.groups is not None and args.groups < 2:
        parser.error(f"--groups {args.groups}: a row's spread needs 2 groups timed or more")
    if args.budget is not None and args.dry_run:
        parser.error("--budget is a GPU run's: a dry run measures nothing, so it runs every section to its end")
    if args.budget is not None and args.budget <= 0:
        parser.error(f"--budget {args.budget:g}: a run's budget is more than 0 seconds")
    args.budget = None if args.dry_run else args.budget or BUDGET
    args.groups = args.groups or (2 if args.dry_run else 10)
    args.song_options = {"compile": True} if args.song_compile else {}
    args.upscaler_weights = upscaler_weights(parser, args.upscaler_weights)
    if args.song and not (readable(args.song) and readable(args.song.with_suffix(".lrc"))):
        parser.error(f"--song {args.song}: a readable audio file with its timed lyrics beside it (.lrc) is needed")
    compile_cache(parser, args)
    args.out = out_file(parser, args)
    return args


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:500]


def run_section(name: str, args: argparse.Namespace, sections: dict, save: Callable[[], None]) -> None:
    """One section run into `sections`: as running, with its figures as they come, then its seconds beside what it
    returned, or beside its error and the figures it had written where it fails (any failure but Ctrl-C: quality's
    failed render is a SystemExit); skipped where it would start past the budget."""
    room = SECTION_ROOM.get(name, 0.0)  # a song or sd15 started runs on a while (benchmarks/budget.py)
    if args.budget is not None and time.perf_counter() - args.started > args.budget - room:
        short = f"fewer than {room:g} s left of" if room else "past"
        sections[name] = {"skipped": f"{short} the budget of {args.budget:g} s"}
        return

    def write(figures: dict) -> None:
        sections[name] = {RUNNING: CUT_SHORT, **figures}
        save()

    write({})
    began = time.perf_counter()
    try:
        result = SECTIONS[name](args, write)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # recorded, and the next section runs
        traceback.print_exc()
        result = {"error": error_text(error)}
    so_far = {key: value for key, value in sections[name].items() if key != RUNNING}
    sections[name] = {**so_far, "seconds": round(time.perf_counter() - began, 1), **result}
    print(f"[{name}: {sections[name]['seconds']} s]", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")  # random prompts truncated by CLIP: no news
    if args.dry_run:  # inductor on two cores takes minutes a row: the graphs alone are checked
        os.environ.setdefault("MUSICVID_COMPILE_BACKEND", "eager")
    args.device = torch.device("cpu" if args.dry_run else "cuda")
    report = {"machine": machine(args.device) | {"versions": versions()}, "dry_run": args.dry_run}
    report["sections"] = {name: {"not started": "the run ended before this section"} for name in args.only}

    def save() -> None:
        write_json(args.out, report)

    save()
    args.started = started
    for name in args.only:
        run_section(name, args, report["sections"], save)
        if name == "sd15":
            save_compile_artifacts(args, report["sections"][name])
        if args.device.type == "cuda":
            torch.cuda.empty_cache()
        save()
    report["checks"] = checks(report)
    save()
    print("\n".join(line["line"] for line in report["checks"]))
    failed = [name for name, section in report["sections"].items() if "error" in section]
    print(f"results: {args.out}" + (f"; sections that failed: {', '.join(failed)} (exit 1)" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
