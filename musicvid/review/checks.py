"""What `musicvid score` checks before its scorer loads (the default CLIP ViT-L is 1.7 GB), each refusal one
sentence: the work directory, its files' kinds and that it is musicvid's, before any of its files is read; a
storyboard no longer than the longest song taken; the shown keyframes drawn, and every picture it will read whole."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from PIL import Image

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_SONG_SECONDS
from musicvid.core.workdir import Workdir
from musicvid.pictures.cache import picture_key, stored_key
from musicvid.pictures.schedule import FrameSchedule, Segment
from musicvid.review.chart import is_own_chart
from musicvid.storyboard.board import Storyboard

MAX_REPORT_BYTES = 2**26  # a score.json larger is no report of score's (about a kilobyte a scene)


def check_folder(root: Path) -> Workdir:
    """The work directory at `root`, or one sentence saying why it is none. Its files are not read here: a FIFO
    as timings.json would hang the read, and a link to /dev/zero fill the memory (check_kinds refuses both)."""
    workdir = Workdir(root)
    if root.exists() and not root.is_dir():
        raise UserError(
            f"work directory {root} is a file, not a folder: give the folder a render worked in (--workdir)"
        )
    if not root.is_dir():
        raise UserError(f"work directory {root} does not exist: give the folder a render worked in (--workdir)")
    # musicvid's, its files of their kinds: score.json, score.png and the sheet replace only ours
    workdir.check(only="score reads only a folder a render worked in (--workdir)")
    return workdir


def check_length(storyboard: Storyboard, source: Path) -> None:
    """Refuse a storyboard longer than any song a render takes (an edited duration): its duration sizes the
    frame schedule and the onsets' chance baseline."""
    if storyboard.duration > MAX_SONG_SECONDS:
        raise UserError(
            f"storyboard {source} is for audio of {storyboard.duration:.2f} s, longer than the "
            f"{MAX_SONG_SECONDS / 60:g} minutes a render takes: render the song again"
        )


def is_whole(path: Path) -> bool:
    """Whether the picture at `path` opens and its data checks out (PNG: every chunk's CRC, to its end)."""
    try:
        with Image.open(path) as image:
            image.verify()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return False
    return True


def picture_size(path: Path) -> tuple[int, int]:
    """Width × height, from the picture's header (check_pictures has found it whole)."""
    with Image.open(path) as image:
        return image.size


def morph_paths(workdir: Workdir, segment: Segment) -> list[Path]:
    """A morph's pictures in order: its keyframe, the frames between, the keyframe it reaches (`segment`: a morph's,
    one with a target)."""
    frames = [workdir.frame(k) for k in range(segment.first + 1, segment.end)]
    return [workdir.keyframe(segment.scene), *frames, workdir.keyframe(segment.target)]


def morph_key(keys: Iterable[str | None]) -> str:
    """A morph's pictures' keys (in morph_paths' order) hashed: what a render's timings.json records of each morph it
    drew (musicvid.review.run_report), and what `score` checks the pictures on disk against."""
    return picture_key(*keys)


def prompt_key(prompt: str) -> str:
    """A prompt hashed: what a render's timings.json records of the prompt each keyframe was drawn for."""
    return picture_key(prompt)


def stale_keyframes(workdir: Workdir, storyboard: Storyboard, shown: Iterable[int], drawn: Any) -> list[int]:
    """The `shown` scenes whose keyframe on disk is the one a render drew (`drawn`: its timings.json's keyframes, by
    scene its key and prompt_key) for another prompt than the storyboard's now (made again since without
    --keyframes, or edited): scored, the picture would be judged by words it was not drawn for. None where the render
    recorded none; a keyframe drawn since (by `storyboard --keyframes`) has another key, and is the storyboard's."""
    if not isinstance(drawn, dict):
        return []
    records = {s: drawn.get(str(s)) for s in shown}
    records = {s: r for s, r in records.items() if isinstance(r, list) and len(r) == 2}
    return [
        s
        for s, (key, prompt) in records.items()
        if prompt != prompt_key(storyboard.scenes[s].prompt) and stored_key(workdir.keyframe(s)) == key
    ]


def check_pictures(
    workdir: Workdir, schedule: FrameSchedule, drawn_morphs: Collection[str] | None = None, stale: Collection[int] = ()
) -> None:
    """Refuse a render with none of its shown keyframes drawn (or all `stale`: stale_keyframes), or with a damaged
    picture among the keyframes and morph frames the report reads (`drawn_morphs`: the scenes whose morphs the
    render drew, where its timings.json says; those of the others are an earlier render's, not read). A frame not on
    disk is no refusal: the report counts it (missing_frames)."""
    drawn = [workdir.keyframe(i) for i in schedule.shown_scenes if workdir.keyframe(i).is_file()]
    if drawn and len(stale) == len(drawn):
        raise UserError(
            f"every keyframe in {workdir.root} was drawn for another prompt than its storyboard.json's now (made "
            "again or edited since): render it again, then score it"
        )
    if not drawn:
        raise UserError(
            f"work directory {workdir.root} holds no keyframes: render it (or storyboard --keyframes) first"
        )
    morphs = [s for s in schedule.segments if s.target is not None]
    morphs = [s for s in morphs if drawn_morphs is None or str(s.scene) in drawn_morphs]
    frames = (path for segment in morphs for path in morph_paths(workdir, segment)[1:-1])
    for path in chain(drawn, frames):
        if path.is_file() and not is_whole(path):
            raise UserError(f"{path} is damaged: render {workdir.root} again to redraw it")


def check_own_reports(workdir: Workdir) -> None:
    """Refuse, before the scorer loads, a score.json or score.png here that `musicvid score` did not write (a
    person's notes or picture saved under its name), which the score would replace. A chart from before charts
    were marked (`is_own_chart`) is taken as ours beside a report of ours."""
    report = workdir.score_report
    ours = report.is_file() and is_own_report(report)
    if report.exists() and not ours:
        raise UserError(f"{report} is not a report musicvid score wrote: move it away, and score again")
    if workdir.score_chart.exists() and not (ours or is_own_chart(workdir.score_chart)):
        raise UserError(f"{workdir.score_chart} is not a chart musicvid score drew: move it away, and score again")


def is_own_report(path: Path) -> bool:
    """Whether `path` holds a report as `musicvid score` writes it (a JSON object with its scorer, scenes and summary)."""
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:  # (not read whole)
            return False
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # (UnicodeDecodeError is a ValueError)
        return False
    return isinstance(report, dict) and {"scorer", "scenes", "summary"} <= report.keys()
