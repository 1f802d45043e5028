"""The work directory's storyboard.json: the file a person edits in place, and the one the runs write (a storyboard
made anew, the keyframes' picks as they are chosen). A run writes over it only what musicvid wrote there (outputs.json
records each version it wrote) or what the run itself read and built on. A person's edits it did not build on are
never lost:

- made anew for other settings, or another --storyboard rendered into the work directory: the edited file is set
  aside first, under a numbered name beside it (set_aside), and the run says where;
- edited while the run draws: the run's picks are not saved over it (the next run picks again), said once.
"""

from __future__ import annotations

import itertools
import logging
import os
from functools import cache
from pathlib import Path

from musicvid.core.files import file_sha256
from musicvid.core.outputs import remember, written_here
from musicvid.core.workdir import Workdir
from musicvid.run import Run
from musicvid.storyboard.board import Storyboard
from vipe_core.atomic import new_temporary

log = logging.getLogger("musicvid")


def write_storyboard(run: Run, storyboard: Storyboard, built_on: str | None = None) -> None:
    """`storyboard` as the work directory's storyboard.json (unless that file is the run's --storyboard: an input);
    `built_on`: the SHA-256 of that file as this run read it, where `storyboard` was built on it (its edits kept). A
    person's edits there that it was not built on are set aside first (module doc)."""
    if run.storyboard_is_input:
        return
    if edited(run.workdir, built_on):
        aside = set_aside(run.workdir.storyboard)
        log.warning(
            "%s held edits made for other settings or another storyboard; they are kept in %s (render "
            "them with --storyboard %s)",
            run.workdir.storyboard,
            aside,
            aside,
        )
    _write(run.workdir, storyboard)


def save_picks(run: Run, storyboard: Storyboard) -> None:
    """The storyboard with the keyframes picked so far, saved as the drawing goes on: not over a storyboard.json
    edited since this run wrote it (the edit stays, and the next run picks again), said once per edit."""
    if run.storyboard_is_input:
        return
    if edited(run.workdir, None):
        _kept_while_drawing(run.workdir.storyboard, file_sha256(run.workdir.storyboard))
        return
    _write(run.workdir, storyboard)


def edited(workdir: Workdir, built_on: str | None) -> bool:
    """Whether the work directory's storyboard.json holds what neither a run of it wrote there nor this run built on
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


def _write(workdir: Workdir, storyboard: Storyboard) -> None:
    """Written through a temporary (Storyboard.text), recorded as this work directory's before it is renamed into
    place."""
    text = storyboard.text()
    tmp = new_temporary(workdir.storyboard)
    try:
        tmp.write_text(text, encoding="utf-8")
        remember(workdir, workdir.storyboard, tmp)
        os.replace(tmp, workdir.storyboard)
    finally:
        tmp.unlink(missing_ok=True)


@cache
def _kept_while_drawing(path: Path, edit: str) -> None:
    """Said once per edit (`edit`: its hash) of a run's storyboard."""
    log.warning("%s was edited while this run drew; the edit is kept and takes effect on the next run", path)
