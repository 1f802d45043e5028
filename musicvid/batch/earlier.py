"""What earlier batches left in -o: a row whose outputs are there as musicvid wrote them for its song (made_before:
skipped where made as it asks now), or for an earlier version of its song (changed_since), or recorded by its work
directory in another folder (a batch run again from elsewhere), and those outputs made the row's own to replace
(take_over_outputs). And why a row's song cannot be rendered (song_problem)."""

from __future__ import annotations

import sys
from pathlib import Path

from musicvid.batch.playlist import Job
from musicvid.batch.report import report_key
from musicvid.core.errors import UserError
from musicvid.core.files import check_file, file_sha256
from musicvid.core.outputs import take_over, written_before, written_here
from musicvid.core.paths import printable
from musicvid.core.workdir import Workdir


def song_problem(job: Job) -> str | None:
    """Why the row's song cannot be rendered, in the sentence it fails with at its turn (run_jobs), the others made: it
    is not there, a pipe, cannot be read, or is refused (Job.refused); None where it can be read (hashed for its work
    directory, rendered)."""
    try:
        check_file(job.request.song, "audio file")
    except UserError as e:
        return job.refused or str(e)
    return job.refused


def song_read(job: Job) -> bool:
    return song_problem(job) is None


def made_before(job: Job, places: dict[tuple[str, str], Path]) -> Workdir | None:
    """The work directory whose record says every output of `job` (its video, .srt and .ass) is in -o as musicvid
    wrote it for the row's song: its own, else the one -o's report names for the row (`places`: earlier_workdirs; a
    batch run from another folder, whose musicvid-work/ is another), for the same audio; None where none says so
    (another song's video of that name, a person's file). A rerun skips such a
    row where -o's report records it made with what the row asks now (made_with); made otherwise (another --size,
    --style, models) or by a batch that did not record it, the row is rendered again, said in a line: its work
    directory keeps what still fits, and its render replaces its own outputs. A batch killed between the video's
    rename and its .srt's left the video alone: that row is rendered again, which its work directory resumes."""
    outputs = job.settings.outputs(job.output)
    if not (all(path.is_file() for path in outputs) and song_read(job)):
        return None
    workdir = Workdir.of_song(job.request.song, job.request.workdir)
    there = places.get(report_key(job))
    for place in (workdir, *([Workdir(there)] if there and there.name == workdir.root.name else [])):
        if all(written_here(path, place) for path in outputs):
            return place
    return None


def changed_since(job: Job, earlier: dict[tuple[str, str], str]) -> bool:
    """Whether the row's song changed (retagged, replaced) since a batch made its outputs in -o: `earlier` (the
    (song, output) pairs of -o's report) names its video as this song's, and each of its outputs there, one at least,
    is as a run for this song wrote it, now or for an earlier version of it, and one at least for an earlier one.
    Such a row is rendered again and replaces them; a file whose bytes no run recorded (a person's, a video edited since) is refused as ever."""
    if report_key(job) not in earlier or job.request.workdir:
        return False  # (with --workdir a row's work directory is one for every version of its song)
    there = [path for path in job.settings.outputs(job.output) if path.exists() or path.is_symlink()]
    if not (there and song_read(job)):
        return False
    workdir = Workdir.of_song(job.request.song, None)
    now = [written_here(path, workdir) for path in there]  # (all of them: this song's, as --force renders it again)
    return not all(now) and all(mine or written_before(path, workdir) for mine, path in zip(now, there))


def take_over_outputs(job: Job, owner: Workdir | None = None) -> None:
    """The outputs in -o that a run for an earlier version of the row's song wrote (said in a line), or that `owner`
    records (the row's work directory in another folder), recorded as the row's work directory's (take_over), so that
    its render replaces them."""
    if owner is None:
        song = printable(job.song)
        print(f"{song}: the song changed since its video was made: rendering again", file=sys.stderr)
    workdir = Workdir.of_song(job.request.song, job.request.workdir if owner else None)
    with workdir.held(wait=True, sha256=file_sha256(job.request.song)):
        take_over(job.settings.outputs(job.output), workdir, owner)
