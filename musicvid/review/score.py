"""`musicvid score WORKDIR`: a report of a finished render, as score.json and score.png in its work directory.

What it measures (score.json's fields: docs/cli.md):

- scenes: each shown scene's keyframe scored by a CLIP-family model (musicvid.pictures.scores): CLIPScore
  against its lyric (none for a scene without words) and against its prompt.
- smoothness, per morph from keyframe i to keyframe j, over the pictures on disk from one to the other
  (docs/frames.md), where they are the ones the render drew (its timings.json records each morph's pictures' keys:
  a preview draws none, and frames an earlier render left are not its): a step's change is the mean absolute
  difference of two consecutive pictures, as a share of full scale (0–1). mean_step is the mean of a morph's
  steps; largest_step_share is its largest step's share of their sum: 1/steps where the picture changes evenly,
  1 where all of it is one jump (what a viewer sees as a cut). With --pacing beats a morph moves on the beats on
  purpose: compare renders of one pacing.
- beat_alignment: the times the pictures change (each shown scene's first frame, after the first) against
  the song's onsets (librosa's, on musicvid.core.audio.find_beats' onset strength): each change's distance to
  the nearest onset, their mean, the share within one frame, and, for scale, the mean distance of times
  spread evenly over the song (where changes placed by chance would fall).
- lyric_timing: each lyric scene's start against the start of its line in transcript.json (a render from a
  timed lyrics file keeps no transcript: then there is nothing to compare). Both timings: musicvid.review.timing.

Each scene's row names its keyframe's pick where the storyboard records one (musicvid.storyboard.picks): the seed kept
and how many candidates were drawn for it.

The report is of the frame rate the render drew at: the one its timings.json records; a render made before it
was recorded is read at `--fps` (10 by default), and a timings.json whose frame count another rate gives is
refused in one sentence.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from musicvid.core.errors import UserError, number_text
from musicvid.core.workdir import Workdir
from musicvid.models.names import check_model
from musicvid.models.registry import ModelRegistry
from musicvid.models.scorer import Scorer
from musicvid.pictures.cache import load_picture, stored_key
from musicvid.pictures.keyframe_candidates import kept_seed
from musicvid.pictures.schedule import FrameSchedule, frame_schedule
from musicvid.pictures.scores import SceneScores, lyric_of, score_keyframes
from musicvid.review.chart import write_chart
from musicvid.review.checks import (
    check_folder,
    check_length,
    check_own_reports,
    check_pictures,
    morph_key,
    morph_paths,
    picture_size,
    stale_keyframes,
)
from musicvid.review.sheet import write_contact_sheet
from musicvid.review.timing import beat_alignment, lyric_timing, song_onsets
from musicvid.settings.geometry import DRAWN_FPS
from musicvid.settings.presets import TINY
from musicvid.settings.render import RenderSettings
from musicvid.settings.schema import check_field
from musicvid.storyboard.board import Storyboard, load_storyboard
from vipe_core.atomic import write_json

FPS = RenderSettings.fields()["fps"]  # what --fps takes, and a recorded rate is checked as
log = logging.getLogger("musicvid")
MAX_TIMINGS_BYTES = 16 * 2**20  # a render's timings.json is kilobytes
RECORDS = ("keyframes", "morph_keys", "models")  # what of it the score reads as objects (run_report writes them so)
RANDOM_WEIGHTS = "random weights: a check of the mechanics, not a measure of quality"


def open_render(workdir: Workdir) -> Storyboard:
    """The storyboard of the render in `workdir` (held: a render begun there has written none yet), or one sentence
    saying why there is none."""
    if not workdir.storyboard.is_file():
        raise UserError(f"work directory {workdir.root} holds no storyboard.json: render a song into it first")
    storyboard = load_storyboard(workdir.storyboard)
    check_length(storyboard, workdir.storyboard)
    return storyboard


def render_timings(workdir: Workdir) -> dict[str, Any]:
    """The render's timings.json; empty where there is none. One that is not a render's report (not a JSON object
    in UTF-8, or larger than any render writes: not read whole) is refused: a render writes it whole, under a
    temporary name, so it was damaged, and the rate it records is the one the frames on disk are of (drawn_rate).
    check_folder has found it a file, if anything."""
    if not workdir.timings.is_file():
        return {}
    try:
        if workdir.timings.stat().st_size > MAX_TIMINGS_BYTES:
            raise ValueError(f"over {MAX_TIMINGS_BYTES // 2**20} MB")
        timings = json.loads(workdir.timings.read_text(encoding="utf-8"))
        if not isinstance(timings, dict):
            raise ValueError("not a JSON object")
        if misfit := [key for key in RECORDS if key in timings and not isinstance(timings[key], dict)]:
            raise ValueError(f"its {misfit[0]} is not an object")
    except (OSError, ValueError) as error:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        reason = getattr(error, "strerror", None) or str(error).splitlines()[0]
        raise UserError(
            f"{workdir.timings} is not a render's report ({reason}): render the song again into {workdir.root}"
        ) from None
    return timings


def render_scorer(root: Path) -> str | None:
    """The scorer the render in `root` used, as its records say: timings.json's, else the one its storyboard's
    picks name (`storyboard --keyframes` writes no timings.json); checked as --scorer is. None where neither
    names one: then the preset's."""
    workdir = check_folder(root)  # before any of its files is read
    models = render_timings(workdir).get("models")
    scorer = models.get("scorer") if isinstance(models, dict) else None
    name = scorer.get("name") if isinstance(scorer, dict) else None
    if not isinstance(name, str) or not name:
        try:
            picks = {scene.pick.scorer for scene in load_storyboard(workdir.storyboard).scenes if scene.pick}
        except (OSError, UserError):
            picks = set()
        name, where = (picks.pop() if len(picks) == 1 else None), workdir.storyboard
    else:
        where = workdir.timings
    if name:
        check_model("scorer", name, f"the scorer {name} that {where} records")
    return name


def as_rate(value: Any) -> float | None:
    """`value` as a rate --fps takes (FPS: 1 to 60); None where it is none (NaN, 0, -4, 100000, "ten")."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        check_field(FPS, value)
    except UserError:
        return None
    return float(value)


def drawn_rate(workdir: Workdir, fps: float | None) -> tuple[float, str]:
    """The rate the render drew at and where it was read: its timings.json's "fps", checked as --fps is; else
    `fps` (--fps, for a render made before the rate was recorded, or whose record is not a rate), else the
    default. An --fps that is not the recorded rate is refused: the frames on disk are of that rate."""
    recorded = render_timings(workdir).get("fps")
    rate = as_rate(recorded)
    if recorded is not None and rate is None and fps is None:
        raise UserError(
            f"{workdir.timings} records the rate drawn as {recorded!r}, not one --fps takes (from "
            f"{FPS.metadata['low']} to {FPS.metadata['high']}): give --fps the rate the render drew at"
        )
    if rate is not None:
        if fps is not None and fps != rate:
            raise UserError(
                f"{workdir.root} was drawn at {number_text(rate)} fps (its timings.json says so), not "
                f"{number_text(fps)}: leave out --fps, which is for renders that did not record their rate"
            )
        return rate, "timings.json"
    if fps is None:
        log.warning(
            f"{workdir.root} records no rate drawn: it is scored as drawn at {DRAWN_FPS:g} fps (--fps gives its rate)"
        )
        return DRAWN_FPS, "default"
    return fps, "--fps"


def render_schedule(workdir: Workdir, storyboard: Storyboard, fps: float) -> FrameSchedule:
    """The frame schedule the render drew at `fps`, checked against the frame count its timings.json records."""
    schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, fps)
    frames = render_timings(workdir).get("frames")
    if isinstance(frames, int) and frames != schedule.frame_count:
        raise UserError(
            f"{workdir.root} was rendered to {frames} frames, not the {schedule.frame_count} of --fps {fps:g}: "
            "give the --fps it was rendered at"
        )
    return schedule


@dataclass(frozen=True)
class RenderRead:
    """What a render's records say it drew: its rate (and where that was read: drawn_rate), its frame schedule, and
    the shown scenes whose keyframe was drawn for another prompt (stale_keyframes: not scored)."""

    fps: float
    fps_from: str
    schedule: FrameSchedule
    stale: list[int]


def read_render(workdir: Workdir, storyboard: Storyboard, fps: float | None) -> RenderRead:
    """The render in `workdir` as its records tell it (`fps`: --fps, drawn_rate); refused in one sentence where they
    disagree with the storyboard."""
    rate, rate_from = drawn_rate(workdir, fps)
    schedule = render_schedule(workdir, storyboard, rate)
    stale = stale_keyframes(workdir, storyboard, schedule.shown_scenes, render_timings(workdir).get("keyframes"))
    return RenderRead(rate, rate_from, schedule, stale)


def score_scenes(scorer: Scorer, storyboard: Storyboard, workdir: Workdir, shown: list[int]) -> dict[int, SceneScores]:
    """The scores of each shown scene whose keyframe is on disk (one at least: check_pictures), by scene index."""
    drawn = [i for i in shown if workdir.keyframe(i).is_file()]
    scenes = [storyboard.scenes[i] for i in drawn]
    pictures = [load_picture(workdir.keyframe(i)) for i in drawn]
    scores = score_keyframes(scorer, pictures, [s.prompt for s in scenes], [lyric_of(s) for s in scenes])
    return dict(zip(drawn, scores))


def scene_rows(storyboard: Storyboard, scores: dict[int, SceneScores]) -> list[dict[str, Any]]:
    rows = []
    for index, scored in scores.items():
        scene = storyboard.scenes[index]
        row = {"scene": index, "kind": scene.kind, "start": scene.start, "lyric_text": lyric_of(scene)}
        row |= {"prompt_text": scene.prompt, **scored.to_dict()}
        if scored.lyric is None:
            row["note"] = f"no lyric: {scene.kind} without words"
        if scene.pick is not None:  # which candidate the render kept, of how many (docs/storyboard.md)
            pick = scene.pick
            row["pick"] = {
                "seed": kept_seed(pick),
                "from_seed": pick.from_seed,
                "kept": pick.kept,
                "rounds": pick.rounds,
            }
            row["pick"] |= {"drawn": pick.candidates * pick.rounds, "scorer": pick.scorer}
        rows.append(row)
    return rows


def step_changes(pictures: Iterator[np.ndarray]) -> np.ndarray:
    """The mean absolute change from each picture to the next, as a share of full scale (0–1)."""
    changes, before = [], None
    for picture in pictures:
        now = picture.astype(np.float32)
        if before is not None:
            changes.append(float(np.abs(now - before).mean()) / 255)
        before = now
    return np.asarray(changes)


def drawn_morphs(workdir: Workdir) -> dict[str, Any] | None:
    """The morphs the render drew, as its timings.json records them: by scene, its pictures' keys hashed (morph_key);
    None where it records none (a render made before they were recorded: its frames on disk are taken as its)."""
    record = render_timings(workdir).get("morph_keys")
    return record if isinstance(record, dict) else None


def stale_frames(paths: list[Path], drawn: Any) -> int:
    """How many of a morph's pictures (`paths`) are not of it: with its key recorded (`drawn`), every frame between
    its keyframes once any of their keys is another (a keyframe redrawn since by `storyboard --keyframes`); else
    those of another size than its first keyframe (drawn at another --size)."""
    if drawn is not None:
        return 0 if morph_key(map(stored_key, paths)) == drawn else len(paths) - 2
    sizes = [picture_size(path) for path in paths]
    return sum(size != sizes[0] for size in sizes)


def morph_smoothness(
    workdir: Workdir, schedule: FrameSchedule, drawn: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each morph's steps from its keyframe to the next, as far as its frames are this render's: drawn by it
    (`drawn`: drawn_morphs; what an earlier render left of a morph it did not draw counts as missing, as in a
    fresh preview), on disk and not stale (stale_frames)."""
    morphs = []
    for segment in schedule.segments:
        if segment.target is None:
            continue
        paths = morph_paths(workdir, segment)
        row: dict[str, Any] = {"scene": segment.scene, "target": segment.target, "steps": len(paths) - 1}
        ours = paths if drawn is None or str(segment.scene) in drawn else [paths[0], paths[-1]]
        missing = len(paths) - sum(path.is_file() for path in ours)
        if missing:  # a preview crossfades keyframes, and a render that stopped left some undrawn
            morphs.append({**row, "missing_frames": missing})
            continue
        stale = stale_frames(paths, None if drawn is None else drawn[str(segment.scene)])
        if stale:
            morphs.append({**row, "stale_frames": stale})
            continue
        changes = step_changes(load_picture(path) for path in paths)
        total = float(changes.sum())
        row["mean_step"] = float(changes.mean())
        row["largest_step_share"] = float(changes.max()) / total if total > 0 else 1.0 / len(changes)
        morphs.append(row)
    return morphs


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def summary(report: dict[str, Any]) -> dict[str, float | None]:
    """The report's figures in one row (the quality benchmark's columns)."""
    morphs = report["smoothness"]
    return {
        "lyric": _mean([row["lyric"] for row in report["scenes"]]),
        "prompt": _mean([row["prompt"] for row in report["scenes"]]),
        "mean_step": _mean([row.get("mean_step") for row in morphs]),
        "largest_step_share": _mean([row.get("largest_step_share") for row in morphs]),
        "onset_seconds": report["beat_alignment"].get("mean_seconds"),
        "chance_onset_seconds": report["beat_alignment"].get("chance_mean_seconds"),
        "lyric_offset_seconds": report["lyric_timing"].get("mean_abs_offset"),
    }


def rounded(value: Any, digits: int = 4) -> Any:
    """`value` with every number in it rounded to `digits` decimals (what the measures can tell apart)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item, digits) for item in value]
    return value


def quality_report(
    workdir: Workdir, storyboard: Storyboard, scorer: Scorer, onsets: np.ndarray | str, read: RenderRead
) -> tuple[dict[str, Any], dict[int, SceneScores]]:
    """The report of the render in `workdir` (`read`: read_render), and the keyframes' scores by scene (`onsets`:
    song_onsets)."""
    schedule = read.schedule
    scores = score_scenes(scorer, storyboard, workdir, [s for s in schedule.shown_scenes if s not in read.stale])
    report: dict[str, Any] = {"workdir": str(workdir.root), "scorer": scorer.name, "fps": read.fps}
    report["fps_from"] = read.fps_from
    if read.stale:  # (drawn for other prompts: not scored)
        report["stale_keyframes"] = read.stale
    if scorer.name == TINY:
        report["note"] = RANDOM_WEIGHTS
    report["scenes"] = scene_rows(storyboard, scores)
    report["smoothness"] = morph_smoothness(workdir, schedule, drawn_morphs(workdir))
    report["beat_alignment"] = beat_alignment(storyboard, schedule, onsets)
    report["lyric_timing"] = lyric_timing(workdir, storyboard)
    report["summary"] = summary(report)
    return rounded(report), scores


def score_render(root: Path, registry: ModelRegistry, fps: float | None = None) -> dict[str, Any]:
    """`musicvid score`: the report of the render in `root` by the registry's scorer, written there as
    score.json and score.png, and its contact sheet drawn again with the scores. The work directory is held
    (no render changes it) while it is read. `fps`: --fps (its range checked by the command line), for a render
    whose timings.json has no rate."""
    workdir = check_folder(root)
    with workdir.held():  # what can be refused is, before the scorer loads
        storyboard = open_render(workdir)
        onsets = song_onsets(storyboard, str(workdir.storyboard))  # (its duration checked, before it sizes anything)
        read = read_render(workdir, storyboard, fps)
        check_pictures(workdir, read.schedule, drawn_morphs(workdir), read.stale)
        check_own_reports(workdir)
        with registry.use("scorer") as scorer:
            report, scores = quality_report(workdir, storyboard, scorer, onsets, read)
        write_json(workdir.score_report, report)
        write_chart(workdir.score_chart, report, summary_text(report).splitlines())
        write_contact_sheet(storyboard, workdir, list(scores), scores)
    return report


def summary_text(report: dict[str, Any]) -> str:
    """The report in a few lines, for the terminal."""
    figures = report["summary"]

    def shown(value: float | None, unit: str = "") -> str:
        return "–" if value is None else f"{value:.3f}{unit}"

    lines = [f"scored by {report['scorer']}" + (f" ({report['note']})" if "note" in report else "")]
    lines.append(f"lyric {shown(figures['lyric'])} · prompt {shown(figures['prompt'])} (CLIPScore, 0–2.5)")
    if stale := report.get("stale_keyframes"):
        lines.append(
            f"{len(stale)} keyframes drawn for other prompts than the storyboard's now: not scored (render again)"
        )
    picks = [row["pick"] for row in report["scenes"] if "pick" in row]
    if picks:
        drawn = sorted({pick["drawn"] for pick in picks})
        each = f"{drawn[0]}" if len(drawn) == 1 else f"{drawn[0]}–{drawn[-1]}"
        chosen = "one candidate each, scored" if drawn == [1] else f"each the best of {each} candidates"
        lines.append(f"picks: {len(picks)} keyframes, {chosen} (kept seeds in score.json)")
    lines.append(
        f"smoothness: mean step {shown(figures['mean_step'])}, largest step {shown(figures['largest_step_share'])} "
        "of a morph's change"
    )
    beats = report["beat_alignment"]
    lines.append(
        f"onsets: {beats['missing']}"
        if "missing" in beats
        else f"onsets: changes {shown(beats['mean_seconds'], ' s')} from one (by chance "
        f"{shown(beats['chance_mean_seconds'], ' s')})"
    )
    timing = report["lyric_timing"]
    lines.append(
        f"lyric timing: {timing['missing']}"
        if "missing" in timing
        else f"lyric timing: scenes start {shown(timing['mean_abs_offset'], ' s')} from their lines"
    )
    return "\n".join(lines)
