"""The resumable state of a training run (last/ in --out): what it holds, and the checks, made before any
work, that a saved one is whole and belongs to a run with the same settings."""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from vipe_core.errors import VipeError
from vipe_core.records import from_dict

STATE_FILE = "trainer_state.json"  # written by vipe into last/ only: marks the folder as vipe's
# What accelerate's save_state writes beside it (safe_serialization=False); torch saves each as a zip archive.
STATE_ARCHIVES = ("pytorch_model.bin", "optimizer.bin", "scheduler.bin")


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
    missing = [name for name in STATE_ARCHIVES if not (last / name).is_file()]
    missing += [] if any(last.glob("random_states_*.pkl")) else ["random_states_0.pkl"]
    if missing:
        raise damaged(last, f"{', '.join(missing)} missing")
    for name in STATE_ARCHIVES:
        if not zipfile.is_zipfile(last / name):
            raise damaged(last, f"{name} is cut short or not a saved state")
    return state


def load_saved(accelerator, last: Path) -> None:
    """Restore model, optimizer, schedule and RNG from last/ (checked by saved_state; a damage that only
    loading finds is refused alike)."""
    try:
        accelerator.load_state(str(last))
    except Exception as e:  # torch and pickle raise many kinds for a damaged archive
        raise damaged(last, reason(e)) from None
