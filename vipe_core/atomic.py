"""Atomic writes, for both packages: a killed run never leaves a half-written file that a rerun would
trust. Everything is written to `.musicvid-<pid>.<name>.<random><suffix>` beside its place and renamed
onto it. The fixed prefix and the writer's process id make a temporary recognizably ours, and tell
whether its writer still runs: a sweep of leftovers (musicvid.core.files, `remove_temporaries` here)
removes nothing else, so a person's dotfiles and editor swap files beside an output are never taken for ours.
Readers of a folder of records (`records_in`) skip every hidden file, temporaries included."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import: reading it means setting it, which is not safe once writer threads run.
UMASK = _umask()


TEMPORARY_MARK = ".musicvid-"
# mkstemp's part: 8 characters of [a-z0-9_]; the suffix keeps the artifact's, so that ffmpeg, Pillow and
# pyarrow still know the format by the name.
_TEMPORARY = re.compile(rf"{re.escape(TEMPORARY_MARK)}(?P<pid>\d+)\.(?P<name>.+)\.[a-z0-9_]{{8}}(\.[^./]+)$", re.DOTALL)
# What a temporary's name adds to the artifact's: the mark, a process id, the dots, mkstemp's part and a
# suffix. An artifact's name longer than NAME_MAX less this cannot be written atomically.
TEMPORARY_EXTRA_BYTES = len(TEMPORARY_MARK) + 7 + 2 + 8 + 16


NAME_BYTES = 255  # the longest name of a file or folder that Linux's file systems take (ext4, XFS, Btrfs, tmpfs)
# The longest stem of a record's file named after a song or an artist, in bytes: with its suffix and the marks of
# its temporary around it (temporary_prefix), within the 255 a file system takes
LONGEST_STEM = 150


def name_of(stem: str, whole: str) -> str:
    """`stem` (a file name made of `whole`, a song id or an artist) where it fits LONGEST_STEM bytes; else its start
    and a hash of `whole`, so that two long names that start alike stay two."""
    if len(stem.encode()) <= LONGEST_STEM:
        return stem
    start = stem.encode()[: LONGEST_STEM - 9].decode("utf-8", "ignore")
    return f"{start}-{hashlib.sha1(whole.encode()).hexdigest()[:8]}"


def temporary_prefix(path: Path) -> str:
    """The start of the name of this process's temporaries of `path`."""
    return f"{TEMPORARY_MARK}{os.getpid()}.{path.name}."


def temporary_of(leftover: Path) -> tuple[int, str] | None:
    """The writer's process id and the artifact's name of one of our temporaries; None for any other file."""
    match = _TEMPORARY.fullmatch(leftover.name)
    return (int(match["pid"]), match["name"]) if match else None


def remove_temporaries(folder: str | os.PathLike) -> None:
    """Remove every temporary of ours in `folder`, which this run holds (so their writers are dead runs);
    nothing else there is touched, and a missing folder is no error."""
    folder = Path(folder)
    if folder.is_dir():
        for leftover in folder.glob(f"{glob.escape(TEMPORARY_MARK)}*"):
            if temporary_of(leftover) and leftover.is_file():
                leftover.unlink(missing_ok=True)


def records_in(folder: Path, pattern: str) -> list[Path]:
    """The files of `folder` matching `pattern`, sorted by name, less hidden ones: a temporary (a killed
    writer's, cut short or whole, or a live one's) is no record, and neither is a dotfile an editor or an OS
    leaves (macOS's `._NAME` copies). pathlib's glob matches dotfiles, so they are taken out here."""
    return sorted(p for p in folder.glob(pattern) if not p.name.startswith("."))


def new_temporary(path: Path, suffix: str | None = None, folder: Path | None = None) -> Path:
    """A new, empty temporary of `path`, in `folder` (beside `path` by default)."""
    fd, tmp = tempfile.mkstemp(
        prefix=temporary_prefix(path), suffix=suffix or path.suffix or ".tmp", dir=folder or path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        tmp_path.chmod(0o666 & ~UMASK)  # mkstemp makes owner-only files; an artifact gets the usual mode
    except OSError:
        tmp_path.unlink(missing_ok=True)
        raise
    return tmp_path


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it is renamed onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = new_temporary(path, suffix)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as error:
        if error.filename is None and error.errno is not None:  # (a library's write may name none: PIL's close)
            raise OSError(error.errno, error.strerror, str(path)) from error
        raise
    finally:
        tmp_path.unlink(missing_ok=True)


def write_json(path: str | os.PathLike, data: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
