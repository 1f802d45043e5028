"""The page's jobs: a folder each, owned by the browser session that made it, removed after a while;
and the models they share, used by one job at a time.

A job's folder: `song/<the upload>`, `lyrics/`, `pins/`, `loras/` (the person's style LoRAs), `work/`
(the pipeline's work directory), then the results beside them. Every path of it is named by the few
functions below.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from musicvid.core.audio import check_length
from musicvid.core.errors import UserError
from musicvid.core.files import check_file
from musicvid.core.workdir import Workdir, video_name
from musicvid.lyrics.known import MAX_LYRICS_CHARS, lrc_stamps, starts_with_time
from musicvid.models.choose import choose_models
from musicvid.models.registry import ModelRegistry
from musicvid.settings.song import PLAIN
from ui.config import UIConfig

JOB_ID = re.compile(r"[0-9a-f]{12}")
NO_STORYBOARD = "make the storyboard first (or press Make video)"


def song_folder(job: Path) -> Path:
    return job / "song"


def job_folder(song: Path) -> Path:
    """The folder of the job whose song this is."""
    return song.parent.parent


def work_directory(song: Path) -> Path:
    return job_folder(song) / "work"


def edited_storyboard_file(song: Path) -> Path:
    """The storyboard as the page's table shows it, which the job renders."""
    return job_folder(song) / "storyboard.edited.json"


def pins_folder(song: Path) -> Path:
    return job_folder(song) / "pins"


def loras_folder(song: Path) -> Path:
    return job_folder(song) / "loras"


def timed(text: str) -> bool:
    """Whether pasted lyrics are LRC: a line of them starts with a time."""
    return any(starts_with_time(line) for line in text.splitlines())


def check_pasted_lyrics(text: str) -> None:
    """Pasted lyrics are refused past a lyrics file's limit, and timed ones wherever the LRC reader cannot read
    them whole (a line without a time among timed ones, a time it cannot read), before anything is copied or run."""
    if len(text) > MAX_LYRICS_CHARS:
        raise UserError(f"the pasted lyrics are {len(text):,} characters long; the limit is {MAX_LYRICS_CHARS:,}")
    if timed(text):
        lrc_stamps(text, "the pasted lyrics")


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
        self.registries: dict[str, ModelRegistry] = {}
        self.stops: dict[str, threading.Event] = {}  # each browser session's running render
        self.owners: dict[str, str] = {}  # job -> the session that made it
        self.page_storyboards: dict[str, str] = {}  # session -> the job of the storyboard last sent to its page
        self.models_lock = threading.Lock()  # whatever runs a model holds it, across presets
        self.root = config.jobs_dir.resolve()  # absolute: the prefix taken off the files messages name
        self.root.mkdir(parents=True, exist_ok=True)

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

    def registry(self, preset: str) -> ModelRegistry:
        if preset not in self.registries:
            config = self.config
            self.registries[preset] = ModelRegistry(choose_models(preset), config.device, True, config.precision)
        return self.registries[preset]

    def new(self, upload: str, session: str) -> tuple[str, Path]:
        """A fresh job (its id, and the copy of the upload in its directory); old jobs go first. The
        upload is checked before anything is copied: a file, and not longer than the page accepts."""
        self.remove_old()
        check_file(Path(upload), "audio file")
        check_length(Path(upload), self.config.max_minutes * 60)
        job = uuid.uuid4().hex[:12]
        song = song_folder(self.root / job) / Path(upload).name
        song.parent.mkdir(parents=True)
        shutil.copyfile(upload, song)
        self.owners[job] = session
        return job, song

    def discard(self, job: str) -> None:
        """A job whose song was refused, or an old one: nothing of it stays."""
        self.owners.pop(job, None)
        for session in [s for s, on_page in self.page_storyboards.items() if on_page == job]:
            del self.page_storyboards[session]
        shutil.rmtree(self.root / job, ignore_errors=True)

    @staticmethod
    def lyrics(song: Path, text: str) -> Path | None:
        """The pasted lyrics as a file beside the job's song: timed LRC if its lines start with times,
        else plain lines for Whisper to time; None if nothing was pasted."""
        check_pasted_lyrics(text)
        if not text.strip():
            return None
        suffix = ".lrc" if timed(text) else PLAIN
        path = job_folder(song) / "lyrics" / f"lyrics{suffix}"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def song(self, job: str, session: str) -> Path:
        """The song of a job this session made, with its storyboard; anything else (a path, another
        session's job, a job with no storyboard yet) is refused, without saying what the server holds."""
        ours = JOB_ID.fullmatch(job or "") and self.owners.get(job) == session
        folder = song_folder(self.root / job) if ours else None
        songs = [p for p in folder.iterdir() if p.is_file()] if folder and folder.is_dir() else []
        if len(songs) != 1 or not Workdir(work_directory(songs[0])).storyboard.is_file():
            raise UserError(NO_STORYBOARD)
        return songs[0]

    def remove_old(self) -> None:
        limit = time.time() - self.config.keep_hours * 3600
        for job in self.root.iterdir():
            if job.is_dir() and job.stat().st_mtime < limit:
                self.discard(job.name)
