"""What `vipe train` checks before any work (before the data is encoded or a model loaded): its settings,
the output folder (never a person's files, never an input), the data file and the base model. Their
result is the run's settings: what a resumed run must share with the one it continues."""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import huggingface_hub.constants  # (a submodule: the package does not load it)
import pandas as pd

from vipe_core.canvas import read_canvas
from vipe_core.context import MAX_CONTEXT_SIZE
from vipe_core.errors import VipeError
from vipe_core.guards import (
    CHECKPOINTS,
    LOCK_FILE,
    _inside,
    _same,
    check_output_kind,
    finite_in,
    impossible_number,
    is_held,
    refuse_a_path,
    refuse_foreign,
    refuse_overlap,
)
from vipe_core.resume import STATE_FILE, check_copies, damaged, reason, saved_state
from vipe_core.train_config import (
    MAX_LR,
    MAX_SEED,
    MAX_WEIGHT_DECAY,
    MIN_LYRIC_TOKENS,
    MIN_MAX_LENGTH,
    MIXED_PRECISIONS,
    TRAINING_INFO,
    TrainConfig,
    paper_batch_size,
)

RESULT_FILE = "train_result.json"

# Why --max-length has a floor (vipe_core.train_config).
EXAMPLE_NEEDS = (
    f"an example needs {MIN_MAX_LENGTH} tokens to keep {MIN_LYRIC_TOKENS} of its lyric line's beside the elaboration"
)


def check_settings(config: TrainConfig) -> None:
    """VipeError naming the first setting out of its range (the command line's types refuse them too)."""
    if config.epochs < 1 or config.grad_accum < 1:
        raise VipeError("--epochs and --grad-accum must be at least 1.")
    ranges = [
        (
            "--context",
            config.context_size,
            f"a whole number from 0 to {MAX_CONTEXT_SIZE}",
            0 <= config.context_size <= MAX_CONTEXT_SIZE,
        ),
        ("--lr", config.lr, f"a number above 0 and at most {MAX_LR:g}", finite_in(config.lr, 0, MAX_LR, above=True)),
        (
            "--weight-decay",
            config.weight_decay,
            f"a number from 0 to {MAX_WEIGHT_DECAY:g}",
            finite_in(config.weight_decay, 0, MAX_WEIGHT_DECAY),
        ),
        ("max_grad_norm", config.max_grad_norm, "a finite number from 0", finite_in(config.max_grad_norm, 0)),
        ("--seed", config.seed, f"a whole number from 0 to {MAX_SEED}", 0 <= config.seed <= MAX_SEED),
        (
            "--mixed-precision",
            config.mixed_precision,
            "one of " + ", ".join(MIXED_PRECISIONS),
            config.mixed_precision in MIXED_PRECISIONS,
        ),
    ]
    for flag, value, expected, ok in ranges:
        if not ok:
            raise VipeError(f"{flag} must be {expected}, not {value}.")
    if config.tokenizer is not None and not config.tokenizer.strip():
        raise VipeError("--tokenizer is empty; leave it out to use the base model's tokenizer.")
    if config.max_length is not None and config.max_length < MIN_MAX_LENGTH:
        raise VipeError(f"--max-length must be at least {MIN_MAX_LENGTH}, not {config.max_length}: {EXAMPLE_NEEDS}.")
    counts = [config.batch_size, config.max_steps]
    if any(n is not None and n < 1 for n in counts) or config.warmup_steps < 0:
        raise VipeError("--batch-size and --max-steps must be at least 1, and --warmup-steps >= 0.")


def _output_inside(checkpoint: Path) -> Path | None:
    """A vipe output below the top of `checkpoint` (the folder of its marker or lock file), else None."""
    for marker in (LOCK_FILE, RESULT_FILE, TRAINING_INFO, STATE_FILE):
        for found in checkpoint.glob(f"*/**/{marker}"):
            return found.parent
    return None


def check_out_is_ours(out: Path) -> None:
    """VipeError when out/best, out/last or out/train_result.json exist but were not written by vipe train, or
    when best/ or last/ hold another run's output: a run replaces them whole, and a person's files are never
    replaced."""
    for name, marker in zip(CHECKPOINTS, (TRAINING_INFO, STATE_FILE)):
        if (out / name).exists() and not (out / name / marker).is_file():
            raise VipeError(f"{out / name} holds files vipe did not write; move them away or choose another --out.")
        nested = _output_inside(out / name)
        if nested is not None:
            raise VipeError(
                f"{out / name} holds {nested}, the output of another vipe run, which this run would delete with "
                f"{out / name}; move it away or choose another --out."
            )
    refuse_foreign(out / RESULT_FILE, _result_ours, "a result")


def _result_ours(path: Path) -> bool:
    return {"best", "history"} <= set(json.loads(path.read_text(encoding="utf-8")))


def check_out_state(out: Path, run: dict, restart: bool) -> bool:
    """What --out holds from earlier runs, checked before any work (train checks it again once it holds the
    folder, then recovers: resume.recover_last): a person's files, a state that is damaged or another run's, and a
    damaged best/ that a resumed run would report as its best. Returns whether a vipe run used --out before (its
    lock file is there), without which no folder there is taken for a copy a killed run left."""
    if is_held(out):  # (a live run's copies and swaps would read as damage here; hold_folder says it too)
        raise VipeError(f"{out} is in use by another vipe run; wait for it or choose another --out.")
    check_out_is_ours(out)
    used = (out / LOCK_FILE).is_file()
    check_copies(out, used)
    best = out / "best"
    if saved_state(out, run, restart, used) is not None and best.is_dir():
        why = unreadable_weights(best) if any(best.glob("*.safetensors")) else "it holds no model.safetensors"
        if why:
            raise damaged(best, why)
    return used


BASE_HINT = (
    "; give a local folder, or a hub name on a machine that can reach the hub (HF_HUB_OFFLINE=1 allows only "
    "cached models)"
)


def cannot_load(what: str, name: str, error: BaseException, hint: str = "") -> VipeError:
    why = reason(error)
    if "ignore_mismatched_sizes" in why:  # transformers points at a report that quiet_loading silenced
        why, hint = "its weights do not have the sizes its config.json gives", ""
    elif "Weights only load failed" in why:  # torch's upgrade note, which points at unsafe unpickling
        why, hint = "its pytorch_model.bin is no PyTorch save of weights alone, as torch.save writes them", ""
    elif " " not in why:  # a bare key or number (a pickle that holds no weights: KeyError 174812789) tells nobody why
        named = type(error).__name__
        why = f"one of its files is not what its name says: {named}{'' if why == named else f' {why}'}"
    return VipeError(f"could not load {what} {name!r} ({why}){hint}.")


# The weights from_pretrained loads from a folder, in the order it looks for them (each may be sharded: an index).
WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def check_holds_weights(folder: Path, named: str) -> None:
    """VipeError when a model folder holds no weights file (a checkpoint a killed run cut short, say), or where a
    weights file's name is a folder or its shards' index no JSON."""
    for file in [folder / name for weights in WEIGHTS for name in (weights, f"{weights}.index.json")]:
        if file.exists() and not file.is_file():
            raise VipeError(f"{named}: its {file.name} is not a file.")
        if file.suffix == ".json" and file.exists():  # (json's wording names no file)
            try:
                json.loads(file.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise VipeError(f"{named}: its {file.name} is not JSON.") from None
    if not any((folder / name).is_file() or (folder / f"{name}.index.json").is_file() for name in WEIGHTS):
        raise VipeError(f"{named} holds no weights: give a folder with {WEIGHTS[0]} (or {WEIGHTS[1]}).")


def load_model(name: str, what: str):
    """The causal language model `name`, loaded whole: the last check before a run takes --out, whose model the run
    keeps. VipeError for a folder without weights, weights that cannot be read or do not have the sizes its
    config.json gives, and weights that leave out part of the model it describes (started at random, unsaid)."""
    from transformers import AutoModelForCausalLM

    local = os.path.isdir(name)
    if local:
        check_holds_weights(Path(name), f"{what} {name}")
    try:
        with quiet_loading():
            model, loading = AutoModelForCausalLM.from_pretrained(
                name, output_loading_info=True, trust_remote_code=False
            )
    except Exception as e:  # OSError, ValueError, RuntimeError for sizes, KeyError for a pickle of no weights ...
        raise cannot_load(what, name, e, "" if local else BASE_HINT) from None
    missing = sorted(loading["missing_keys"])
    if missing:
        more = f" nor {len(missing) - 1} more" if len(missing) > 1 else ""
        raise VipeError(
            f"{what} {name} is incomplete: its weights hold no {missing[0]}{more} of the model its config.json describes."
        )
    return model


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' warnings silenced while a model loads: a model that does not load is refused in one
    sentence, not after a table of its weights."""
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)


def unreadable_weights(folder: str | Path) -> str | None:
    """Why a safetensors file in a local model folder is cut short or not one (only the headers are read: no
    tensor); None when each reads."""
    from safetensors import safe_open

    for file in sorted(Path(folder).glob("*.safetensors")) if Path(folder).is_dir() else []:
        if not file.is_file():
            return f"{file.name} is not a file"
        try:
            with safe_open(str(file), "pt") as weights:
                weights.keys()
        except Exception as e:  # safetensors raises its own error type, and OSError
            return f"{file.name} could not be read ({reason(e)})"
    return None


def check_weights(folder: str | Path, what: str) -> None:
    """VipeError when a local model folder holds a safetensors file that is cut short or not one."""
    why = unreadable_weights(folder)
    if why:
        raise VipeError(f"{what} {folder} is damaged: {why}.")


def model_config(name: str, what: str, hint: str = ""):
    """A model's config; VipeError when it cannot be read or a local model's weights are damaged."""
    from transformers import AutoConfig

    if os.path.isdir(name) and not os.path.isfile(os.path.join(name, "config.json")):
        run = os.path.isfile(os.path.join(name, "best", "config.json"))  # (evaluate takes it so; train is told)
        raise VipeError(
            f"{what} {name} is a `vipe train` run's folder: give its checkpoint, {os.path.join(name, 'best')}."
            if run
            else f"{what} {name} holds no config.json: give a model's folder (as save_pretrained writes one)."
        )
    refuse_a_path(name, what, "a model's folder (as save_pretrained writes one)")
    try:
        config = AutoConfig.from_pretrained(name, trust_remote_code=False)
    except Exception as e:  # OSError, ValueError, KeyError for unknown model types ...
        raise cannot_load(what, name, e, hint) from None
    if bad := impossible_number(config.to_dict()):  # (n_layer -1 was a ValueError at the first validation)
        raise VipeError(f"{what} {name}: its config.json's {bad[0]} is {bad[1]}, not a number a model can have.")
    check_weights(name, what)
    return config


def window_of(config) -> int:
    return getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None) or 1024


def model_window(name: str, what: str, hint: str = "") -> int:
    """The context window (tokens) of a model, from its config (model_config's refusals)."""
    return window_of(model_config(name, what, hint))


def mixed_precision(choice: str) -> str:
    """--mixed-precision decides, not `accelerate launch`, whose default ("no") would turn it off on GPUs."""
    import torch

    if choice != "auto":
        return choice
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


# What a folder holds when a tokenizer can be read from it (musicvid.models.vipe_files' rule for --vipe-tokenizer,
# and a SentencePiece model's file): without it transformers silently builds an empty one-token tokenizer.
TOKENIZER_HOLDS = (("tokenizer.json",), ("vocab.json", "merges.txt"), ("tokenizer.model",))


def check_tokenizer_fits(config: TrainConfig, model) -> None:
    """VipeError unless the tokenizer (--tokenizer, else the base model's) can be read and every id it makes is one
    of the base model's, its end-of-text the model's: vipe_core.inference.check_tokenizer's rule, which musicvid's
    --vipe applies to the checkpoint this run makes."""
    from transformers import AutoTokenizer

    from vipe_core.inference import check_tokenizer

    name = config.tokenizer or config.base
    refuse_a_path(name, "the tokenizer", "a tokenizer's folder")  # (transformers would look a file up on the hub)
    folder = Path(name)
    if folder.is_dir() and not any(all((folder / f).is_file() for f in files) for files in TOKENIZER_HOLDS):
        what, hint = ("the tokenizer", "") if config.tokenizer else ("the base model", ", or name one with --tokenizer")
        raise VipeError(
            f"{what} {folder} holds no tokenizer.json, nor vocab.json and merges.txt: give a tokenizer's folder{hint}."
        )
    try:
        with quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except Exception as e:  # OSError, ValueError ...
        raise cannot_load("the tokenizer", name, e, BASE_HINT) from None
    if not isinstance(getattr(model, "vocab_size", None), int):
        return  # (a config that gives no vocabulary size: nothing to hold the tokenizer to)
    ids = max(tokenizer.get_vocab().values(), default=0) + 1
    try:
        check_tokenizer(tokenizer, model, name, config.base)
        fits = ids <= model.vocab_size
    except VipeError:
        fits = False
    if not fits:
        raise VipeError(
            f"the tokenizer {name!r} (vocabulary {len(tokenizer)}, ids up to {ids - 1}, end-of-text id "
            f"{tokenizer.eos_token_id}) does not match the base model {config.base!r} (vocabulary {model.vocab_size}, "
            f"end-of-text id {model.eos_token_id}); give the tokenizer the base model was trained with."
        )


def check_base(config: TrainConfig) -> int:
    """VipeError for a base model that cannot be read, is no causal language model or reads too few tokens, for a
    --max-length it cannot read, and for a tokenizer that does not fit it; returns its context window."""
    from vipe_core.inference import GenerationSettings, causal_lm  # (torch: once the arguments are read)

    model = model_config(config.base, "the base model", BASE_HINT)
    if not causal_lm(model):
        named = (model.architectures or [model.model_type])[0]
        raise VipeError(
            f"the base model {config.base} is a {named}, not a causal language model (one whose tokens see only "
            "those before them, as GPT-2's), which ViPE is."
        )
    window, writes = window_of(model), GenerationSettings().max_new_tokens
    if window < MIN_MAX_LENGTH:
        raise VipeError(f"the base model {config.base} reads {window} tokens at most: {EXAMPLE_NEEDS}.")
    if window <= writes:  # (musicvid's --vipe and `vipe evaluate` refuse such a checkpoint: train none)
        raise VipeError(
            f"the base model {config.base} reads {window} tokens at most, and the prompt ViPE writes takes {writes} of "
            "them: what it trained would have no room for the lyrics (ViPE-M reads 1024)."
        )
    if config.max_length and config.max_length > window:
        raise VipeError(
            f"--max-length {config.max_length} is more than the base model {config.base} reads ({window} tokens)."
        )
    check_tokenizer_fits(config, model)
    return window


def _labelled(frame: pd.DataFrame, split: str) -> bool:
    rows = frame[frame["split"] == split]["elaboration"]
    return bool(rows.map(lambda e: isinstance(e, str) and bool(e.strip())).any())


def check_train(config: TrainConfig) -> tuple[pd.DataFrame, dict]:
    """Every setting, file and model a run reads, checked before any work; returns the LyricCanvas table and
    the run's settings: the ones that change its result, which a resumed run must share (its --max-steps,
    --patience, --eval-every and --save-every may differ)."""
    check_settings(config)
    out = Path(config.out)
    check_output_kind(out, folder=True, own=lambda name: name == RESULT_FILE)
    inputs = [
        ("the LyricCanvas file", config.data),
        ("the base model", config.base),
        ("the tokenizer", config.tokenizer),
    ]
    # a base or tokenizer named on the hub is read from its cache, as musicvid's models are: --out = its repository's
    # folder there (or the cache, or HF_HOME) wrote the run among its blobs and snapshots (round 13)
    cache = ("the Hugging Face cache", huggingface_hub.constants.HF_HUB_CACHE)
    refuse_overlap(
        [("best/", out / "best"), ("last/", out / "last"), (RESULT_FILE, out / RESULT_FILE)], inputs, [cache]
    )
    for what, source in [*inputs, cache]:  # a run fills --out with its checkpoints, not a folder of its inputs
        if source and Path(source).exists() and _inside(Path(source), out) and not _same(Path(source), out):
            raise VipeError(f"--out {out} holds {what} {source}; choose a folder of its own for the run's output.")
    frame = read_canvas(config.data)
    for split in ("train", "validation"):
        if not _labelled(frame, split):
            raise VipeError(f"{config.data} has no labelled {'training' if split == 'train' else split} lines.")
    window = check_base(config)
    with open(config.data, "rb") as data:
        data_sha256 = hashlib.file_digest(data, "sha256").hexdigest()
    run = {
        "base": config.base,
        "tokenizer": config.tokenizer,
        "data_sha256": data_sha256,
        "context_size": config.context_size,
        "max_length": min(config.max_length or window, window),
        "batch_size": config.batch_size or paper_batch_size(config.base, config.context_size),
        "grad_accum": config.grad_accum,
        "epochs": config.epochs,
        "lr": config.lr,
        "weight_decay": config.weight_decay,
        "warmup_steps": config.warmup_steps,
        "max_grad_norm": config.max_grad_norm,
        "seed": config.seed,
        "mixed_precision": mixed_precision(config.mixed_precision),
    }
    return frame, run
