"""A song's work directory: every file a run keeps there, named in one place, and held by one run at
a time.

The layout (docs/cli.md): transcript.json, storyboard.json, keyframes/<scene>.png, frames/<frame>.png,
contact_sheet.png, video.mp4 (or preview.mp4), lyrics.srt, lyrics.ass with its fonts/, timings.json and
the lock file. A rerun reads what an earlier one left, so these names never change.

A run removes the temporaries a killed run left before it resumes (musicvid.files); a second run on
the same folder would remove the first's files as it writes them. So each run holds an OS file lock on
the folder's lock file for as long as it works there: the OS releases it when the run ends, however it
ends (a SIGKILL too), so a killed run never leaves a folder locked. The lock file's name has one dot,
so the sweep of temporaries (`.name.random.suffix`) never takes it.
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from filelock import FileLock, Timeout

from musicvid.errors import UserError
from musicvid.files import remove_all_temporaries, remove_temporaries

if TYPE_CHECKING:
    from musicvid.audio import AudioInfo

log = logging.getLogger("musicvid")

WORK_ROOT = Path("musicvid-work")
LOCK = ".musicvid-lock"
FONTS = "fonts"  # the folder beside an ASS script that holds its fonts (musicvid.delivery.captions and mux)


class WorkdirBusy(UserError):
    """Another run holds the work directory."""


def video_name(stem: str, preview: bool, suffix: str = ".mp4") -> str:
    """A video's file name: a preview's is `<stem>.preview.mp4`, never the full video's."""
    return f"{stem}{'.preview' if preview else ''}{suffix}"


@dataclass(frozen=True)
class Workdir:
    """The work directory at `root` and the path of everything a run keeps in it."""

    root: Path

    @classmethod
    def for_song(cls, info: AudioInfo, named: Path | None = None) -> Workdir:
        """`musicvid-work/<song stem>-<short hash of the audio>/`, unless the user `named` one."""
        if named is not None:
            return cls(named)
        stem = re.sub(r"[^\w.-]+", "_", Path(info.path).stem).strip("_") or "song"
        return cls(WORK_ROOT / f"{stem}-{info.sha256[:10]}")

    @property
    def transcript(self) -> Path:
        return self.root / "transcript.json"

    @property
    def storyboard(self) -> Path:
        return self.root / "storyboard.json"

    @property
    def keyframes(self) -> Path:
        return self.root / "keyframes"

    def keyframe(self, scene: int) -> Path:
        return self.keyframes / f"{scene:04d}.png"

    @property
    def frames(self) -> Path:
        """The drawn in-between frames (a keyframe is never among them)."""
        return self.root / "frames"

    def frame(self, frame: int) -> Path:
        return self.frames / f"{frame:06d}.png"

    @property
    def contact_sheet(self) -> Path:
        return self.root / "contact_sheet.png"

    def video(self, preview: bool) -> Path:
        """The muxed video, before its copy to the output."""
        return self.root / ("preview.mp4" if preview else "video.mp4")

    @property
    def subtitles(self) -> Path:
        return self.root / "lyrics.srt"

    @property
    def lyrics_script(self) -> Path:
        """The lyrics on screen (ASS), with their fonts in FONTS beside it."""
        return self.root / "lyrics.ass"

    @property
    def fonts(self) -> Path:
        return self.root / FONTS

    @property
    def timings(self) -> Path:
        return self.root / "timings.json"

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    def remove_leftovers(self, output: Path | None = None) -> None:
        """Temporary files of a run that was killed mid-write (see files.atomic_path): here, and of the
        `output` video with its .srt and .ass."""
        for folder in (self.root, self.keyframes, self.frames, self.fonts):
            remove_all_temporaries(folder)
        for path in (output, output.with_suffix(".srt"), output.with_suffix(".ass")) if output else ():
            remove_temporaries(path)

    def check(self) -> None:
        """Refuse, before any work, a work directory that cannot be one: a file, or a read-only folder."""
        path = self.root
        existing = next((p for p in (path, *path.parents) if p.exists()), None)
        if existing is None:
            return
        if not existing.is_dir():
            where = "is a file" if existing == path else f"lies under {existing}, which is a file"
            raise UserError(f"work directory {path} {where}: give --workdir a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise UserError(f"work directory {path} cannot be written: {existing} is read-only")

    @contextmanager
    def held(self, wait: bool = False) -> Iterator[Workdir]:
        """This work directory, made if need be and locked for this run. Another run's lock is waited
        for with `wait` (a batch's rows of one song), else refused in one sentence. A folder this run
        made and leaves empty after a refusal (bad input found before anything was written) is removed
        again."""
        self.check()
        path = self.root
        made = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UserError(f"work directory {path} cannot be made: {error.strerror}") from None
        lock = FileLock(self.lock)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if not wait:
                raise WorkdirBusy(
                    f"work directory {path} is in use by another musicvid run; wait for it to finish, or give "
                    "another --workdir"
                ) from None
            log.warning("waiting for another run to finish with the work directory %s", path)
            lock.acquire()
        try:
            yield self
        except UserError:
            if made and [p.name for p in path.iterdir()] == [LOCK]:
                self.lock.unlink(missing_ok=True)
                path.rmdir()
            raise
        finally:
            lock.release()
