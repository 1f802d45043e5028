"""Stage 6, evaluate: how close a trained ViPE comes to its teacher, and how clean it writes.

For each checkpoint and context size: greedy (deterministic) elaborations of every labelled line
of the validation split, scored with CIDEr-D against the teacher's (the paper's Fig. 4 is this
score against context size). Then the profanity of the lyrics, the teacher's elaborations and the
model's, with alt-profanity-check, in five buckets of lyric profanity (the paper's Fig. 6).

Generations are journaled (one JSON line per example) in the output folder, so a killed
evaluation continues where it stopped; results.json is written at the end.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from vipe_core.atomic import remove_temporaries
from vipe_core.bars import progress_bar
from vipe_core.canvas import examples, read_canvas
from vipe_core.cider import cider_d
from vipe_core.errors import StageError, VipeError
from vipe_core.guards import (
    LOCK_FILE,
    check_output_kind,
    hold_folder,
    is_checkpoint_copy,
    refuse_foreign,
    refuse_overlap,
)
from vipe_core.inference import GenerationSettings, ViPE, causal_lm, ships_tokenizer
from vipe_core.records import append_jsonl, parsed_json, read_json, read_jsonl, read_text, write_json
from vipe_core.released import DEFAULT_VIPE_TOKENIZER, trained_context
from vipe_core.train_checks import cannot_load, check_holds_weights, model_window, quiet_loading

BUCKETS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0)]
RESULTS = "results.json"
# The names _journal_name gives: the only files of --out that a run appends to, besides RESULTS.
JOURNAL = re.compile(r"generations-.*-[0-9a-f]{8}-ctx\d+\.jsonl")
RECORD_START = '{"key": '  # how json.dumps begins each line `generate` appends


@dataclass
class EvalConfig:
    checkpoints: list[str]
    data: str
    contexts: list[int] | None = None  # None: each checkpoint's own training context size
    split: str = "validation"
    limit: int | None = None  # the first N examples only
    batch_size: int = 16
    max_new_tokens: int = 50
    device: str = "auto"
    out: str | None = None  # folder; default evaluation-<name> beside the first checkpoint (default_out)
    profanity: bool = True
    progress: bool = True


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """A folder from `vipe train` (its best/ is used) or any save_pretrained causal LM folder; VipeError for
    one without weights (a best/ that a killed run cut short)."""
    path = Path(path)
    folder = path / "best" if (path / "best" / "config.json").is_file() else path
    if not (folder / "config.json").is_file() and (path / LOCK_FILE).is_file() and not (path / "best").exists():
        raise VipeError(
            f"{path} holds no best/: the `vipe train` run there has not saved one yet, or was stopped while it saved "
            "it (run that `vipe train` again to put it back)."
        )
    if not (folder / "config.json").is_file():
        raise VipeError(f"{path} is not a trained checkpoint (no config.json in it or in its best/ folder).")
    check_holds_weights(folder, str(folder))
    return folder


def check_device(choice: str) -> str:
    """The torch device to generate on: `choice`, or the GPU when there is one for "auto"; VipeError for a
    name torch does not know or a device this machine lacks."""
    import torch

    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(choice)
    except (RuntimeError, ValueError, TypeError):
        raise VipeError(f"--device {choice!r} is not a device; give auto, cpu, cuda, cuda:1, mps ...") from None
    present = {
        "cpu": True,
        "cuda": torch.cuda.is_available() and (device.index or 0) < torch.cuda.device_count(),
        "mps": torch.backends.mps.is_available(),
    }
    if not present.get(device.type, True):
        raise VipeError(f"--device {choice}: this machine has no such device.")
    return choice


def default_out(checkpoint: Path) -> Path:
    """The output folder beside `checkpoint`, never in it: a file added to a model's folder makes musicvid
    take it for another model, and `vipe train` replaces its best/ whole."""
    named = checkpoint if checkpoint.name else checkpoint.resolve()  # "." has no name
    return named.parent / f"evaluation-{named.name}"


def check_causal(checkpoint: Path) -> None:
    """VipeError for a checkpoint that is no causal language model (a BertModel; a BERT not made a decoder): it has
    no text to continue (inference.causal_lm, which train's base and musicvid's --vipe are held to)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(
        str(checkpoint), trust_remote_code=False
    )  # (model_window has read it: it loads)
    if not causal_lm(config):
        kind = (config.architectures or [config.model_type])[0]
        raise VipeError(f"{checkpoint} is a {kind}, not a causal language model, as ViPE is (GPT-2's).")


def check_tokenizer_files(checkpoint: Path) -> None:
    """VipeError for a checkpoint without a tokenizer whose stand-in, GPT-2 Medium's (the released checkpoints'),
    cannot be had either: loading it would fail later, blaming the network."""
    if not ships_tokenizer(str(checkpoint)) and not ships_tokenizer(DEFAULT_VIPE_TOKENIZER):
        raise VipeError(
            f"{checkpoint} holds no tokenizer (no tokenizer.json, nor vocab.json and merges.txt), and "
            f"{DEFAULT_VIPE_TOKENIZER}'s, which ViPE's released checkpoints use, is not in the model cache; copy the "
            "tokenizer files of its base model into it."
        )


def _results_ours(path: Path) -> bool:
    data = read_json(path)
    return isinstance(data, dict) and {"data", "split", "cider_d"} <= data.keys()


def _journal_ours(path: Path) -> bool:
    """Whether every line of `path` is a record `generate` appended; a last line cut short by a kill only when it is
    the start of one (append_jsonl cuts that line off, which must never be a person's text)."""
    lines = read_text(path, "the generations journal").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            record = parsed_json(line)
        except ValueError:
            if number == len(lines) and (line.startswith(RECORD_START) or RECORD_START.startswith(line)):
                continue
            return False
        if not (
            isinstance(record, dict) and isinstance(record.get("key"), str) and isinstance(record.get("text"), str)
        ):
            return False
    return True


def check_out_is_ours(out: Path) -> None:
    """VipeError when the results or a generations journal in `out` are not ones vipe wrote: a run replaces the
    one and appends to the others, and a person's files are never replaced."""
    refuse_foreign(out / RESULTS, _results_ours, "a result")
    for journal in sorted(out.glob("generations-*.jsonl")) if out.is_dir() else []:
        if JOURNAL.fullmatch(journal.name):
            refuse_foreign(journal, _journal_ours, "a generations journal")


def check_evaluate(config: EvalConfig) -> tuple[list[tuple[str, Path, list[int]]], Path]:
    """Every checkpoint, setting and path an evaluation reads, checked before any work: returns each
    checkpoint (as named, its folder, the context sizes to try) and the output folder."""
    checkpoints = [(arg, resolve_checkpoint(arg)) for arg in config.checkpoints]
    out = Path(config.out) if config.out else default_out(checkpoints[0][1])
    if (out / "config.json").is_file():  # another model's folder, or a checkpoint's the run does not evaluate
        raise VipeError(
            f"--out {out} holds a model (its config.json): evaluate writes beside a model, never in it, since a file "
            "added to a model's folder makes musicvid take it for another model; name another folder."
        )
    check_output_kind(out, folder=True, own=lambda name: name == RESULTS or bool(JOURNAL.fullmatch(name)))
    check_out_is_ours(out)
    refuse_overlap(
        [("the output folder", out)],
        inputs=[("the LyricCanvas file", config.data), *(("the checkpoint", c) for _, c in checkpoints)],
    )
    plan = []
    for name, checkpoint in checkpoints:
        if is_checkpoint_copy(checkpoint):
            raise VipeError(f"{checkpoint} is a copy `vipe train` makes while it saves a checkpoint: give its best/.")
        window = model_window(str(checkpoint), "the checkpoint")
        if config.max_new_tokens >= window:
            raise VipeError(
                f"--max-new-tokens {config.max_new_tokens} leaves no room for the context in the {window}-token "
                f"window of {checkpoint}."
            )
        check_causal(checkpoint)
        check_tokenizer_files(checkpoint)
        plan.append(
            (name, checkpoint, config.contexts if config.contexts is not None else [trained_context(checkpoint)])
        )
    return plan, out


def version_of(checkpoint: Path) -> list[str] | None:
    """The name, size and modification time of each file of `checkpoint` (weights, config, tokenizer): what
    `vipe train` changes when it replaces best/. None while it cannot be read (between the swap's renames)."""
    try:
        return [
            f"{p.name}:{info.st_size}:{info.st_mtime_ns}"
            for p in sorted(checkpoint.iterdir())
            if p.is_file() and (info := p.stat())
        ]
    except OSError:
        return None


def load_checkpoint(checkpoint: Path, device: str) -> tuple[ViPE, list[str]]:
    """The model of `checkpoint` and the version of it that was loaded: taken before loading and found the same
    after, so a checkpoint replaced meanwhile (by a `vipe train` still running) is refused, never named as one
    version while it is the other."""
    version = version_of(checkpoint)
    try:
        with quiet_loading():
            vipe = ViPE.from_pretrained(str(checkpoint), device=device)
    except VipeError as e:  # a tokenizer that does not fit: said whole (cannot_load would cut it short)
        raise VipeError(f"{str(e).rstrip('.')}.") from None
    except Exception as e:  # OSError, ValueError, RuntimeError for weights that do not fit the config ...
        raise cannot_load("the checkpoint", str(checkpoint), e) from None
    if version is None or version_of(checkpoint) != version:
        raise StageError(f"{checkpoint} changed while it was loaded (is `vipe train` still writing it?); run again.")
    return vipe, version


def _journal_name(
    name: str, checkpoint: Path, version: list[str], context_size: int, settings: GenerationSettings
) -> str:
    """Names the checkpoint and the version of it that generates (version_of, taken as it was loaded), so a
    retrained model never reuses old generations."""
    fingerprint = hashlib.sha1(f"{checkpoint.resolve()}|{version}|{settings}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^\w.-]+", "_", name).strip("._")[-40:] or "model"
    return f"generations-{slug}-{fingerprint}-ctx{context_size}.jsonl"


def generate(vipe: ViPE, items: list[dict], journal: Path, batch_size: int, progress: bool, desc: str) -> list[str]:
    """The model's elaboration of every item, reusing those a previous run journaled."""
    done = {r["key"]: r["text"] for r in read_jsonl(journal, journal=True)}
    keys = [f"{e['song_id']}:{e['line_index']}" for e in items]
    todo = [i for i, key in enumerate(keys) if key not in done]
    with progress_bar(
        total=len(items), initial=len(items) - len(todo), desc=desc, unit="line", disable=not progress
    ) as bar:
        for first in range(0, len(todo), batch_size):
            batch = todo[first : first + batch_size]
            texts = vipe.elaborate([items[i]["context"] for i in batch], batch_size=len(batch))
            for i, text in zip(batch, texts):
                done[keys[i]] = text
                append_jsonl(journal, {"key": keys[i], "text": text})
            bar.update(len(batch))
    return [done[key] for key in keys]


def profanity_table(lyrics: list[str], columns: dict[str, list[str]]) -> dict:
    """Mean profanity per bucket of lyric profanity, and the share of texts scored above 0.5."""
    try:
        from profanity_check import predict_prob
    except ImportError:
        raise VipeError(
            "the profanity check needs alt-profanity-check, from the training extra: "
            "pip install 'musicvid[train]' (or pass --no-profanity)."
        ) from None
    lyric_scores = predict_prob(lyrics)
    scores = {"lyrics": lyric_scores, **{name: predict_prob(texts) for name, texts in columns.items()}}
    buckets = []
    for low, high in BUCKETS:
        members = [i for i, s in enumerate(lyric_scores) if low <= s < high or (high == 1.0 and s == 1.0)]
        row = {"range": [low, high], "lines": len(members)}
        for name, values in scores.items():
            row[name] = round(float(sum(values[i] for i in members) / len(members)), 4) if members else None
        buckets.append(row)
    rate = {name: round(float((values > 0.5).mean()), 4) for name, values in scores.items()}
    return {"buckets": buckets, "rate_above_0.5": rate}


def run_evaluate(config: EvalConfig) -> dict:
    """Score every checkpoint; everything is checked first, and the output folder is held for the run."""
    frame = read_canvas(config.data)
    plan, out = check_evaluate(config)
    device = check_device(config.device)
    with hold_folder(out):
        remove_temporaries(out)  # a killed run's
        return _evaluate(config, frame, plan, out, device)


def _evaluate(config: EvalConfig, frame, plan: list[tuple[str, Path, list[int]]], out: Path, device: str) -> dict:
    settings = GenerationSettings(max_new_tokens=config.max_new_tokens, do_sample=False)

    cider_rows, model_columns = [], {}
    reference_items: list[dict] | None = None
    for name, checkpoint, contexts in plan:
        vipe, version = load_checkpoint(checkpoint, device)
        vipe.generation = settings
        for context_size in contexts:
            items = examples(frame, config.split, context_size)[: config.limit]
            if not items:
                raise VipeError(f"{config.data} has no labelled lines in its {config.split!r} split.")
            journal = out / _journal_name(name, checkpoint, version, context_size, settings)
            generated = generate(vipe, items, journal, config.batch_size, config.progress, f"{name} ctx {context_size}")
            score, _ = cider_d(generated, [e["elaboration"] for e in items])
            cider_rows.append(
                {"checkpoint": name, "context": context_size, "cider_d": round(score, 4), "examples": len(items)}
            )
            model_columns.setdefault(name, generated)
            reference_items = reference_items or items

    first = model_columns[plan[0][0]]
    samples = [
        {"lyric": e["lyric"], "teacher": e["elaboration"], "model": g} for e, g in zip(reference_items[:5], first)
    ]
    results = {"data": str(config.data), "split": config.split, "cider_d": cider_rows, "samples": samples}
    if config.profanity:
        # Every context size yields the same lines in the same order, so columns line up.
        lyrics = [e["lyric"] for e in reference_items]
        teacher = [e["elaboration"] for e in reference_items]
        results["profanity"] = profanity_table(lyrics, {"teacher": teacher, **model_columns})
    write_json(out / RESULTS, results)
    results["path"] = str(out / RESULTS)
    return results


def format_results(results: dict) -> str:
    lines = [
        f"CIDEr-D against the teacher on the {results['split']} split",
        f"{'checkpoint':<40} {'context':>7} {'lines':>7} {'CIDEr-D':>8}",
    ]
    for row in results["cider_d"]:
        lines.append(f"{row['checkpoint'][-40:]:<40} {row['context']:>7} {row['examples']:>7} {row['cider_d']:>8.3f}")
    profanity = results.get("profanity")
    if profanity:
        names = [n for n in profanity["rate_above_0.5"]]
        lines += [
            "",
            "mean profanity score by bucket of lyric profanity",
            f"{'bucket':<10} {'lines':>6} " + " ".join(f"{n[-12:]:>12}" for n in names),
        ]
        for row in profanity["buckets"]:
            cells = " ".join(f"{row[n]:>12.3f}" if row[n] is not None else f"{'-':>12}" for n in names)
            lines.append(f"{row['range'][0]:.1f}-{row['range'][1]:.1f}    {row['lines']:>6} {cells}")
        lines.append(f"{'> 0.5':<10} {'':>6} " + " ".join(f"{profanity['rate_above_0.5'][n]:>12.3f}" for n in names))
    return "\n".join(lines)
