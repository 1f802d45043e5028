"""A batch's report.json in -o: every row's outcome in playlist order, written as rows finish; and the
table of them printed at the end.

musicvid writes report.json only over a report of its own: a file whose JSON has `"made_by": "musicvid
batch"` (written from this version on), or has exactly the keys playlist, total and songs (the shape
batches wrote before it). Another file there (a person's JSON, anything else, a link) is replaced only
with --overwrite; a row's input or the playlist at that name never is. Both are refused before any work."""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import stat
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

from musicvid.batch.playlist import Job, files_read, row_storyboard
from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256, remove_temporaries, same_file, weights_identity
from musicvid.core.locks import os_lock
from musicvid.core.outputs import may_be_a_video, not_a_song, video_made_by_a_run
from musicvid.core.paths import printable
from musicvid.core.progress import seconds_text
from musicvid.settings.loras import Loras
from musicvid.settings.model_choice import ModelChoice
from musicvid.storyboard.board import Storyboard
from vipe_core.atomic import write_json
from vipe_core.guards import is_held

REPORT_NAME = "report.json"
OUTPUT_LOCK = ".musicvid-batch-lock"  # in -o: the batch that holds it (held_output)
MADE_BY = "musicvid batch"  # the mark of a report musicvid wrote, which a batch may replace
EARLIER_KEYS = {"playlist", "total", "songs"}  # a report written before the mark
OTHER_BATCHES = "other_batches"  # the rows of earlier batches into -o that this one kept (other_batches_rows)
# A report of the most rows a batch takes is a few MB; a bigger file is no report, and is not read.
MAX_REPORT_BYTES = 64 * 1024 * 1024
# Rewritten after every row, the report took time quadratic in the rows (4,000 rows of repeats: 125 s);
# written at most this often, a killed batch's report lacks only the rows of its last seconds.
WRITE_INTERVAL_SECONDS = 2.0


@dataclass
class Result:
    song: str
    status: str  # done, skipped (video already there), failed, or repeat (made by the song `same_as`; failed with it)
    output: str
    duration: float | None = None
    seconds: float = 0.0
    error: str = ""
    same_as: int | None = None  # a repeat's earlier row, by its number in the playlist
    made_with: str = ""  # what its outputs were made with, hashed (made_with); "" for a failed row
    workdir: str = ""  # the work directory that records its outputs as written (absolute: from any folder)


def note(result: Result) -> str:
    """Why a song failed (a repeat's: its row's failure), or which song made a repeat's video."""
    return result.error or (f"same as song {result.same_as}" if result.same_as else "")


def absolute_paths(result: Result, job: Job) -> Result:
    """`result` with its song and output absolute (not resolved: as named), as both engines report them: a report
    read from another folder, or compared with another engine's, finds its files. A line that names no file on this
    machine (a URL) keeps its song as written."""
    song = job.entry.written or _recordable(os.path.abspath(result.song))
    return replace(result, song=song, output=os.path.abspath(result.output))


def _recordable(path: str) -> str:
    """`path` as JSON in UTF-8 records it: a name's bytes that are not UTF-8 (an old Windows disk's) as \\xNN."""
    try:
        path.encode()
    except UnicodeEncodeError:
        return printable(path)
    return path


def table(results: list[Result]) -> str:
    """The rows as printed at the end: each one's song beside its output (hashed names are told apart by it), its time
    said as a person reads it (a render that found everything made takes milliseconds), blank for a row not rendered
    here (skipped, a repeat, refused before its render), and no output for a failed row (it made none: the name it
    was planned under can mislead, a playlist line's that names no file of its own). Columns are as wide as their
    names show (composed: an accent written apart takes no column of its own)."""
    rows = [("status", "time", "duration", "song", "output", "note")]
    for r in results:
        duration = "" if r.duration is None else f"{r.duration:.1f}"
        took = seconds_text(r.seconds) if r.seconds else ""
        output = "" if r.status == "failed" else printable(r.output)
        rows.append((r.status, took, duration, printable(r.song), output, printable(note(r))))
    widths = [max(shown_width(row[i]) for row in rows) for i in range(5)]
    return "\n".join(
        "".join(cell + " " * (w - shown_width(cell) + 2) for cell, w in zip(row[:5], widths)) + row[5] for row in rows
    )


def shown_width(text: str) -> int:
    return len(unicodedata.normalize("NFC", text))


def written_by_batch(path: Path) -> bool:
    """Whether `path` is a report a musicvid batch wrote."""
    return batch_report(path) is not None


def batch_report(path: Path) -> dict | None:
    """The JSON of the report a musicvid batch wrote at `path`: a plain file (no link) of a report's size whose JSON
    has the mark, or the shape of the reports before it; None where it is none."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REPORT_BYTES:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    ours = data.get("made_by") == MADE_BY or (data.keys() == EARLIER_KEYS and isinstance(data["songs"], list))
    return data if ours else None


def report_rows(report: Path) -> list[dict]:
    """The rows of a batch's `report` that made their video (or found it made), with a song and an output: those of
    earlier batches into -o it kept (OTHER_BATCHES) first, then its own; none where the report is no batch's."""
    data = batch_report(report) or {}
    return [
        row
        for rows in (data.get(OTHER_BATCHES), data.get("songs"))
        for row in (rows if isinstance(rows, list) else [])
        if isinstance(row, dict)
        and isinstance(row.get("song"), str)
        and isinstance(row.get("output"), str)
        and row.get("status") != "failed"
    ]


def earlier_outputs(report: Path) -> dict[tuple[str, str], str]:
    """The (song, output) pairs, resolved (report_key), of the rows of a batch's `report` (report_rows), each with
    what it was made with (made_with; "" where the report is older than that record): how a batch knows a video in -o
    as one it made for a song, and made as a row asks now."""
    return {_resolved_key(row["song"], row["output"]): str(row.get("made_with") or "") for row in report_rows(report)}


def earlier_workdirs(report: Path) -> dict[tuple[str, str], Path]:
    """The (song, output) pairs, resolved (report_key), of the rows of a batch's `report` that name the work directory
    recording their outputs: a batch run again from another folder (its musicvid-work/ another) finds them there."""
    rows = report_rows(report)
    return {
        _resolved_key(r["song"], r["output"]): Path(r["workdir"]) for r in rows if isinstance(r.get("workdir"), str)
    }


def _resolved_key(song: str, output: str) -> tuple[str, str]:
    # Resolved, as made_with and outputs.json resolve: -o or a song reached through a link is the same row.
    return os.path.realpath(song), os.path.realpath(output)


def report_key(job: Job) -> tuple[str, str]:
    """A row as earlier_outputs knows it: its song and its output, resolved."""
    return _resolved_key(job.entry.path, job.output)


def other_batches_rows(report: Path, jobs: list[Job]) -> list[dict]:
    """The rows of -o's `report` (report_rows) to keep in the report this batch writes: those at an output no row of
    `jobs` has (one of this batch's is that video's record now), whose output is still there; the latest of each.
    Kept, a batch of another playlist or folder into the same -o leaves them their record of what made their videos
    (made_with: skipped, not made again) and of their songs (a song retagged since: changed_since)."""
    outputs = {os.path.realpath(job.output) for job in jobs}
    kept = {
        os.path.realpath(row["output"]): row
        for row in report_rows(report)
        if os.path.realpath(row["output"]) not in outputs and os.path.exists(row["output"])
    }
    return list(kept.values())


def made_with(job: Job, choice: ModelChoice, storyboards: dict[Path, Storyboard | None]) -> str:
    """What a row's outputs are made with, hashed: every setting of its request, its settings and the batch's models
    that changes what is made (AFFECTS, not the speed), its paths resolved (the same from any folder), a model on this
    machine by what its files hold (weights_identity) and the pictures its storyboard pins by theirs. A rerun skips a
    row only where its outputs were made with this (musicvid.batch.command)."""
    made = ("storyboard", "keyframes", "between", "video")
    values = [
        f"{type(part).__name__}.{name}={_value(getattr(part, name), models=part is choice)!r}"
        for part in (job.request, job.settings, choice)
        for name in type(part).affecting(*made)
    ]
    storyboard = row_storyboard(job.request, storyboards)
    pictures = storyboard.picture_files() if storyboard else {}
    values += [f"{what}={_value(path)!r}" for what, path in pictures.items()]
    return hashlib.sha256("\n".join(values).encode(errors="surrogateescape")).hexdigest()[:16]


def _value(value, models: bool = False):
    """A setting as made_with hashes it: a path resolved, a file's with its contents too (an .lrc fixed, a storyboard
    edited, a reference or LoRA saved again under its name asks for another video); a LoRA, and a model named among
    the `models`, by what it holds (a folder fine-tuned again under its name)."""
    if isinstance(value, Loras):
        return tuple((weights_identity(lora.source), lora.weight) for lora in value)
    if models and isinstance(value, str):
        return weights_identity(value)
    if not isinstance(value, Path):
        return value
    try:
        return os.path.realpath(value), file_sha256(value) if value.is_file() else None
    except OSError:  # (one that cannot be read: its row fails at its turn, recording nothing)
        return os.path.realpath(value), None


def video_of_ours(song: Path, out_dir: Path, workdirs: list[Path], read: dict[Path, dict[str, str]]) -> str | None:
    """The sentence a row fails with at its turn where its song is a video a musicvid batch or render wrote (no output
    is ever an input): an output of -o's report.json or of the one beside it (`read`: each report's outputs, once), or
    a file that a work directory in `workdirs` (folders of them) records as its run wrote it; None for any other."""
    if not may_be_a_video(song):
        return None
    for report in dict.fromkeys((out_dir / REPORT_NAME, song.parent / REPORT_NAME)):
        if report not in read:
            read[report] = {os.path.realpath(row["output"]): row["song"] for row in report_rows(report)}
        if (made_for := read[report].get(os.path.realpath(song))) is not None:
            return not_a_song(song, made_for)
    return video_made_by_a_run(song, workdirs)


def check_report(report: Path, jobs: list[Job], playlist: Path, overwrite: bool) -> None:
    """Refuse, before any work, a report path that is the playlist or any row's input (its song, lyrics,
    storyboard, reference or pinned pictures; even with --overwrite), or a file that is not a batch's
    report (without `overwrite`)."""

    if same_file(report, playlist):
        raise UserError(
            f"the playlist {playlist} is {report}, where the batch writes its report: give -o another folder"
        )
    storyboards: dict[Path, Storyboard | None] = {}
    for job in jobs:
        for what, path in files_read(job, storyboards).items():
            if same_file(report, path):
                raise UserError(
                    f"{job.where(playlist)}: its {what} is {report}, where the batch writes its report: give -o "
                    "another folder"
                )
    if not overwrite and (report.is_symlink() or report.exists()) and not written_by_batch(report):
        raise UserError(
            f"{report} exists and is no report of a musicvid batch: give --overwrite to replace it, or -o another folder"
        )


class ReportWriter:
    """report.json as rows finish, in playlist order, always a whole JSON document (written atomically):
    at once where WRITE_INTERVAL_SECONDS have passed since the last write, else by a timer when they
    have, and at the end (`close`, also when the batch is stopped or fails)."""

    def __init__(self, path: Path, playlist: Path, total: int, kept: Sequence[dict] = ()):
        self.path, self.playlist, self.total, self.kept = path, playlist, total, kept  # kept: other_batches_rows
        self.rows: dict[int, dict] = {}  # number in the playlist -> the row as written
        self.pending = False  # rows not written yet
        self.written_at = -math.inf
        self.timer: threading.Timer | None = None
        self.lock = threading.Lock()  # the timer's thread writes too
        remove_temporaries(path)  # what a batch killed as it wrote the report left

    def add(self, number: int, result: Result) -> None:
        with self.lock:
            self.rows[number] = asdict(result)
            self.pending = True
            wait = self.written_at + WRITE_INTERVAL_SECONDS - time.monotonic()
            if wait <= 0:
                self._write()
            elif self.timer is None:
                self.timer = threading.Timer(wait, self.flush)
                self.timer.daemon = True  # never keeps a stopped batch alive
                self.timer.start()

    def flush(self) -> None:
        with self.lock:
            self.timer = None
            self._write()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.flush()

    def _write(self) -> None:
        if self.pending:
            songs = [self.rows[number] for number in sorted(self.rows)]
            report = {"made_by": MADE_BY, "playlist": str(self.playlist), "total": self.total, "songs": songs}
            write_json(self.path, report | {OTHER_BATCHES: list(self.kept)})  # (after its own rows: read first)
            self.pending, self.written_at = False, time.monotonic()


@contextmanager
def held_output(folder: Path) -> Iterator[None]:
    """-o, held by this batch for its whole run: a second batch there would replace the first's videos and report
    between their checks and their writes, so it is refused in one sentence (the OS lets go of a killed batch's). Its
    lock file is removed as the batch lets go of it, while still holding it, where it is empty and still the file it
    locked: a batch that opened the file a moment before then finds, once it holds it, that no name leads to it, and
    takes the one at the name anew (locked_file), so two never hold two files of one name. Where the file system
    has no such locks, filelock's (os_lock) hold -o, and their file is left."""
    path = folder / OUTPUT_LOCK
    check_lock_file(folder)  # (again: a link made there since the check before any work)
    try:
        fd, lock = locked_file(path, busy(folder)), None
    except OSError:  # (no flock here: a network file system's, say)
        fd, lock = None, os_lock(path, busy(folder), str(folder))
    try:
        yield
    finally:
        if lock is not None:
            lock.release()
        else:
            if is_at(fd, path) and os.fstat(fd).st_size == 0:
                path.unlink()
            os.close(fd)  # (which lets go of the lock)


def check_lock_file(folder: Path) -> None:
    """Refuse a link at -o's lock file name, before any work: the lock is never taken through a link (O_NOFOLLOW), nor
    is its target touched; and an -o another batch holds (probed: is_held), before a long playlist's checks."""
    if (folder / OUTPUT_LOCK).is_symlink():
        raise UserError(f"{folder / OUTPUT_LOCK} is a link: remove it")
    if is_held(folder, OUTPUT_LOCK):
        raise UserError(busy(folder))


def busy(folder: Path) -> str:
    return f"-o {folder} is in use by another musicvid batch: wait for it to finish, or give another -o"


def locked_file(path: Path, busy: str) -> int:
    """The lock file at `path` (made if need be), open and locked by this process; another's lock refused with `busy`.
    A file another batch removed between this one's opening and locking it is let go, and the one at the name taken."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(busy) from None
        except OSError:
            os.close(fd)
            raise
        if is_at(fd, path):
            return fd
        os.close(fd)


def is_at(fd: int, path: Path) -> bool:
    """Whether the file open at `fd` is the one at `path` (not removed, nor another made there since)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False
