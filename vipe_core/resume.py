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

from vipe_core.atomic import remove_temporaries
from vipe_core.errors import VipeError
from vipe_core.records import from_dict

STATE_FILE = "trainer_state.json"  # written by vipe into last/ only: marks the folder as vipe's
# What accelerate's save_state writes beside it (safe_serialization=False); torch saves each as a zip archive.
STATE_ARCHIVES = ("pytorch_model.bin", "optimizer.bin", "scheduler.bin")
# The folders made beside best/ and last/ while they are saved (records.atomic_dir and replace_dir: mkdtemp's
# 8 characters; train.save_last): only a killed run leaves one behind.
_CHECKPOINT_COPY = re.compile(r"\.(best|last)\.(old\.)?[a-z0-9_]{8}|\.last\.saving")


@dataclass
class TrainState:
    epoch: int = 0
    batches_done: int = 0  # micro-batches of `epoch` already trained on
    step: int = 0  # optimizer steps in all
    best_val_loss: float = math.inf
    evaluations_without_improvement: int = 0
    history: list[dict] = field(default_factory=list)
    finished: bool = False  # all epochs done, or stopped early
    run: dict = field(default_factory=dict)  # the settings a resumed run must share


def reason(error: BaseException) -> str:
    """The first line of an error's message, short enough for a one-sentence refusal."""
    text = str(error).strip()
    return text.splitlines()[0][:160] if text else type(error).__name__


def damaged(last: Path, why: str) -> VipeError:
    return VipeError(f"{last} is damaged ({why}); pass --restart to start over, or choose another --out.")


def _changes(saved: dict, now: dict) -> str:
    """The settings that differ, as "name old -> new" (a data file by the start of its sha256)."""

    def shown(key: str, value) -> str:
        return str(value)[:12] if key == "data_sha256" and value else str(value)

    keys = [k for k in {**saved, **now} if saved.get(k) != now.get(k)]
    return ", ".join(f"{k} {shown(k, saved.get(k))} -> {shown(k, now.get(k))}" for k in keys)


def saved_state(out: Path, run: dict, restart: bool) -> TrainState | None:
    """The state out/last holds when a run with the settings `run` may continue from it; None to start fresh.

    VipeError (one sentence) for a last/ that is damaged (unreadable state, a state file missing or cut
    short) or that holds a run with other settings, naming them; `restart` ignores last/ altogether."""
    last = out / "last"
    if restart or not (last / STATE_FILE).exists():
        return None
    try:
        state = from_dict(TrainState, json.loads((last / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as e:
        raise damaged(last, f"{STATE_FILE}: {reason(e)}") from None
    if state.run != run:
        raise VipeError(
            f"{out} holds a run with other settings ({_changes(state.run, run)}); pass --restart or choose another "
            "--out."
        )
    why = _not_whole(last)
    if why:
        raise damaged(last, why)
    return state


def _not_whole(folder: Path) -> str | None:
    """What is missing or cut short among the archives of a saved state; None when they are whole."""
    missing = [name for name in STATE_ARCHIVES if not (folder / name).is_file()]
    missing += [] if any(folder.glob("random_states_*.pkl")) else ["random_states_0.pkl"]
    if missing:
        return f"{', '.join(missing)} missing"
    for name in STATE_ARCHIVES:
        if not zipfile.is_zipfile(folder / name):
            return f"{name} is cut short or not a saved state"
    return None


def _whole_step(folder: Path) -> int | None:
    """The step of the whole saved state `folder` holds; None when it holds none, or a damaged one."""
    try:
        state = from_dict(TrainState, json.loads((folder / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return None
    return None if _not_whole(folder) else state.step


def _checkpoint_copies(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if _CHECKPOINT_COPY.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]


def recover_last(out: Path) -> str | None:
    """Undo what a run killed while saving left in `out`, which this run holds (so no run writes there);
    returns the line to print when a saved state was put back, else None.

    replace_dir swaps last/ in with two renames: a kill between them leaves no last/, the old state in
    .last.old.XXXXXXXX and the new one in .last.saving. The newest whole one becomes last/ again, so the
    run resumes instead of starting over. Then every checkpoint copy of a dead run (.best.*, .last.old.*,
    .last.saving) and every temporary file is removed. best/ needs no putting back: it is saved before
    last/, so a run resumed from last/ reaches the same validation loss and saves it again."""
    last = out / "last"
    line = None
    if not last.exists():
        saved = [
            (step, f)
            for f in _checkpoint_copies(out)
            if f.name.startswith(".last.") and (step := _whole_step(f)) is not None
        ]
        if saved:
            # .last.saving is the newer of two states of one step (saved again at the end of an epoch)
            step, folder = max(saved, key=lambda found: (found[0], found[1].name == ".last.saving"))
            os.rename(folder, last)
            line = f"restored {last} from {folder.name}, which a run killed while saving it left: step {step}"
    for copy in _checkpoint_copies(out):
        shutil.rmtree(copy, ignore_errors=True)
    remove_temporaries(out)
    return line


def load_saved(accelerator, last: Path) -> None:
    """Restore model, optimizer, schedule and RNG from last/ (checked by saved_state; a damage that only
    loading finds is refused alike)."""
    try:
        accelerator.load_state(str(last))
    except Exception as e:  # torch and pickle raise many kinds for a damaged archive
        raise damaged(last, reason(e)) from None
