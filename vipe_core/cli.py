"""`vipe` (or `python -m vipe_core`): rebuild ViPE from nothing, one resumable stage at a time.

    vipe collect   --artists artists.txt --out lyrics/        Genius, top 50 songs per artist
    vipe filter    lyrics/ --out lyrics.clean.jsonl           paper §3.1 filters
    vipe label     lyrics.clean.jsonl --out canvas/           teacher LLM, system role in a file
    vipe build     canvas/ --out lyric_canvas.parquet         LyricCanvas rows, split by song
    vipe train     lyric_canvas.parquet --base gpt2-medium --context 7 --out ckpt/
    vipe evaluate  ckpt/ lyric_canvas.parquet                 CIDEr-D, profanity

Exit codes: 0 done, 1 the work failed, 2 bad input or usage; errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
from dataclasses import asdict

from vipe_core.errors import VipeError

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


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} should list context sizes such as 0,1,3,5,7")
    return values


def _mapping(text: str) -> tuple[str, str]:
    ours, sep, theirs = text.partition("=")
    if not sep or not ours or not theirs:
        raise argparse.ArgumentTypeError(f"{text!r} should look like elaboration=prompt")
    return ours, theirs


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    common.add_argument("-v", "--verbose", action="store_true", help="log each retry and decision")
    parser = argparse.ArgumentParser(
        prog="vipe", description="Train ViPE, the lyrics-to-visual-prompt model, from nothing."
    )
    stages = parser.add_subparsers(dest="stage", required=True, metavar="STAGE")

    p = stages.add_parser(
        "collect", parents=[common], help="English lyrics of each artist's most popular songs, from Genius"
    )
    p.add_argument("--artists", required=True, help="text file, one artist a line")
    p.add_argument("--out", default="lyrics", help="folder, one JSON file per artist (default: lyrics/)")
    p.add_argument("--max-songs", type=_positive, default=50, help="songs per artist, most popular first (default: 50)")
    p.add_argument("--delay", type=float, default=0.5, help="seconds between requests (default: 0.5)")
    p.add_argument("--retries", type=_not_negative, default=4, help="tries again after a failed request (default: 4)")
    p.add_argument("--token", help="Genius API token (default: $GENIUS_ACCESS_TOKEN)")

    p = stages.add_parser("filter", parents=[common], help="the paper's quality filters")
    p.add_argument("lyrics", help="folder written by `vipe collect`")
    p.add_argument("--out", default="lyrics.clean.jsonl", help="JSONL, one song a line (default: lyrics.clean.jsonl)")
    p.add_argument(
        "--min-unique-words", type=_not_negative, default=2, help="drop lines with fewer unique words (default: 2)"
    )
    p.add_argument("--max-words", type=_positive, default=20, help="drop lines with more words (default: 20)")
    p.add_argument(
        "--min-rich-lines",
        type=_not_negative,
        default=15,
        help="keep songs with at least this many rich lines (default: 15)",
    )
    p.add_argument(
        "--rich-line-unique-words", type=_positive, default=4, help="unique words that make a line rich (default: 4)"
    )
    p.add_argument("--max-songs-per-artist", type=_positive, default=50, help="most popular first (default: 50)")
    p.add_argument("--keep-headers", action="store_true", help="keep section headers such as [Chorus]")
    p.add_argument("--all-languages", action="store_true", help="keep songs Genius marks as not English")

    p = stages.add_parser(
        "label", parents=[common], help="teacher elaborations through an OpenAI-compatible chat endpoint"
    )
    p.add_argument("lyrics", help="lyrics.clean.jsonl from `vipe filter`")
    p.add_argument("--out", default="canvas", help="folder, one JSON file per labelled song (default: canvas/)")
    p.add_argument("--base-url", help="endpoint base URL (default: $VIPE_TEACHER_URL, $OPENAI_BASE_URL or OpenAI's)")
    p.add_argument("--model", help="teacher model (default: $VIPE_TEACHER_MODEL, $OPENAI_MODEL or gpt-3.5-turbo)")
    p.add_argument("--api-key", help="API key (default: $VIPE_TEACHER_KEY or $OPENAI_API_KEY)")
    p.add_argument(
        "--system-role", help="text file with the teacher's instructions (default: the packaged system_role.txt)"
    )
    p.add_argument("--chunk-lines", type=_positive, default=50, help="lines per request at most (default: 50)")
    p.add_argument("--concurrency", type=_positive, default=4, help="songs in flight at once (default: 4)")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--max-retries", type=_not_negative, default=6, help="on 429, 5xx and network errors (default: 6)")
    p.add_argument("--backoff", type=float, default=1.0, help="seconds before the first retry, doubling (default: 1)")
    p.add_argument(
        "--mismatch-retries", type=_not_negative, default=1, help="asks again before splitting a chunk (default: 1)"
    )
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds for a whole request, answer included (default: 120)"
    )
    p.add_argument("--retry-failed", action="store_true", help="ask again for songs recorded in failed.jsonl")
    p.add_argument("--limit", type=_positive, help="label at most this many new songs")
    p.add_argument("--price-input", type=float, default=0.0, help="USD per million prompt tokens, for the cost tally")
    p.add_argument("--price-output", type=float, default=0.0, help="USD per million completion tokens")

    p = stages.add_parser("build", parents=[common], help="the LyricCanvas table, split by song")
    p.add_argument("canvas", nargs="?", help="folder written by `vipe label`")
    p.add_argument("--out", default="lyric_canvas.parquet", help="parquet file (default: lyric_canvas.parquet)")
    p.add_argument("--published", help="published elaborations (csv, tsv, jsonl, parquet) to join with --lyrics")
    p.add_argument("--lyrics", help="lyrics.clean.jsonl whose lines the published elaborations belong to")
    p.add_argument(
        "--column",
        type=_mapping,
        action="append",
        default=[],
        metavar="OURS=THEIRS",
        help="a column of the published table under another name, e.g. elaboration=prompt",
    )
    p.add_argument("--validation-fraction", type=float, default=0.1, help="share of songs held out (default: 0.1)")
    p.add_argument("--seed", type=int, default=0, help="which songs are held out (default: 0)")

    p = stages.add_parser(
        "train", parents=[common], help="fine-tune a causal LM into ViPE (works under `accelerate launch`)"
    )
    p.add_argument("data", help="lyric_canvas.parquet from `vipe build`")
    p.add_argument("--base", default="gpt2-medium", help="model name or folder (default: gpt2-medium, i.e. ViPE-M)")
    p.add_argument("--tokenizer", help="tokenizer name or folder (default: the base model's)")
    p.add_argument(
        "--context",
        type=_not_negative,
        default=7,
        help="preceding lines in the context; the paper's are 0,1,3,5,7 (default: 7)",
    )
    p.add_argument("--out", default="ckpt", help="folder for best/ and last/ (default: ckpt/)")
    p.add_argument("--epochs", type=_positive, default=5)
    p.add_argument("--batch-size", type=_positive, help="per device (default: the paper's for this model and context)")
    p.add_argument("--grad-accum", type=_positive, default=1, help="gradient accumulation steps (default: 1)")
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--warmup-steps", type=_not_negative, default=1000)
    p.add_argument("--max-length", type=_positive, help="tokens per example (default: the model's window)")
    p.add_argument(
        "--patience",
        type=_not_negative,
        default=2,
        help="validations without improvement before stopping; 0 never (default: 2)",
    )
    p.add_argument(
        "--eval-every", type=_not_negative, default=0, help="steps between validations (default: once per epoch)"
    )
    p.add_argument("--save-every", type=_not_negative, default=500, help="steps between resumable saves (default: 500)")
    p.add_argument("--max-steps", type=_positive, help="stop after this many optimizer steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--mixed-precision",
        choices=["auto", "no", "fp16", "bf16"],
        default="auto",
        help="auto: bf16 (or fp16) on a GPU, none on a CPU",
    )
    p.add_argument("--restart", action="store_true", help="ignore the resumable state in --out and start over")

    p = stages.add_parser("evaluate", parents=[common], help="CIDEr-D against the teacher, and profanity")
    p.add_argument(
        "paths", nargs="+", metavar="CKPT... DATA", help="one or more checkpoints, then lyric_canvas.parquet"
    )
    p.add_argument("--context", type=_int_list, help="context sizes to try, e.g. 0,1,3,5,7 (default: each model's own)")
    p.add_argument("--split", default="validation", choices=["validation", "train"])
    p.add_argument("--limit", type=_positive, help="evaluate the first N lines only")
    p.add_argument("--batch-size", type=_positive, default=16)
    p.add_argument("--max-new-tokens", type=_positive, default=50)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, mps ...")
    p.add_argument("--out", help="folder for results.json and the generations (default: CKPT/evaluation)")
    p.add_argument("--no-profanity", action="store_true", help="skip the profanity analysis")
    return parser


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
    from vipe_core.teacher import TeacherConfig, run_label

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

    config = TrainConfig(
        data=args.data,
        out=args.out,
        base=args.base,
        tokenizer=args.tokenizer,
        context_size=args.context,
        epochs=args.epochs,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum,
        lr=args.lr,
        weight_decay=args.weight_decay,
        warmup_steps=args.warmup_steps,
        max_length=args.max_length,
        patience=args.patience,
        eval_every=args.eval_every,
        save_every=args.save_every,
        max_steps=args.max_steps,
        seed=args.seed,
        mixed_precision=args.mixed_precision,
        restart=args.restart,
        progress=not args.quiet,
    )
    result = train(config)
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(
            f"validation loss {result['initial_val_loss']:.4f} before training, best {result['best_val_loss']:.4f} "
            f"after {result['steps']} steps; best checkpoint: {result['best']}"
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
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if args.quiet and args.stage in ("train", "evaluate"):
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # "Loading weights", "Writing model shards"
    try:
        check_train_extra(args)
        STAGES[args.stage](args)
    except VipeError as error:
        print(f"vipe {args.stage}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"vipe {args.stage}: interrupted; run the same command again to continue.", file=sys.stderr)
        return 130
    return 0
