"""The resumable state of a training run (last/ in --out): what it holds, the checks, made before any
work, that a saved one is whole and belongs to a run with the same settings, and its recovery from a run
killed while saving it."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from vipe_core.atomic import remove_temporaries, temporary_of
from vipe_core.errors import VipeError
from vipe_core.records import COPY_MARKER, from_dict, is_marked, remove_copy
from vipe_core.train_config import TRAINING_INFO

# The folders a `vipe train` run replaces whole in its --out (vipe_core.train): its checkpoints.
CHECKPOINTS = ("best", "last")
STATE_FILE = "trainer_state.json"  # written by vipe into last/ only: marks the folder as vipe's
# What accelerate's save_state writes beside it (safe_serialization=False); torch saves each as a zip archive.
STATE_ARCHIVES = ("pytorch_model.bin", "optimizer.bin", "scheduler.bin")
# The folders made beside best/ and last/ while they are saved (records.atomic_dir and replace_dir: mkdtemp's
# 8 characters; train.save_last): only a killed run leaves one behind, marked (records.COPY_MARKER) or empty.
CHECKPOINT_COPY = re.compile(r"\.(best|last)\.(old\.)?[a-z0-9_]{8}|\.last\.saving")
SAVING = ".last.saving"  # the one fixed name (train.save_last): a person's folder there would be overwritten
# Every file vipe writes in a checkpoint: save_pretrained's model and tokenizer, accelerate's save_state, vipe's
# markers (and write_json's temporaries). A copy holding anything else is a person's folder, never removed.
_VIPE_FILE = re.compile(
    r"config\.json|generation_config\.json|model(-\d+-of-\d+)?\.safetensors(\.index\.json)?"
    r"|tokenizer(_config)?\.json|special_tokens_map\.json|added_tokens\.json|vocab\.json|merges\.txt"
    r"|tokenizer\.model|chat_template\.jinja|(pytorch_model|optimizer|scheduler|sampler|dl_state_dict)(_\d+)?\.bin"
    rf"|random_states_\d+\.pkl|scaler\.pt|{re.escape(STATE_FILE)}|{re.escape(TRAINING_INFO)}|{re.escape(COPY_MARKER)}"
)


@dataclass
class TrainState:
    epoch: int = 0
    batches_done: int = 0  # micro-batches of `epoch` already trained on
    step: int = 0  # optimizer steps in all
    best_val_loss: float = math.inf
    evaluations_without_improvement: int = 0
    history: list[dict] = field(default_factory=list)
    finished: bool = False  # all epochs done, or stopped early
    seconds: float = 0.0  # trained so far, over every run of it (a resumed run adds its own)
    run: dict = field(default_factory=dict)  # the settings a resumed run must share


def reason(error: BaseException) -> str:
    """The first line of an error's message (with the next, where it ends in a colon: "Validation error for field
    'n_embd':"), short enough for a one-sentence refusal: cut after a word, "…"."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    first = " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]
    return first if len(first) <= 160 else first[:160].rsplit(" ", 1)[0] + "…"


def damaged(last: Path, why: str) -> VipeError:
    return VipeError(f"{last} is damaged ({why}); pass --restart to start over, or choose another --out.")


def _one_setting(saved, now) -> bool:
    """Whether a saved setting and this run's are one: equal, or one folder written two ways (gbase/, ./gbase)."""
    if saved == now:
        return True
    try:
        return isinstance(saved, str) and isinstance(now, str) and os.path.samefile(saved, now)
    except (OSError, ValueError):  # (a hub name, or a folder gone)
        return False


def _changes(saved: dict, now: dict) -> str:
    """The settings that differ, as "name old -> new" (a data file by the start of its sha256); "" for none."""

    def shown(key: str, value) -> str:
        return str(value)[:12] if key == "data_sha256" and value else str(value)

    keys = [k for k in {**saved, **now} if not _one_setting(saved.get(k), now.get(k))]
    return ", ".join(f"{k} {shown(k, saved.get(k))} -> {shown(k, now.get(k))}" for k in keys)


def saved_state(out: Path, run: dict, restart: bool, used: bool) -> TrainState | None:
    """The state a run with the settings `run` continues from, when it may: out/last's, or the copy recover_last
    puts back as last/ (`used`: see _checkpoint_copies); None to start fresh.

    VipeError (one sentence) for a state that is damaged (unreadable state, a state file missing or cut
    short) or that holds a run with other settings, naming them; `restart` ignores last/ altogether."""
    found = None if restart else _restorable(out, used)
    last = found[1] if found else out / "last"
    if restart or not (last / STATE_FILE).exists():
        return None
    try:
        state = from_dict(TrainState, json.loads((last / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as e:
        raise damaged(last, f"{STATE_FILE}: {reason(e)}") from None
    if changed := _changes(state.run, run):
        raise VipeError(f"{out} holds a run with other settings ({changed}); pass --restart or choose another --out.")
    why = _not_whole(last)
    if why:
        raise damaged(last, why)
    return state


def resume_line(last: Path, state: TrainState, epochs: int) -> str:
    """What a run continuing from `state` says: where it goes on from, or that nothing is left to train."""
    if state.finished or state.epoch >= epochs:
        return f"the run in {last.parent} is already finished (step {state.step}); pass --restart to train it again"
    return f"resuming from {last}: epoch {state.epoch + 1}, step {state.step}"


def _not_whole(folder: Path) -> str | None:
    """What is missing or cut short among the archives of a saved state; None when they are whole."""
    missing = [name for name in STATE_ARCHIVES if not (folder / name).is_file()]
    missing += [] if any(folder.glob("random_states_*.pkl")) else ["random_states_0.pkl"]
    if missing:
        return f"{', '.join(missing)} missing"
    # torch.save writes each, the RNG states too, as a zip archive: anything else, or a member whose bytes no longer
    # match their CRC, is damaged
    for path in [*(folder / name for name in STATE_ARCHIVES), *sorted(folder.glob("random_states_*.pkl"))]:
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            bad = path.name
        if bad is not None:
            return f"{path.name} is cut short, damaged or not a saved state"
    # accelerate's load_state goes on where it cannot set the random states (a resumed run then draws other batches)
    unset = next((path for path in sorted(folder.glob("random_states_*.pkl")) if not _random_states(path)), None)
    return f"{unset.name} holds no random states as accelerate saves them" if unset else None


def _random_states(path: Path) -> bool:
    """Whether `path` holds the random states accelerate's save_state writes: Python's, NumPy's and torch's."""
    import torch
    from accelerate.utils import load

    try:
        states = load(path)
    except Exception:  # (what torch's weights-only unpickler refuses, or a file cut short)
        return False
    kinds = {"random_state": tuple, "numpy_random_seed": tuple, "torch_manual_seed": torch.Tensor}
    return isinstance(states, dict) and all(isinstance(states.get(key), kind) for key, kind in kinds.items())


def _whole_step(folder: Path) -> int | None:
    """The step of the whole saved state `folder` holds; None when it holds none, or a damaged one."""
    try:
        state = from_dict(TrainState, json.loads((folder / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return None
    return None if _not_whole(folder) else state.step


def _ours(copy: Path) -> bool:
    """Whether a folder of a copy's name is one a vipe run made: empty (a run killed before it marked it), or marked
    (records.COPY_MARKER, written before anything else) and holding only files vipe writes there."""
    entries = list(copy.iterdir())
    if not entries:
        return True
    return is_marked(copy) and all(
        f.is_file() and not f.is_symlink() and bool(_VIPE_FILE.fullmatch(f.name) or temporary_of(f)) for f in entries
    )


def _checkpoint_copies(out: Path, used: bool) -> list[Path]:
    """The copies a killed vipe run left in `out`: none unless a vipe run `used` the folder before (its lock file
    was there before this run took it), and only those _ours takes for vipe's: a person's folder of such a name
    is left alone."""
    if not used or not out.is_dir():
        return []
    return [
        p for p in out.iterdir() if CHECKPOINT_COPY.fullmatch(p.name) and p.is_dir() and not p.is_symlink() and _ours(p)
    ]


def check_copies(out: Path, used: bool) -> None:
    """VipeError for a folder at .last.saving that is not a killed run's copy: save_last empties that name first."""
    saving = out / SAVING
    if (saving.exists() or saving.is_symlink()) and saving not in _checkpoint_copies(out, used):
        raise VipeError(
            f"{saving} is not vipe's, and a run saves its state under that name; move it away or choose another --out."
        )


def _restorable(out: Path, used: bool) -> tuple[int, Path] | None:
    """The newest whole state among the copies of last/ a killed run left, when there is no last/ (and a step)."""
    if (out / "last").exists():
        return None
    saved = [
        (step, f)
        for f in _checkpoint_copies(out, used)
        if f.name.startswith(".last.") and (step := _whole_step(f)) is not None
    ]
    # .last.saving is the newer of two states of one step (saved again at the end of an epoch)
    return max(saved, key=lambda found: (found[0], found[1].name == SAVING)) if saved else None


def recover_last(out: Path, used: bool) -> str | None:
    """Undo what a run killed while saving left in `out`, which this run holds (so no run writes there), once
    every check has passed; returns the line to print when a saved state was put back, else None.

    replace_dir swaps last/ in with two renames: a kill between them leaves no last/, the old state in
    .last.old.XXXXXXXX and the new one in .last.saving. The newest whole one becomes last/ again, so the
    run resumes instead of starting over. The copy marker is taken off best/ and last/, and every checkpoint copy
    of a dead run (.best.*, .last.old.*, .last.saving; see _checkpoint_copies) and every temporary file is removed.
    best/ needs no putting back: it is saved before last/, so a run resumed from last/ reaches the same validation
    loss and saves it again."""
    found, line = _restorable(out, used), None
    if found:
        step, folder = found
        os.rename(folder, out / "last")
        line = f"restored {out / 'last'} from {folder.name}, which a run killed while saving it left: step {step}"
    for checkpoint in CHECKPOINTS:  # a checkpoint again, or one a kill caught as it was moved aside or put in place
        (out / checkpoint / COPY_MARKER).unlink(missing_ok=True)
    for copy in _checkpoint_copies(out, used):
        remove_copy(copy)
    remove_temporaries(out)
    return line


def retire(out: Path, result_file: str, restart: bool) -> None:
    """Before a run changes best/: its result file goes (written again at the end), so that it never describes
    a best/ a killed run has since replaced; a restart's last/ goes too, or a later resume would continue the old
    run beside the new one's best/. Both are vipe's (train_checks.check_out_is_ours)."""
    (out / result_file).unlink(missing_ok=True)
    if restart:
        shutil.rmtree(out / "last", ignore_errors=True)


def load_saved(accelerator, last: Path) -> None:
    """Restore model, optimizer, schedule and RNG from last/ (checked by saved_state; a damage that only
    loading finds is refused alike)."""
    try:
        accelerator.load_state(str(last))
    except Exception as e:  # torch and pickle raise many kinds for a damaged archive
        raise damaged(last, reason(e)) from None
