"""`vipe` (or `python -m vipe_core`): rebuild ViPE from nothing, one resumable stage at a time.

    vipe collect   --artists artists.txt --out lyrics/        Genius, top 50 songs per artist
    vipe filter    lyrics/ --out lyrics.clean.jsonl           paper §3.1 filters
    vipe label     lyrics.clean.jsonl --out canvas/           teacher LLM, system role in a file
    vipe build     canvas/ --out lyric_canvas.parquet         LyricCanvas rows, split by song
    vipe train     lyric_canvas.parquet --base gpt2-medium --context 7 --out ckpt/
    vipe evaluate  ckpt/ lyric_canvas.parquet                 CIDEr-D, profanity

Exit codes: 0 done, 1 the work failed, 2 bad input or usage, 128 + a signal's number where one stopped the run
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; 141 a reader of standard output that went away); errors are one line on
stderr.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from dataclasses import asdict, fields

from vipe_core.errors import StageError, VipeError, run_guarded, stop_said, stopped_as_interrupted
from vipe_core.options import build_parser

TRAIN_EXTRA = "pip install 'musicvid[train]'"
# The modules of the train extra (pyproject.toml) each stage imports: musicvid renders without them, so
# a stage looks for them before any work and names the extra.
TRAIN_MODULES = {
    "collect": ("lyricsgenius",),
    "label": ("httpx",),
    "build": ("pandas", "pyarrow"),
    "train": ("pandas", "pyarrow"),
    "evaluate": ("pandas", "pyarrow"),
}


def _collect(args) -> None:
    from vipe_core.collect import collect, read_artists

    tally = collect(
        read_artists(args.artists),
        args.out,
        token=args.token,
        max_songs=args.max_songs,
        delay=args.delay,
        retries=args.retries,
        progress=not args.quiet,
    )
    print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in tally.items()))


def _filter(args) -> None:
    from vipe_core.filters import FilterConfig, format_summary, run_filter

    config = FilterConfig(
        min_unique_words=args.min_unique_words,
        max_words=args.max_words,
        min_rich_lines=args.min_rich_lines,
        rich_line_unique_words=args.rich_line_unique_words,
        max_songs_per_artist=args.max_songs_per_artist,
        strip_headers=not args.keep_headers,
        english_only=not args.all_languages,
    )
    print(format_summary(run_filter(args.lyrics, args.out, config)))
    print(f"wrote {args.out}")


def _label(args) -> None:
    from vipe_core.chat import TeacherConfig
    from vipe_core.teacher import run_label

    config = TeacherConfig.from_env(
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        temperature=args.temperature,
        timeout=args.timeout,
        max_retries=args.max_retries,
        backoff=args.backoff,
        chunk_lines=args.chunk_lines,
        mismatch_retries=args.mismatch_retries,
        concurrency=args.concurrency,
        price_input=args.price_input,
        price_output=args.price_output,
    )
    summary = run_label(
        args.lyrics,
        args.out,
        config,
        system_role=args.system_role,
        retry_failed=args.retry_failed,
        limit=args.limit,
        progress=not args.quiet,
    )
    usage = summary.pop("usage")
    print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    cost = f", cost ${usage['cost_usd']:.4f}" if usage["cost_usd"] else ""
    print(
        f"teacher usage so far: {usage['requests']} requests, {usage['retries']} retries, "
        f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens{cost}"
    )
    if summary["failed"]:
        print(f"failed songs are listed in {args.out}/failed.jsonl (rerun with --retry-failed to ask again)")
    if summary["failed"] and not summary["labelled"]:  # (a teacher out of reach failed every song, exit 0)
        raise StageError(f"every song it asked for failed ({summary['failed']}): none was labelled")


def _build(args) -> None:
    from vipe_core.canvas import run_build

    if not args.canvas and not args.published:
        raise VipeError("build needs the canvas folder from `vipe label`, or --published with --lyrics.")
    summary = run_build(
        args.out,
        canvas_dir=args.canvas,
        published=args.published,
        lyrics=args.lyrics,
        columns=dict(args.column),
        validation_fraction=args.validation_fraction,
        seed=args.seed,
    )
    print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in asdict(summary).items()))
    print(f"wrote {args.out}")


def _train(args) -> None:
    from vipe_core.train import TrainConfig, train

    options = {f.name: getattr(args, f.name) for f in fields(TrainConfig) if hasattr(args, f.name)}
    config = TrainConfig(**options, progress=not args.quiet)
    result = train(config)
    from accelerate import PartialState

    if PartialState().is_main_process and result["best"]:
        print(train_summary(result))


def train_summary(result: dict) -> str:
    """The line a finished run ends with; it says so plainly when no evaluation beat the loss before training."""
    losses = f"validation loss {result['initial_val_loss']:.4f} before training, best {result['best_val_loss']:.4f}"
    if result["best_val_loss"] < result["initial_val_loss"]:
        return f"{losses} after {result['steps']} steps; best checkpoint: {result['best']}"
    if result["best_val_loss"] == result["initial_val_loss"]:  # (warm-up's first step has a rate of 0)
        return (
            f"{losses} after {result['steps']} steps: training has not changed it (too few steps past the warm-up?); "
            f"the checkpoint, as the base: {result['best']}"
        )
    return (
        f"{losses} after {result['steps']} steps: training made the model worse than it was (a --lr too high?); "
        f"the least bad checkpoint: {result['best']}"
    )


def _evaluate(args) -> None:
    from vipe_core.evaluate import EvalConfig, format_results, run_evaluate

    if len(args.paths) < 2:
        raise VipeError("evaluate needs at least one checkpoint and then the LyricCanvas file.")
    config = EvalConfig(
        checkpoints=args.paths[:-1],
        data=args.paths[-1],
        contexts=args.context,
        split=args.split,
        limit=args.limit,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        device=args.device,
        out=args.out,
        profanity=not args.no_profanity,
        progress=not args.quiet,
    )
    results = run_evaluate(config)
    print(format_results(results))
    print(f"wrote {results['path']}")


def check_train_extra(args) -> None:
    """Refuses a stage whose modules of the train extra are not installed, naming the extra."""
    needed = TRAIN_MODULES.get(args.stage, ())
    if args.stage == "evaluate" and not args.no_profanity:
        needed += ("profanity_check",)
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise VipeError(f"this stage needs {', '.join(missing)}, from the training extra: {TRAIN_EXTRA}")


STAGES = {
    "collect": _collect,
    "filter": _filter,
    "label": _label,
    "build": _build,
    "train": _train,
    "evaluate": _evaluate,
}


def main(argv: list[str] | None = None) -> int:
    return run_guarded(lambda: _run(argv), "vipe")


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        with stopped_as_interrupted():  # SIGTERM and SIGHUP end a stage as Ctrl-C does
            if args.quiet and args.stage in ("train", "evaluate"):  # (an import of seconds: Ctrl-C said in it too)
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # "Loading weights", "Writing model shards"
            check_train_extra(args)
            STAGES[args.stage](args)
    except VipeError as error:
        print(f"vipe {args.stage}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as stopped:
        return stop_said(stopped, f"vipe {args.stage}", ending=".")
    return 0
