"""What every stage checks before any work: numbers in range, outputs that are not inputs, and one run
at a time per output folder."""

from __future__ import annotations

import errno
import fcntl
import math
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from vipe_core.atomic import records_in
from vipe_core.errors import VipeError
from vipe_core.resume import CHECKPOINT_COPY, CHECKPOINTS, STATE_FILE
from vipe_core.train_config import TRAINING_INFO

LOCK_FILE = ".vipe.lock"

Named = tuple[str, "str | os.PathLike | None"]  # what a path is, for the message ("the lyrics folder"), and the path


def finite_in(value: float, low: float, high: float = math.inf, *, above: bool = False) -> bool:
    """True when `value` is a finite number from `low` (excluded when `above`) to `high` (included)."""
    return math.isfinite(value) and (value > low if above else value >= low) and value <= high


def _same(a: Path, b: Path) -> bool:
    """The same file or folder: by inode where both exist (hard links, bind mounts), else by resolved path."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    return _same(path, folder) or path.resolve().is_relative_to(folder.resolve())


def refuse_overlap(outputs: list[Named], inputs: list[Named] = (), scanned: list[Named] = ()) -> None:
    """VipeError unless no output is an input. `outputs`: what the stage writes or replaces (files or folders);
    `inputs`: files and folders it reads, refused at or inside an output, and an output inside an input folder
    (a checkpoint, a model) is refused too; `scanned`: folders whose files it reads, where an output may not lie
    at all. Paths that are None, and inputs that do not exist, are skipped."""
    for out_what, out in outputs:
        if out is None:
            continue
        out = Path(out)
        for in_what, source in inputs:
            if source is not None and Path(source).exists() and _inside(Path(source), out):
                raise VipeError(f"{out_what} {out} would overwrite {in_what} {source}; choose another --out.")
        folders = [*scanned, *((what, source) for what, source in inputs if source and Path(source).is_dir())]
        for in_what, folder in folders:
            if folder is not None and _inside(out, Path(folder)):
                raise VipeError(
                    f"{out_what} {out} lies in {in_what} {folder}, which this stage reads; choose another --out."
                )


def checkpoint_around(path: str | os.PathLike) -> Path | None:
    """The checkpoint of a `vipe train` run that `path` is or lies in, else None: a folder holding the file that
    marks best/ or last/ as vipe's, or a best/ or last/ beside a run's lock file (the run may not have saved it
    yet). The run replaces it whole, deleting whatever else was put in it."""
    resolved = Path(path).resolve()
    for folder in (resolved, *resolved.parents):
        if os.path.isfile(folder / TRAINING_INFO) or os.path.isfile(folder / STATE_FILE):
            return folder
        if folder.name in CHECKPOINTS and os.path.isfile(folder.parent / LOCK_FILE):
            return folder
    return None


def is_checkpoint_copy(path: str | os.PathLike) -> bool:
    """Whether `path` is a copy a `vipe train` run makes of best/ or last/ while it saves them (resume.CHECKPOINT_COPY,
    beside the run's lock file): half of a checkpoint where the run was stopped in a save."""
    resolved = Path(path).resolve()
    return bool(CHECKPOINT_COPY.fullmatch(resolved.name)) and os.path.isfile(resolved.parent / LOCK_FILE)


def check_output_kind(path: str | os.PathLike, *, folder: bool, own: Callable[[str], bool] | None = None) -> None:
    """VipeError when --out names a file where a folder is written, or a folder where a file is, or lies in a file, or
    in a checkpoint of a `vipe train` run (checkpoint_around), which that run would delete with it; or, given what
    the stage's `own` records are called, a folder holding another's (a .json or .jsonl: a stage that reads the
    folder, filter or build, would take the records it adds there for its own)."""
    path = Path(path)
    try:
        path.resolve()
    except (RuntimeError, OSError):  # (Python 3.11 raises RuntimeError for a loop)
        raise VipeError(
            f"--out {path} is a link that leads round in a loop; remove it or choose another --out."
        ) from None
    if folder and path.exists() and not path.is_dir():
        kind = "a file" if path.is_file() else "a special file (a device or a pipe)"  # (/dev/null)
        raise VipeError(f"--out {path} is {kind}, but this stage writes a folder there; choose another --out.")
    if not folder and path.is_dir():
        raise VipeError(f"--out {path} is a folder, but this stage writes a file; give a file name.")
    above = next((p for p in path.parents if os.path.lexists(p)), None)  # (as given: "." ends a relative one)
    if above is not None and not above.is_dir():  # (a folder can not be made in it: as train's --out says)
        raise VipeError(f"--out {path} lies in {above}, which is a file, not a folder; choose another --out.")
    checkpoint = checkpoint_around(path)
    if checkpoint is not None:
        where = "is" if checkpoint == path.resolve() else f"lies in {checkpoint},"
        raise VipeError(
            f"--out {path} {where} a checkpoint that the `vipe train` run in {checkpoint.parent} replaces whole, "
            "deleting whatever else is in it; choose another --out."
        )
    records = records_in(path, "*.json*") if folder and own is not None and path.is_dir() else []
    if other := next((p for p in records if p.suffix in (".json", ".jsonl") and not own(p.name)), None):
        raise VipeError(
            f"--out {path} holds {other.name}, a record this stage does not write (another stage's, whose reader "
            "would take this stage's for its own); choose another --out."
        )


def refuse_foreign(path: Path, ours: Callable[[Path], bool], what: str) -> None:
    """VipeError when `path` exists but is not a plain file that `ours` takes for vipe's: a person's file (or a
    link) at an output's name is never replaced nor appended to, the rule `vipe train` keeps for its result file.
    `ours` may raise VipeError, ValueError or TypeError for a file it cannot read: not ours either."""
    if not os.path.lexists(path):
        return
    if os.path.islink(path):
        raise VipeError(f"{path} is a link, and vipe writes through none; move it away or choose another --out.")
    try:
        mine = stat.S_ISREG(os.lstat(path).st_mode) and ours(path)
    except (OSError, VipeError, ValueError, TypeError):
        mine = False
    if not mine:
        raise VipeError(f"{path} is not {what} vipe wrote; move it away or choose another --out.")


def _open_lock(path: Path) -> int:
    """The lock file's descriptor, made if missing. An existing one is opened as it is, never truncated or
    written, and only when it is a plain file of one link: a link there (a symlink, a hard link to a person's
    file) is refused (VipeError), so vipe never writes through one."""
    try:
        return os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        pass
    refusal = VipeError(
        f"{path} is not vipe's lock file (a link, or not a plain file); remove it or choose another --out."
    )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO there must not block
    except OSError as e:
        if e.errno == errno.ELOOP:  # a symlink
            raise refusal from None
        raise
    info = os.fstat(fd)
    if not (stat.S_ISREG(info.st_mode) and info.st_nlink == 1):
        os.close(fd)
        raise refusal
    return fd


@contextmanager
def hold_folder(folder: str | os.PathLike) -> Iterator[None]:
    """Hold an output folder (made if missing) for this run; a second run on it is refused. The hold is a
    non-blocking flock on folder/.vipe.lock: the OS releases it with the process, so a killed run never
    leaves the folder held. The lock file holds nothing: it is only ever made, never written. A folder the hold made
    is removed where the run fails having written nothing in it."""
    folder = Path(folder)
    made = not os.path.lexists(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = _open_lock(folder / LOCK_FILE)
    except OSError as e:
        raise VipeError(f"could not use {folder} as the output folder ({e.strerror or e}).") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise VipeError(f"{folder} is in use by another vipe run; wait for it or choose another --out.") from None
    try:
        yield
    except BaseException:
        if made and os.listdir(folder) == [LOCK_FILE]:  # (a run refused at its first step leaves no folder)
            os.unlink(folder / LOCK_FILE)
            os.rmdir(folder)
        raise
    finally:
        os.close(fd)


def is_held(folder: str | os.PathLike, lock: str = LOCK_FILE) -> bool:
    """True while a run holds `folder` (hold_folder; `lock`: another tool's lock file of that kind, musicvid batch's).
    Read only: a missing lock file is not made, and the probe is a shared lock tried and let go at once: two readers'
    probes at one time do not take each other for a run, as exclusive ones would (a run starting in that very instant
    is refused, as by any probe). Where the file system has no such locks, False: the run's own lock says it."""
    try:
        fd = os.open(Path(folder) / lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False  # (none there, or not one vipe made: hold_folder refuses to run on that)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing lets the shared lock go)
    return False


# How many layers or blocks a model may have (GPT-2 XL has 48, a UNet's block 3): a count past it is refused, not built
# on the meta device to be counted (a billion layers took minutes, and gigabytes), nor one below 0 (a render's crash)
MAX_LAYERS = 1000
_COUNTS = {"layer", "layers", "blocks", "depth"}  # (a word of the key: n_layer, num_hidden_layers, layers_per_block)
_HOW_MANY = {"n", "num", "per", "layers", "blocks", "depth"}  # (not an index: vision_feature_layer -2 counts back)
_EPSILON = {"eps", "epsilon"}  # (a norm's: layer_norm_eps, layer_norm_epsilon; below 0, a variance may be too)


def impossible_number(config, where: str = "", infinite: bool = False) -> tuple[str, float] | None:
    """The first key of a config (nested ones dotted) whose number no model can have, and that number: NaN or
    infinite (JSON's parser takes both), a number of layers (a whole number under a key with a word of _COUNTS)
    over MAX_LAYERS, a count (a key with a word of _HOW_MANY: n_head, num_attention_heads) or an epsilon (_EPSILON)
    below 0. `infinite`: an infinity is a number there (a scheduler's lambda_min_clipped is -inf)."""
    if isinstance(config, float) and (math.isnan(config) if infinite else not math.isfinite(config)):
        return where, config
    words = set(str(where).rsplit(".", 1)[-1].lower().split("_"))
    if isinstance(config, (int, float)) and not isinstance(config, bool):
        too_many = words & _COUNTS and isinstance(config, int) and config > MAX_LAYERS
        if too_many or config < 0 and words & (_HOW_MANY | _EPSILON):
            return where, config
    entries = config.items() if isinstance(config, dict) else enumerate(config) if isinstance(config, list) else ()
    for key, value in entries:
        key = where if isinstance(config, list) else key  # (a list's numbers are its key's)
        found = impossible_number(value, f"{where}.{key}" if where and isinstance(config, dict) else str(key), infinite)
        if found is not None:
            return found
    return None


def refuse_a_path(name: str, what: str, kind: str) -> None:
    """VipeError where `name` is no folder: a file, a link to none, a pipe, or a path that is no hub name either
    (transformers would take a file for a config, or ask the hub for what is not there)."""
    if not name:  # (`--base ''`)
        raise VipeError(f"{what} is empty: give {kind}, or a hub name.")
    if os.path.isdir(name):
        return
    if os.path.lexists(name):
        there = "is a file" if os.path.isfile(name) else "is no folder (a link to none, a pipe or a device)"
    elif re.fullmatch(r"[\w-][\w.-]*(/[\w.-]+)?", name):
        return  # (a hub name)
    else:
        there = "is not there"
    raise VipeError(f"{what} {name} {there}: give {kind}, or a hub name.")
