"""The work directory's storyboard.json: the file a person edits in place, and the one the runs write (a storyboard
made anew, the keyframes' picks as they are chosen). outputs.json records each version the runs write there, marked
where it holds a person's edits. A run writes over it only a version of musicvid's own (one recorded unmarked, in a
record of this version's format: an older musicvid's proves none its own, musicvid.core.outputs) or what the run
itself read and built on. A person's edits it did not build on are never lost:

- made anew for other settings, or another --storyboard rendered into the work directory: the edited file is set
  aside first, under a numbered name beside it (set_aside), and the run says where;
- edited while the run draws (no longer the version recorded last, the one this run wrote): the run's picks are not
  saved over it (the next run picks again), said once.

A storyboard built on a person's edits holds them still once written back, so it is recorded marked, never as
musicvid's own: however many reruns built on it, the edits are set aside before a run replaces them with anything
else. One rendered from a --storyboard file (the page's table saves its edits to one) is musicvid's own: the edits are
that file's, and the page builds its next file on the work directory's.
"""

from __future__ import annotations

import itertools
import logging
import os
from functools import cache
from pathlib import Path

from musicvid.core.files import file_sha256
from musicvid.core.outputs import Version, changed_since_written, last_written, remember, written_here
from musicvid.core.workdir import Workdir
from musicvid.lyrics.transcript import Transcript
from musicvid.run import Run
from musicvid.storyboard.board import Storyboard
from vipe_core.atomic import new_temporary

log = logging.getLogger("musicvid")


def as_read(workdir: Workdir) -> Version:
    """The work directory's storyboard.json as a run reads it to build on: any version but musicvid's own holds a
    person's edits (made in place, or built on and written back)."""
    path = workdir.storyboard
    return Version(file_sha256(path), not written_here(path, workdir))


def write_storyboard(run: Run, storyboard: Storyboard, built_on: Version | None = None) -> None:
    """`storyboard` as the work directory's storyboard.json (unless that file is the run's --storyboard: an input);
    `built_on`: that file as this run read it (as_read), where `storyboard` was built on it (its edits kept, and held
    still). A person's edits there that it was not built on are set aside first (module doc)."""
    if run.storyboard_is_input:
        return
    if edited(run.workdir, built_on.sha256 if built_on else None):
        aside = set_aside(run.workdir.storyboard)
        log.warning(
            "%s held edits made for other settings or another storyboard; they are kept in %s (render "
            "them with --storyboard %s)",
            run.workdir.storyboard,
            aside,
            aside,
        )
    _write(run.workdir, storyboard, edits=built_on is not None and built_on.edits)


def save_picks(run: Run, storyboard: Storyboard) -> None:
    """The storyboard with the keyframes picked so far, saved as the drawing goes on (holding a person's edits where
    what this run wrote did): not over a storyboard.json edited since this run wrote it (the edit stays, and the next
    run picks again), said once per edit. What this run wrote is the version recorded last: a run holds its work
    directory (Workdir.held), so no other run records one in between."""
    if run.storyboard_is_input:
        return
    path = run.workdir.storyboard
    last = last_written(path, run.workdir)
    if path.is_file() and (last is None or file_sha256(path) != last.sha256):
        _kept_while_drawing(path, file_sha256(path))
        return
    _write(run.workdir, storyboard, edits=last is not None and last.edits)


def edited(workdir: Workdir, built_on: str | None) -> bool:
    """Whether the work directory's storyboard.json holds what is neither musicvid's own nor what this run built on
    (`built_on`: that file's SHA-256 as the run read it)."""
    path = workdir.storyboard
    return path.is_file() and not written_here(path, workdir) and file_sha256(path) != built_on


def set_aside(path: Path) -> Path:
    """`path` moved to the first free `<stem>.edited-<n><suffix>` beside it: a name taken is never replaced (a link
    fails where the name is taken; the file itself is then let go of its first name)."""
    for n in itertools.count(1):
        aside = path.with_name(f"{path.stem}.edited-{n}{path.suffix}")
        try:
            os.link(path, aside)
        except FileExistsError:
            continue
        path.unlink()
        return aside
    raise AssertionError("unreachable: the names above never end")


def _write(workdir: Workdir, storyboard: Storyboard, edits: bool) -> None:
    _recorded(workdir, workdir.storyboard, storyboard.text(), edits)


def _recorded(workdir: Workdir, path: Path, text: str, edits: bool = False) -> None:
    """`text` written through a temporary and renamed onto `path`; recorded in this work directory before that,
    marked where it holds a person's `edits` (then it stays theirs: module doc)."""
    tmp = new_temporary(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        remember(workdir, path, tmp, edits=edits)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_transcript(workdir: Workdir, transcript: Transcript) -> None:
    """`transcript` as the work directory's transcript.json, recorded. It is musicvid's record of what was heard, never
    read as edited: a person's edit there (changed_since_written) is set aside first, and said."""
    if changed_since_written(workdir.transcript, workdir):
        aside = set_aside(workdir.transcript)
        log.warning(
            "%s held edits; they are kept in %s (a storyboard's lines are edited in storyboard.json, and lines of "
            "your own given with --lyrics %s)",
            workdir.transcript,
            aside,
            aside,
        )
    _recorded(workdir, workdir.transcript, transcript.text(str(workdir.transcript)))


@cache
def _kept_while_drawing(path: Path, edit: str) -> None:
    """Said once per edit (`edit`: its hash) of a run's storyboard."""
    log.warning("%s was edited while this run drew; the edit is kept and takes effect on the next run", path)
