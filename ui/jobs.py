"""The page's jobs: a folder each, owned by the browser session that made it, removed after a while;
and the models they share, used by one job at a time.

A job's folder: `song/<the upload>`, `lyrics/`, `pins/`, `loras/` (the person's style LoRAs), `work/`
(the pipeline's work directory), then the results beside them, and the page's mark (ui.config: only a folder
the page made is ever removed). Every path of it is named by the few functions below. What all jobs hold is
bounded (`--max-jobs-gb`): a new job first removes the oldest ones, least recently used first. The page holds an OS
lock on each of its jobs' marks while it runs (the OS lets it go when the page ends, however it ends): another page
on the same --jobs-dir never removes a job this one may be rendering, nor this one another's. A job's mark holds a
digest of the session that made it: a page started again gives the job back to that session (Jobs.adopted).
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import os
import re
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from musicvid.core.audio import check_length
from musicvid.core.errors import Cancelled, UserError, out_of_memory, out_of_room
from musicvid.core.files import check_file, parse_json
from musicvid.core.paths import without_controls
from musicvid.core.workdir import Workdir, video_name
from musicvid.lyrics.known import MAX_LYRICS_CHARS, lyrics_kind, timed_lines
from musicvid.lyrics.srt import check_not_subtitles
from musicvid.lyrics.transcript import is_storyboard, left_out_note
from musicvid.models.choose import choose_models
from musicvid.models.readback import GB
from musicvid.models.registry import ModelRegistry
from musicvid.settings.schema import check_text
from musicvid.settings.song import PLAIN
from ui.config import JOB_ID, JOB_MARK, UIConfig, is_page_job, jobs_root
from vipe_core.guards import is_held

NO_STORYBOARD = "make the storyboard first (or press Make video)"
# What the page's messages call the lyrics pasted into its box, never the file it saves them to (Jobs.lyrics): the box,
# by its label's word, as the page names its controls (ui.controls.page_words). One box, so that musicvid's messages,
# written for one lyrics file ("lyrics file X has …", "X is …"), read as they are with it in the file's place.
PASTED = '"Lyrics"'


def song_folder(job: Path) -> Path:
    return job / "song"


def job_folder(song: Path) -> Path:
    """The folder of the job whose song this is."""
    return song.parent.parent


def pasted_folder(song: Path) -> Path:
    """Where the job of this song keeps the lyrics pasted for it (Jobs.lyrics)."""
    return job_folder(song) / "lyrics"


def work_directory(song: Path) -> Path:
    return job_folder(song) / "work"


def edited_storyboard_file(song: Path) -> Path:
    """The storyboard as the page's table shows it, which the job renders."""
    return job_folder(song) / "storyboard.edited.json"


def pins_folder(song: Path) -> Path:
    return job_folder(song) / "pins"


def loras_folder(song: Path) -> Path:
    return job_folder(song) / "loras"


def pasted_kind(text: str) -> str:
    """How pasted lyrics are read, as a lyrics file is (musicvid.lyrics.known.lyrics_kind): LRC or SRT where they
    hold times, else plain lines."""
    return lyrics_kind(Path(f"pasted{PLAIN}"), text)


def check_pasted_lyrics(text: str) -> None:
    """Pasted lyrics are refused past a lyrics file's limit, and timed ones wherever their reader cannot read them
    whole (a line without a time among timed ones, a time it cannot read), before anything is copied or run."""
    if len(text) > MAX_LYRICS_CHARS:
        raise UserError(f"{PASTED} is {len(text):,} characters long; the limit is {MAX_LYRICS_CHARS:,}")
    check_text(PASTED, text)
    if (kind := pasted_kind(text)) == ".json" and is_storyboard(parse_json(text, PASTED)):
        raise UserError(
            f"{PASTED} holds a storyboard, not lyrics: the page makes its own from a song's lyrics (Make storyboard) "
            "and edits it in its table; a storyboard file is rendered by the command line (--storyboard)"
        )
    if kind == PLAIN:
        check_not_subtitles(text, PASTED)
    else:
        timed_lines(text, kind, math.inf, PASTED)


def owner_mark(session: str) -> str:
    """What a job's mark holds: a digest of the browser session that made it, by which a page started again knows
    its job (Jobs.adopted), never the session itself."""
    return hashlib.sha256(session.encode("utf-8")).hexdigest()


def hold_mark(mark: Path) -> int | None:
    """The job's mark `mark`, open, with this page's OS lock on it (let go as it is closed, or as the page ends); None
    where another page holds it. Where the file system has no such locks, open alone (one page to a jobs folder)."""
    held = os.open(mark, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(held)
        return None
    except OSError:  # (no such locks here)
        pass
    return held


def _used(job: Path) -> float:
    """When a page job was last used (Jobs.page_jobs)."""
    return (job / JOB_MARK).stat().st_mtime


def pasted_left_out(text: str, duration: float) -> str:
    """The note on the timed lines of pasted lyrics that a song `duration` seconds long leaves out, as the run warns
    of them in its log (musicvid.lyrics.transcript.left_out_note); "" for none, and for plain lines."""
    if (kind := pasted_kind(text)) == PLAIN:
        return ""
    return left_out_note(timed_lines(text, kind, math.inf, PASTED)[0], duration, PASTED)


def folder_bytes(folder: Path) -> int:
    """What the files in `folder` hold, links not followed."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:  # (removed meanwhile)
                pass
    return total


def video_file(song: Path, preview: bool) -> Path:
    """`<song>.mp4` in the job's folder, `<song>.preview.mp4` for a preview."""
    return job_folder(song) / video_name(song.stem, preview)


class Jobs:
    """Per-job directories under one root, each owned by the browser session that made it; models
    shared by all jobs (one registry per preset) and used by one job at a time.

    A job directory: `song/<the upload>`, `lyrics/`, `pins/`, `loras/`, `work/` (the pipeline's), then the
    results."""

    def __init__(self, config: UIConfig):
        self.config = config
        self.loaded: tuple[str, ModelRegistry] | None = None  # the one preset whose models are kept, and its registry
        self.stops: dict[str, threading.Event] = {}  # each browser session's running render
        self.owners: dict[str, str] = {}  # job -> the session that made it
        self.held: dict[str, int] = {}  # job -> the open mark this page holds its lock on
        self.page_storyboards: dict[str, str] = {}  # session -> the job of the storyboard last sent to its page
        self.removed: dict[str, tuple[str, str]] = {}  # job -> the session that made it, and why this page removed it
        self.models_lock = threading.Lock()  # whatever runs a model holds it, across presets
        self.root = jobs_root(config.jobs_dir)
        # the file a job's pasted lyrics are saved to (`lyrics`), as the pipeline's messages name it
        self.pasted_file = re.compile(
            rf"(?:(?:the )?lyrics file )?{re.escape(str(self.root))}/{JOB_ID.pattern}/lyrics/lyrics\.\w+"
        )

    @contextmanager
    def running(self, session: str) -> Iterator[threading.Event]:
        """A stop flag for the session's job while it runs. The work, in a worker thread, stops within a denoising
        step of its being set: by Gradio's cancel of the job's event (ui.app.page_events), by the Cancel button, or
        when the session's page or client goes (ui.app.wire_jobs)."""
        self.stops[session] = flag = threading.Event()
        try:
            yield flag
        finally:
            if self.stops.get(session) is flag:
                del self.stops[session]

    def cancel(self, session: str) -> None:
        if session in self.stops:
            self.stops[session].set()

    @contextmanager
    def models(self, stop: threading.Event) -> Iterator[None]:
        """The models, held for one job; a job cancelled while it waited for them (or as it got them) ends
        without any work: its wait watches its stop flag. A job that ran out of memory says so as the command line
        does (out_of_memory), and one that ran out of disk (out_of_room), as the page's message, not as an unexplained
        error."""
        while not self.models_lock.acquire(timeout=0.25):
            if stop.is_set():
                raise Cancelled("the job was cancelled")
        try:
            if stop.is_set():
                raise Cancelled("the job was cancelled")
            yield
        except Exception as error:
            if not (said := out_of_memory(error) or out_of_room(error)):
                raise
            raise said from None
        finally:
            try:
                self.trim()  # (what the work wrote, with no job running: the caller holds the models)
            finally:
                self.models_lock.release()

    def registry(self, preset: str) -> ModelRegistry:
        """The models of `preset`, kept loaded for the jobs that follow. Those of one preset at a time: another
        preset's are released first, so that switching presets never piles up models (and on CUDA the new
        registry measures its budget with nothing else held). Called with the models held (`models`)."""
        if self.loaded is None or self.loaded[0] != preset:
            if self.loaded is not None:
                before = self.loaded[1]
                for role in list(before.loads):  # each it ever loaded: releasing one not loaded now does nothing
                    before.release(role)
            config = self.config
            self.loaded = preset, ModelRegistry(choose_models(preset), config.device, True, config.precision)
        return self.loaded[1]

    def new(self, upload: str, session: str) -> tuple[str, Path]:
        """A fresh job (its id, and the copy of the upload in its directory); old jobs go first. The
        upload is checked before anything is copied: a file, and not longer than the page accepts."""
        self.remove_old()
        check_file(Path(upload), "audio file")
        check_length(Path(upload), self.config.max_minutes * 60)
        self.make_room(Path(upload).stat().st_size)
        job = uuid.uuid4().hex[:12]
        (self.root / job).mkdir()
        (self.root / job / JOB_MARK).write_text(owner_mark(session))  # first: the folder is the page's from now on
        self.held[job] = hold_mark(self.root / job / JOB_MARK)  # (a folder of a new name: no one else holds it)
        song = song_folder(self.root / job) / without_controls(Path(upload).name)  # (Gradio's browser path strips them)
        song.parent.mkdir()
        shutil.copyfile(upload, song)
        self.owners[job] = session
        return job, song

    def discard(self, job: str, why: str | None = None) -> None:
        """A job whose song was refused, or an old one (`why` it was removed, said to its session: removed_said):
        nothing of it stays."""
        if (owner := self.owners.pop(job, None)) is not None and why is not None:
            self.removed[job] = owner, why
        if job in self.held:
            os.close(self.held.pop(job))  # (closing lets the lock go)
        for session in [s for s, on_page in self.page_storyboards.items() if on_page == job]:
            del self.page_storyboards[session]
        shutil.rmtree(self.root / job, ignore_errors=True)

    @staticmethod
    def lyrics(song: Path, text: str) -> Path | None:
        """The pasted lyrics as a file beside the job's song: timed (LRC, SRT) where they hold times, else plain
        lines for Whisper to time; None if nothing was pasted."""
        check_pasted_lyrics(text)
        if not text.strip():
            return None
        path = pasted_folder(song) / f"lyrics{pasted_kind(text)}"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    @staticmethod
    def timed_lyrics(song: Path) -> Path | None:
        """The job's pasted lyrics where they hold times (Jobs.lyrics saved them): a render of its storyboard shows
        each line while it is sung, and each word at its time for karaoke, as the command line's --lyrics beside a
        --storyboard does; None where none were pasted or they were plain lines."""
        return next((path for path in sorted(pasted_folder(song).glob("lyrics.*")) if path.suffix != PLAIN), None)

    def as_pasted(self, message: str) -> str:
        """`message` with the file a job's pasted lyrics are saved to named as the page shows them (PASTED)."""
        return self.pasted_file.sub(PASTED, message)

    def song(self, job: str, session: str) -> Path:
        """The song of a job this session made, with its storyboard; anything else (a path, another
        session's job, a job with no storyboard yet) is refused, without saying what the server holds."""
        ours = JOB_ID.fullmatch(job or "") and (self.owners.get(job) == session or self.adopted(job, session))
        folder = song_folder(self.root / job) if ours else None
        songs = [p for p in folder.iterdir() if p.is_file()] if folder and folder.is_dir() else []
        if len(songs) != 1 or not Workdir(work_directory(songs[0])).storyboard.is_file():
            raise UserError(self.removed_said(job, session) or NO_STORYBOARD)
        (self.root / job / JOB_MARK).touch()  # used now (a render writes deeper: the job's folder keeps its time)
        return songs[0]

    def removed_said(self, job: str, session: str) -> str | None:
        """Why this page removed `session`'s `job`, in a sentence (its storyboard is still on the page); None where
        it did not, or the job was another session's."""
        owner, why = self.removed.get(job, (None, None))
        if owner != session:
            return None
        if why == "old":
            kept = f"unused for {self.config.keep_hours:g} hours (--keep-hours)"
        else:
            kept = f"to make room for newer ones (it keeps {self.config.max_jobs_gb:g} GB of jobs)"
        return f"this page removed the job, {kept}: make the storyboard again (the table's edits were not kept)"

    def adopted(self, job: str, session: str) -> bool:
        """Whether `job`, which no session of this page owns, is `session`'s by its mark (written as the job was made)
        and now this page's: one a page that stopped made (its tab still open, or a kill -9 mid-render), unless another
        page holds it."""
        folder = self.root / job
        if (
            job in self.owners
            or not is_page_job(folder)
            or (folder / JOB_MARK).read_bytes() != owner_mark(session).encode()
        ):
            return False
        if (held := hold_mark(folder / JOB_MARK)) is None:
            return False
        self.held[job], self.owners[job] = held, session
        return True

    def page_jobs(self) -> list[Path]:
        """The jobs' folders (ui.config.is_page_job) this page may remove, least recently used first: by their mark's
        time, set when the job is made and at each press that reads its song. Those another page holds are left."""
        jobs = [job for job in self.root.iterdir() if is_page_job(job)]
        return sorted((job for job in jobs if job.name in self.held or not is_held(job, JOB_MARK)), key=_used)

    def remove_old(self) -> None:
        limit = time.time() - self.config.keep_hours * 3600
        for job in self.page_jobs():
            if _used(job) < limit:
                self.discard(job.name, "old")

    def make_room(self, size: int) -> None:
        """Room for a new job of `size` bytes within --max-jobs-gb: the oldest jobs are removed until it fits.
        No job runs meanwhile (the caller holds the models), so none is removed under its work. Where the jobs
        another page holds leave no room, the job is refused first: removing this page's would not make it."""
        cap = self.config.max_jobs_gb * GB
        if size > cap:
            raise UserError(f"the song is too big for this page, which keeps {self.config.max_jobs_gb:g} GB of jobs")
        others = sum(folder_bytes(job) for job in self.others_jobs())
        if others + size > cap:
            raise UserError(
                f"this page keeps {self.config.max_jobs_gb:g} GB of jobs, and another page using its jobs folder holds "
                f"{others / GB:.2g} GB of them now: try again later"
            )
        self.remove_until(cap - others - size, self.page_jobs())

    def trim(self) -> None:
        """The jobs within --max-jobs-gb again after a press's work (a render's frames and video hold far more than its
        song, and were counted nowhere: two jobs held 1.4 times the bound), the least recently used first; never the
        one used last, the press's own, whose results stay though it alone may pass the bound."""
        jobs = self.page_jobs()
        others = sum(folder_bytes(job) for job in self.others_jobs())
        self.remove_until(self.config.max_jobs_gb * GB - others - sum(map(folder_bytes, jobs[-1:])), jobs[:-1])

    def remove_until(self, room: float, jobs: list[Path]) -> None:
        """Remove `jobs`, first to last, until those left hold `room` bytes at most."""
        sizes = [(job, folder_bytes(job)) for job in jobs]
        total = sum(held for _, held in sizes)
        for job, held in sizes:
            if total <= room:
                return
            self.discard(job.name, "room")
            total -= held

    def others_jobs(self) -> list[Path]:
        """The jobs another page on the same jobs folder holds now."""
        return [
            job
            for job in self.root.iterdir()
            if is_page_job(job) and job.name not in self.held and is_held(job, JOB_MARK)
        ]
