"""What a running page is allowed to do: its models, where jobs live and how long, what it accepts; and which
folders are the page's jobs.

The page keeps its jobs in a folder of its own, `musicvid-jobs` in `--jobs-dir`, and serves that folder alone:
whatever else `--jobs-dir` holds is never served, listed or removed. A job's folder is one the page made: named
as a job (JOB_ID), not a link, and holding the page's mark (JOB_MARK), written when the job is made; only such a
folder is ever removed.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.settings.model_choice import ModelChoice

JOBS_FOLDER = "musicvid-jobs"
JOB_ID = re.compile(r"[0-9a-f]{12}")
JOB_MARK = ".musicvid-job"


@dataclass(frozen=True)
class UIConfig:
    models: str = ModelChoice.models  # the preset the page starts with: the command line's default
    device: str = ModelChoice.device
    jobs_dir: Path = Path(tempfile.gettempdir()) / "musicvid-ui"
    keep_hours: float = 24.0
    max_minutes: float = 15.0
    max_upload_mb: int = 100
    lora_dir: Path | None = None  # the style LoRAs the page offers besides a visitor's uploads (ui/loras.py)
    precision: str = ModelChoice.precision
    max_jobs_gb: float = 20.0  # what all jobs' folders may hold: past it, the oldest jobs go first (ui/jobs.py)


def is_page_job(folder: Path) -> bool:
    """Whether `folder` is a job the page made (module doc); links are never followed."""
    if not JOB_ID.fullmatch(folder.name) or folder.is_symlink() or not folder.is_dir():
        return False
    mark = folder / JOB_MARK
    return mark.is_file() and not mark.is_symlink()


def jobs_root(jobs_dir: Path) -> Path:
    """The page's own folder of jobs in `jobs_dir`, made if new (absolute: the prefix taken off the files
    messages name). Refused in one sentence: a `jobs_dir` that cannot be made or written, or a `musicvid-jobs`
    there that holds anything but folders named as jobs (a person's folder of that name)."""
    root = jobs_dir.expanduser().resolve() / JOBS_FOLDER
    try:
        root.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"--jobs-dir {jobs_dir} is not a folder: a file has its name, or a name above it") from None
    except OSError as error:
        raise UserError(f"--jobs-dir {jobs_dir} cannot be made a folder of jobs ({error.strerror})") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise UserError(f"--jobs-dir {jobs_dir} cannot be written: {root} is read-only")
    for entry in sorted(root.iterdir()):
        if not JOB_ID.fullmatch(entry.name) or entry.is_symlink() or not entry.is_dir():
            raise UserError(
                f"--jobs-dir {jobs_dir}: {root} holds {entry.name}, which the page did not make: move it away, or "
                "give another --jobs-dir"
            )
    return root
