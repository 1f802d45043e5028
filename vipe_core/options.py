"""The options of `vipe`'s stages (vipe_core.cli runs them): one function per stage. `train`'s defaults are
TrainConfig's, shown in its help as argparse reads them."""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import fields
from pathlib import Path

from vipe_core.atomic import NAME_BYTES
from vipe_core.context import MAX_CONTEXT_SIZE
from vipe_core.filters import FilterConfig
from vipe_core.guards import finite_in
from vipe_core.parsing import OneLineParser
from vipe_core.train_config import (
    MAX_BATCH_SIZE,
    MAX_EPOCHS,
    MAX_LR,
    MAX_SEED,
    MAX_WEIGHT_DECAY,
    MIN_MAX_LENGTH,
    MIXED_PRECISIONS,
    TrainConfig,
)


def _shown(text: str) -> str:
    """A flag's value as a refusal quotes it: bare, or in quotes where it is empty or has spaces around it."""
    return text if text and text.strip() == text else repr(text)


MAX_PRICE = 1e6  # USD per million tokens: a thousand times the dearest model's; past it, the tally overflows


def _whole(low: int, high: int | None = None, what: str = "a whole number"):
    """An argparse type: a whole number from `low` (to `high`). Its refusal says what the flag takes: argparse's
    own ("invalid parse value") would name this function."""
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not {what} {bounds}")
        return value

    return parse


_positive = _whole(1)
_not_negative = _whole(0)
_seed = _whole(0, MAX_SEED, "a seed")


def _path(text: str) -> str:
    """An argparse type for a file or folder: an empty one (an unset shell variable) would name the working folder,
    and a name longer than a file system takes (NAME_BYTES) could not be read or made."""
    if not text:
        raise argparse.ArgumentTypeError("it is empty")
    if long := next((name for name in Path(text).parts if len(os.fsencode(name)) > NAME_BYTES), None):
        raise argparse.ArgumentTypeError(
            f"the name {long[:40]}… is {len(os.fsencode(long))} bytes long; a file system takes {NAME_BYTES}"
        )
    return text


def _finite(low: float, high: float = math.inf, *, above: bool = False, below: bool = False):
    """An argparse type: a finite number from `low` (excluded when `above`) to `high` (excluded when `below`)."""
    bounds = f"{'above' if above else 'from'} {low:g}"
    bounds += (f" and below {high:g}" if below else f" to {high:g}") if math.isfinite(high) else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not finite_in(value, low, high, above=above) or (below and value >= high):
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a finite number {bounds}")
        return value

    return parse


# Bounds of the seconds a stage waits: a day at most (time.sleep and sockets refuse infinity).
_SECONDS = _finite(0, 86400)


def _int_list(text: str) -> list[int]:
    """An argparse type: context sizes, each once (a repeat would score the same model twice)."""
    parts = text.split(",")
    if not all(part.strip() for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r} has an empty entry; list context sizes such as 0,1,3,5,7")
    values = [_whole(0, MAX_CONTEXT_SIZE, "a context size")(part) for part in parts]
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{text!r} names context size {repeated[0]} more than once; list each once")
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
    parser = OneLineParser(prog="vipe", description="Train ViPE, the lyrics-to-visual-prompt model, from nothing.")
    stages = parser.add_subparsers(dest="stage", required=True, metavar="STAGE")

    add_collect(stages, common)
    add_filter(stages, common)
    add_label(stages, common)
    add_build(stages, common)
    add_train(stages, common)
    add_evaluate(stages, common)
    return parser


def add_collect(stages, common: argparse.ArgumentParser) -> None:
    p = stages.add_parser(
        "collect", parents=[common], help="English lyrics of each artist's most popular songs, from Genius"
    )
    p.add_argument("--artists", required=True, type=_path, help="text file, one artist a line")
    p.add_argument("--out", type=_path, default="lyrics", help="folder, one JSON file per artist (default: lyrics/)")
    p.add_argument("--max-songs", type=_positive, default=50, help="songs per artist, most popular first (default: 50)")
    p.add_argument("--delay", type=_SECONDS, default=0.5, help="seconds between requests (default: 0.5)")
    p.add_argument("--retries", type=_not_negative, default=4, help="tries again after a failed request (default: 4)")
    p.add_argument("--token", help="Genius API token (default: $GENIUS_ACCESS_TOKEN)")


def add_filter(stages, common: argparse.ArgumentParser) -> None:
    default = FilterConfig()  # one source: FilterConfig's
    p = stages.add_parser("filter", parents=[common], help="the paper's quality filters")
    p.add_argument("lyrics", type=_path, help="folder written by `vipe collect`")
    p.add_argument(
        "--out", type=_path, default="lyrics.clean.jsonl", help="JSONL, one song a line (default: lyrics.clean.jsonl)"
    )
    p.add_argument(
        "--min-unique-words",
        type=_not_negative,
        default=default.min_unique_words,
        help="drop lines with fewer unique words (default: %(default)s)",
    )
    p.add_argument(
        "--max-words",
        type=_positive,
        default=default.max_words,
        help="drop lines with more words (default: %(default)s)",
    )
    p.add_argument(
        "--min-rich-lines",
        type=_not_negative,
        default=default.min_rich_lines,
        help="keep songs with at least this many rich lines (default: %(default)s)",
    )
    p.add_argument(
        "--rich-line-unique-words",
        type=_positive,
        default=default.rich_line_unique_words,
        help="unique words that make a line rich (default: %(default)s)",
    )
    p.add_argument(
        "--max-songs-per-artist",
        type=_positive,
        default=default.max_songs_per_artist,
        help="most popular first (default: %(default)s)",
    )
    p.add_argument("--keep-headers", action="store_true", help="keep section headers such as [Chorus]")
    p.add_argument("--all-languages", action="store_true", help="keep songs Genius marks as not English")


def add_label(stages, common: argparse.ArgumentParser) -> None:
    p = stages.add_parser(
        "label", parents=[common], help="teacher elaborations through an OpenAI-compatible chat endpoint"
    )
    p.add_argument("lyrics", type=_path, help="lyrics.clean.jsonl from `vipe filter`")
    p.add_argument(
        "--out", type=_path, default="canvas", help="folder, one JSON file per labelled song (default: canvas/)"
    )
    p.add_argument("--base-url", help="endpoint base URL (default: $VIPE_TEACHER_URL, $OPENAI_BASE_URL or OpenAI's)")
    p.add_argument("--model", help="teacher model (default: $VIPE_TEACHER_MODEL, $OPENAI_MODEL or gpt-3.5-turbo)")
    p.add_argument("--api-key", help="API key (default: $VIPE_TEACHER_KEY or $OPENAI_API_KEY)")
    p.add_argument(
        "--system-role",
        type=_path,
        help="text file with the teacher's instructions (default: the packaged system_role.txt)",
    )
    p.add_argument("--chunk-lines", type=_positive, default=50, help="lines per request at most (default: 50)")
    p.add_argument("--concurrency", type=_positive, default=4, help="songs in flight at once (default: 4)")
    p.add_argument("--temperature", type=_finite(0, 2), default=0.7, help="0 to 2 (default: 0.7)")
    p.add_argument("--max-retries", type=_not_negative, default=6, help="on 429, 5xx and network errors (default: 6)")
    p.add_argument(
        "--backoff", type=_SECONDS, default=1.0, help="seconds before the first retry, doubling (default: 1)"
    )
    p.add_argument(
        "--mismatch-retries", type=_not_negative, default=1, help="asks again before splitting a chunk (default: 1)"
    )
    p.add_argument(
        "--timeout",
        type=_finite(0, 86400, above=True),
        default=120.0,
        help="seconds for a whole request, answer included (default: 120)",
    )
    p.add_argument("--retry-failed", action="store_true", help="ask again for songs recorded in failed.jsonl")
    p.add_argument("--limit", type=_positive, help="label at most this many new songs")
    p.add_argument(
        "--price-input",
        type=_finite(0, MAX_PRICE),
        default=0.0,
        help="USD per million prompt tokens, for the cost tally",
    )
    p.add_argument("--price-output", type=_finite(0, MAX_PRICE), default=0.0, help="USD per million completion tokens")


def add_build(stages, common: argparse.ArgumentParser) -> None:
    p = stages.add_parser("build", parents=[common], help="the LyricCanvas table, split by song")
    p.add_argument("canvas", nargs="?", type=_path, help="folder written by `vipe label`")
    p.add_argument(
        "--out", type=_path, default="lyric_canvas.parquet", help="parquet file (default: lyric_canvas.parquet)"
    )
    p.add_argument(
        "--published", type=_path, help="published elaborations (csv, tsv, jsonl, parquet) to join with --lyrics"
    )
    p.add_argument("--lyrics", type=_path, help="lyrics.clean.jsonl whose lines the published elaborations belong to")
    p.add_argument(
        "--column",
        type=_mapping,
        action="append",
        default=[],
        metavar="OURS=THEIRS",
        help="a column of the published table under another name, e.g. elaboration=prompt",
    )
    p.add_argument(
        "--validation-fraction",
        type=_finite(0, 1, above=True, below=True),
        default=0.1,
        help="share of songs held out for validation, above 0 and below 1 (default: 0.1)",
    )
    p.add_argument("--seed", type=_seed, default=0, help="which songs are held out (default: 0)")


def add_train(stages, common: argparse.ArgumentParser) -> None:
    default = {f.name: f.default for f in fields(TrainConfig)}  # one source: TrainConfig's
    p = stages.add_parser(
        "train", parents=[common], help="fine-tune a causal LM into ViPE (works under `accelerate launch`)"
    )
    p.add_argument("data", type=_path, help="lyric_canvas.parquet from `vipe build`")
    p.add_argument("--base", default=default["base"], help="model name or folder (default: %(default)s)")
    p.add_argument("--tokenizer", type=_path, help="tokenizer name or folder (default: the base model's)")
    p.add_argument(
        "--context",
        dest="context_size",
        metavar="N",
        type=_whole(0, MAX_CONTEXT_SIZE, "a context size"),
        default=default["context_size"],
        help="preceding lines in the context; the paper's are 0,1,3,5,7 (default: %(default)s)",
    )
    p.add_argument(
        "--out", type=_path, default=default["out"], help="folder for best/ and last/ (default: %(default)s/)"
    )
    p.add_argument("--epochs", type=_whole(1, MAX_EPOCHS), default=default["epochs"], help="(default: %(default)s)")
    p.add_argument(
        "--batch-size",
        type=_whole(1, MAX_BATCH_SIZE),
        help="per device (default: the paper's for this model and context)",
    )
    p.add_argument(
        "--grad-accum",
        type=_positive,
        default=default["grad_accum"],
        help="gradient accumulation steps (default: %(default)s)",
    )
    p.add_argument(
        "--lr", type=_finite(0, MAX_LR, above=True), default=default["lr"], help="at most 1 (default: %(default)s)"
    )
    p.add_argument(
        "--weight-decay",
        type=_finite(0, MAX_WEIGHT_DECAY),
        default=default["weight_decay"],
        help="AdamW's, from 0 to 1 (default: %(default)s)",
    )
    p.add_argument("--warmup-steps", type=_not_negative, default=default["warmup_steps"], help="(default: %(default)s)")
    p.add_argument(
        "--max-length",
        type=_whole(MIN_MAX_LENGTH),
        help=f"tokens per example, at least {MIN_MAX_LENGTH} (default: the model's window)",
    )
    p.add_argument(
        "--patience",
        type=_not_negative,
        default=default["patience"],
        help="validations without improvement before stopping; 0 never (default: %(default)s)",
    )
    p.add_argument(
        "--eval-every",
        type=_not_negative,
        default=default["eval_every"],
        help="steps between validations; 0: once per epoch (default: %(default)s)",
    )
    p.add_argument(
        "--save-every",
        type=_not_negative,
        default=default["save_every"],
        help="steps between resumable saves (default: %(default)s)",
    )
    p.add_argument("--max-steps", type=_positive, help="stop after this many optimizer steps")
    p.add_argument("--seed", type=_seed, default=default["seed"], help="(default: %(default)s)")
    p.add_argument(
        "--mixed-precision",
        choices=MIXED_PRECISIONS,
        default=default["mixed_precision"],
        help="auto: bf16 (or fp16) on a GPU, none on a CPU (default: %(default)s)",
    )
    p.add_argument(
        "--restart",
        action="store_true",
        help="start over: the state in --out/last is removed, and best/ replaced at the first evaluation (copy it "
        "away to keep it)",
    )


def add_evaluate(stages, common: argparse.ArgumentParser) -> None:
    p = stages.add_parser("evaluate", parents=[common], help="CIDEr-D against the teacher, and profanity")
    p.add_argument(
        "paths",
        nargs="+",
        type=_path,
        metavar="CKPT... DATA",
        help="one or more checkpoints, then lyric_canvas.parquet",
    )
    p.add_argument("--context", type=_int_list, help="context sizes to try, e.g. 0,1,3,5,7 (default: each model's own)")
    p.add_argument("--split", default="validation", choices=["validation", "train"])
    p.add_argument("--limit", type=_positive, help="evaluate the first N lines only")
    p.add_argument("--batch-size", type=_positive, default=16)
    p.add_argument("--max-new-tokens", type=_positive, default=50)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, mps ...")
    p.add_argument(
        "--out",
        type=_path,
        help="folder for results.json and the generations (default: evaluation-NAME beside the checkpoint)",
    )
    p.add_argument("--no-profanity", action="store_true", help="skip the profanity analysis")
