"""Atomic artifact writes: a killed run never leaves a half-written file that a rerun would trust."""

from __future__ import annotations

import glob
import json
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from musicvid.errors import UserError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import: reading it means setting it, which is not safe once writer threads run.
UMASK = _umask()


def temporary_prefix(path: Path) -> str:
    return f".{path.name}."


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it is renamed onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=suffix or path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    tmp_path.chmod(0o666 & ~UMASK)  # mkstemp makes owner-only files; an artifact gets the usual mode
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def write_json(path: str | os.PathLike, data: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def remove_temporaries(path: str | os.PathLike) -> None:
    """What a killed run left of its writes to `path` (the temporary names atomic_path gives)."""
    path = Path(path)
    if path.parent.is_dir():
        for leftover in path.parent.glob(f"{glob.escape(temporary_prefix(path))}*"):
            leftover.unlink(missing_ok=True)


def remove_all_temporaries(folder: str | os.PathLike) -> None:
    """Every temporary file atomic_path may have left in a folder the program owns (a work directory)."""
    folder = Path(folder)
    if folder.is_dir():
        for leftover in folder.glob(".*.*"):
            if leftover.is_file():
                leftover.unlink(missing_ok=True)


def check_file(path: Path, what: str) -> None:
    """Refuse, in one sentence, a path that is not a readable, non-empty regular file. Checked before
    it is opened: a FIFO or a device would block the read or never end it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{path} is a directory, not a file ({what} wanted)")
    if not stat.S_ISREG(mode):
        raise UserError(f"{path} is not a regular file (a pipe or a device?); give the {what} itself")
    try:
        with path.open("rb") as f:
            empty = not f.read(1)
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    if empty:
        raise UserError(f"{path} is empty (0 bytes)")


def check_output(path: Path, what: str = "output") -> None:
    """Refuse, before any work, an output that could not be written at the end of it."""
    if path.is_dir():
        raise UserError(f"{what} {path} is a directory: give a file name, e.g. {path / 'video.mp4'}")
    folder = path.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UserError(f"{what} {path} cannot be written: {existing} is a file, not a folder")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{what} {path} cannot be written: the folder {existing} is read-only")


def parse_json(text: str, what: str) -> Any:
    """JSON a person gave us, or one sentence saying why it is not usable."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{what} is not valid JSON: {e}") from None
    except RecursionError:
        raise UserError(f"{what} is nested too deeply to be a storyboard or transcript") from None
