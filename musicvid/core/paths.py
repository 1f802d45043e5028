"""Paths as the system takes them and as a run records them, checked before any work: a name the file system
cannot take (over 255 bytes, a path over 4,096), a folder without search permission, a path whose absolute form
is not UTF-8 (a byte of Latin-1 in a folder's name), which the run's records (outputs.json, report.json) cannot hold,
and a path the run makes (an output, a work directory) with a control character in it. Each is refused in one
sentence that names the path, shortened and on one line."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from musicvid.core.errors import UserError
from vipe_core.atomic import NAME_BYTES

SHOWN_CHARS = 40  # of a long path, a message shows this many characters at each end
# What pathlib's exists() and is_file() read as "nothing there"; any other error is the system refusing the path.
NOTHING_THERE = {errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0 (newline and tab too), DEL and C1: Unicode's category Cc
# What a message never prints as itself: the controls, and the bidi embeddings, overrides and isolates (U+202E turns
# the rest of the row around in a terminal that reads both directions)
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(path: str | os.PathLike) -> str:
    """`path` as a message shows it: printable (a byte that is not UTF-8 as \\xNN), and its first and last
    SHOWN_CHARS characters where it is longer (a path of 4 KB is no sentence)."""
    text = printable(os.fspath(path))
    return text if len(text) <= 2 * SHOWN_CHARS + 1 else f"{text[:SHOWN_CHARS]}…{text[-SHOWN_CHARS:]}"


def printable(text: str) -> str:
    """`text` with the surrogates that stand for bytes that are not UTF-8 written as \\xNN (other lone ones as
    \\udNNN): printed as they are, they stop the print; and its control characters and bidi controls as their code
    points (U+000A, U+202E), which would split its line, command the terminal or turn the row around."""
    try:
        text = os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _UNSHOWN.sub(lambda found: code_point(found[0]), text)


# Control characters (C0 but tab, line feed and carriage return; DEL; C1) are in no text a person gives (a lyric, a
# title, a style): an SRT reader stops at a NUL, a terminal obeys an ESC.
TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_at(text: str) -> int | None:
    """Where `text` holds its first control character (TEXT_CONTROL), or None."""
    found = TEXT_CONTROL.search(text)
    return found.start() if found else None


def without_controls(name: str) -> str:
    """`name` with each control character (Unicode's Cc: a newline, a tab) a space: a name a program picks from one
    it was given (the page's copy of an upload) must be one musicvid writes (check_made)."""
    return _CONTROL.sub(" ", name)


def code_point(character: str) -> str:
    return f"U+{ord(character):04X}"


def probe(path: Path, what: str) -> os.stat_result | None:
    """`path`'s status, links followed; None where nothing is there. An error of the system (a name over 255 bytes, a
    folder on the way without search permission) is refused, naming `what` and the path: pathlib raises it from
    exists(), is_file() and is_dir()."""
    try:
        return os.stat(path)
    except OSError as error:
        if error.errno in NOTHING_THERE:
            return None
        raise UserError(f"cannot use {what} {shown(path)}: {error.strerror or type(error).__name__}") from None


def exists(path: Path, what: str) -> bool:
    return probe(path, what) is not None


def is_folder(path: Path, what: str) -> bool:
    status = probe(path, what)
    return status is not None and stat.S_ISDIR(status.st_mode)


def nearest_existing(path: Path, what: str = "output") -> Path | None:
    """The folder `path` goes in, or the nearest of its parents that exists (a file there too); one the system
    refuses (a name too long, a folder without search permission) is refused as `what`'s, and so is a symbolic link
    on the way that leads nowhere (the folders the write makes could not be made through it)."""
    for folder in (path.parent, *path.parent.parents):
        if probe(folder, what) is not None:
            return folder
        if os.path.islink(folder):
            resolved(folder)  # a loop is refused as one
            raise UserError(
                f"{what} {path} cannot be written: {folder} is a symbolic link to {os.readlink(folder)}, where "
                "nothing is: make that folder, or give another"
            )
    return None


def check_recordable(path: Path, what: str) -> None:
    """Refuse `path` where its absolute form, or the one its links lead to, holds a byte that is not UTF-8: the run
    records outputs and songs by it (outputs.json, report.json), and JSON in UTF-8 cannot hold it."""
    for full in (os.path.abspath(path), os.path.realpath(path)):  # (realpath: no error, a loop included)
        if said := not_utf8(path, what, full):
            raise UserError(said)


def not_utf8(path: Path, what: str, full: str | None = None) -> str | None:
    """The sentence refusing `path` where `full` (a form of it; else as given) holds a byte that is not UTF-8 (it
    reaches Python as half of a UTF-16 pair), naming the folder or file to rename; None where it holds none."""
    try:
        (full or str(path)).encode("utf-8")
    except UnicodeEncodeError as error:
        where = f" in its full path {shown(full)}" if full else ""
        return (
            f"{what} {shown(path)}: {part_at(full or str(path), error.start)}{where} is not UTF-8, "
            "which musicvid's records cannot hold: rename it in UTF-8, or give another path"
        )
    return None


def check_made(path: Path, what: str) -> None:
    """Refuse a path the run makes (an output, a work directory) where check_recordable does, where a name in it is
    longer than a file system takes (below a folder that is not there yet, the system would say so only as the run
    makes it), or where its absolute form holds a control character (a newline, a tab): every message, sidecar and
    record that names it (outputs.json, a line of the run's output) would be split or garbled by it. An input is the
    person's, and only shown (shown)."""
    check_recordable(path, what)
    full = os.path.abspath(path)
    if long := next((name for name in Path(full).parts if len(os.fsencode(name)) > NAME_BYTES), None):
        raise UserError(
            f"{what} {shown(path)}: the name {shown(long)} is too long ({len(os.fsencode(long))} bytes; a file system "
            f"takes {NAME_BYTES}): give a shorter one"
        )
    if found := _CONTROL.search(full):
        raise UserError(
            f"{what} {shown(path)}: {part_at(full, found.start())} holds a control character "
            f"({code_point(found[0])}), which would split the lines that name it: give a name without one"
        )


def part_at(full: str, at: int) -> str:
    """The part of the absolute path `full` that holds its character at `at`, as a message names it: "the name X"
    (the last) or "the folder X"."""
    start = full.rfind(os.sep, 0, at) + 1
    end = full.find(os.sep, at)
    return f"the name {shown(full[start:])}" if end < 0 else f"the folder {shown(full[start:end])}"


def check_paths(files: dict[str, Path], outputs: list[Path], workdir: Path | None) -> None:
    """Refuse, first, a path the run records (the song and the `files` it reads, by what each is; the outputs; the
    work directory) whose absolute form is not UTF-8: its records could not be written after the work
    (check_recordable); and an output or work directory with a control character in it (check_made)."""
    for what, path in files.items():
        check_recordable(path, f"the {what}")
    made = [("output", path) for path in outputs] + ([("--workdir", workdir)] if workdir else [])
    for what, path in made:
        check_made(path, what)


def resolved(path: Path) -> Path:
    """`path` made absolute, its links followed; a loop of symbolic links is refused in one sentence."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # a loop: RuntimeError up to Python 3.12, OSError since
        raise UserError(f"{shown(path)} leads into a loop of symbolic links") from None


def lies_in(path: Path, folder: Path) -> bool:
    """Whether `path` is in `folder`: by its name, links followed, or as a hard link (a file of more than one name) to
    a file there; `folder`'s files are looked through only then, and never a folder that is not there."""
    if resolved(path).is_relative_to(resolved(folder)):
        return True
    try:
        status = path.stat()
        if status.st_nlink < 2 or not stat.S_ISREG(status.st_mode):
            return False
        return any(
            os.path.samestat((Path(top) / name).stat(), status) for top, _, names in os.walk(folder) for name in names
        )
    except OSError:  # (a file gone as it was looked at is not there)
        return False


def kind_of(path: Path) -> str | None:
    """What is at `path`, links followed: "file", "folder" or "special file" (a pipe, a device); None where
    nothing is."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "special file"


def file_version(status: os.stat_result) -> tuple[int, ...]:
    """A file's version, for what is read once per version in a process: not its size and modification time alone,
    which a copy keeping times (`cp -p`, `rsync -t`) gives a new file of one size too; its change time none can set."""
    return status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev


_OPEN_FILES = re.compile(r"/proc/[^/]+(/task/[^/]+)?/fd|/dev/fd")  # a process's (or its thread's) open files


def names_open_file(path: Path) -> bool:
    """Whether `path`, or a link on the way to its file, is one of a process's open files (/dev/stdin, /dev/fd/N,
    /proc/self/fd/N, /proc/<pid>/task/<tid>/fd/N, through a link to a folder on the way too): a regular file there
    (`< song.mp3`) is another file, or none, in ffmpeg's process."""
    at = Path(os.path.abspath(path))
    for _ in range(40):  # (the kernel's limit on links followed)
        if _OPEN_FILES.fullmatch(os.path.realpath(at.parent)):  # (/dev/fd, /proc/self, a link to them: resolved)
            return True
        if not at.is_symlink():
            return False
        at = Path(os.path.abspath(at.parent / os.readlink(at)))
    return False
