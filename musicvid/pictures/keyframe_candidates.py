"""Best of N: each shown scene's keyframe drawn from --keyframe-candidates seeds in one batch, each candidate
scored against the scene's lyric and prompt (musicvid.pictures.scores), and the one ranked first kept.

The kept seed and its scores go into the storyboard (musicvid.storyboard.picks), the kept picture into the keyed cache
under the key its picture has in the render (musicvid.pictures.grouping) for that scene and seed, so the render that follows keeps it. One candidate
(the default) is the scene's own seed: nothing changes but that the keyframe is scored. --reroll-below draws
further rounds of candidates for a scene whose kept keyframe scores below it, up to MAX_ROUNDS, and keeps the
best of all; each round's seeds follow from the scene's, so a resume makes the same picks. Without either, the
scorer is a report's model: where it cannot be loaded, the keyframes are drawn by the render unscored.

A pick is made once per keyframe, and holds until what the keyframe is drawn from changes (its key): the
returns of a chorus motif share one pick, and a pinned picture is scored but never replaced.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from musicvid.core.progress import Progress
from musicvid.core.workdir import Workdir
from musicvid.models.drawing import Drawing
from musicvid.models.kinds import ModelUnavailable
from musicvid.models.timing import Timings
from musicvid.pictures.cache import load_picture, save_picture, stored_key
from musicvid.pictures.conditioning import SceneInputs, pinned_picture
from musicvid.pictures.denoise import draw_group, draw_groups
from musicvid.pictures.grouping import KeyframeKeys, Picture, picture_groups, uses_reference
from musicvid.pictures.schedule import FrameSchedule
from musicvid.pictures.scores import SceneScores, lyric_of, rank_candidates, score_keyframes
from musicvid.pictures.switches import pipeline_for
from musicvid.run import Run
from musicvid.settings.render import MAX_ROUNDS, RenderSettings
from musicvid.storyboard.board import Scene, Storyboard
from musicvid.storyboard.picks import KeyframePick

log = logging.getLogger("musicvid")

SAVE_EVERY_SECONDS = 30.0  # how often the storyboard is saved while picks are made (a killed run keeps them)


def candidate_seed(from_seed: int, n: int) -> int:
    """The seed of candidate `n` drawn from the scene's seed `from_seed`: the first is the seed itself (one
    candidate draws what a render without picks draws); the others are derived, stable across machines."""
    if n == 0:
        return from_seed
    digest = hashlib.sha256(f"musicvid:candidate:{from_seed}:{n}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def kept_seed(pick: KeyframePick) -> int:
    """The seed of the candidate a pick kept: the scene's seed while the pick holds."""
    return candidate_seed(pick.from_seed, pick.kept)


@dataclass
class Choosing:
    """One keyframe being picked, for `scenes` (a motif's returns share it): candidates drawn from `from_seed`,
    `per_round` at a time, `rounds` of them so far; the best so far by candidate number, with its scores and
    its pixels (None: it is the keyframe on disk already, or the render draws it)."""

    scenes: list[int]
    from_seed: int
    per_round: int
    rounds: int = 0
    kept: int | None = None
    scores: SceneScores | None = None
    pixels: np.ndarray | None = None
    lost: bool = False  # picked, but its keyframe is gone


@dataclass(frozen=True)
class Picked:
    """What pick_keyframes did: the storyboard with its picks, keyframes written, and candidates drawn for them."""

    storyboard: Storyboard
    keyframes: int
    keyframe_candidates: int


def pick_keyframes(
    run: Run,
    storyboard: Storyboard,
    schedule: FrameSchedule,
    save: Callable[[Storyboard], object] = lambda storyboard: None,
) -> Picked:
    """Pick every shown scene's keyframe whose pick does not hold (module doc): the storyboard returned has its
    seed and pick, its picture is written to the work directory; `save` is given the storyboard as it stands now
    and then and at the end. Stable Diffusion is loaded only if a candidate is to be drawn; the run's stop signal
    ends it within a step."""
    settings, registry, workdir, timings = run.settings, run.registry, run.workdir, run.timings
    memory, stop = run.memory, run.stop
    drawing = Drawing(settings.fast, settings.lora, uses_reference(storyboard, settings))
    keys = KeyframeKeys(storyboard, settings, drawing.key(registry.models, registry.precision))
    todo = picks_to_make(storyboard, schedule.shown_scenes, keys, settings, registry.models.scorer, workdir)
    if not todo:
        return Picked(storyboard, 0, 0)
    keyframes = keyframe_candidates = 0
    saved_at = time.monotonic()
    with (
        ExitStack() as loaded,
        Progress("pick keyframes", total=len(todo), unit="scene", quiet=run.quiet) as progress,
    ):
        try:
            scorer = loaded.enter_context(registry.use("scorer", timings, memory))
        except ModelUnavailable as error:
            if settings.picks_by_score:  # (refused before the work where that could be told: musicvid.prepare)
                raise
            log.warning("the keyframes are not scored, and the render goes on: %s", error)
            return Picked(storyboard, 0, 0)
        pipes = []  # the render's pipeline, once a candidate is to be drawn

        def own_pipe():
            if not pipes:
                pipe = loaded.enter_context(registry.use(drawing, timings, memory))
                pipes.append(pipeline_for(pipe, settings, run.offloads["pictures"]))
            return pipes[0]

        if stale := keyframes_as_drawn(storyboard, todo, keys, workdir, settings.size):  # then scored as they are
            drawn_by = drawing.key(registry.models, registry.precision)
            groups = picture_groups(storyboard, schedule, settings, drawn_by, workdir, keyframes_only=True)
            written = draw_groups(own_pipe(), storyboard, groups, stale, settings, timings, run.quiet, stop)
            keyframes, keyframe_candidates = keyframes + written, keyframe_candidates + written
        for choosing in todo:
            scene = storyboard.scenes[choosing.scenes[0]]
            if choosing.lost:  # the kept candidate's round drawn again as it was: the very same picture
                round = choosing.kept // choosing.per_round
                pictures = draw_round(own_pipe(), storyboard, choosing, round, settings, timings, stop)
                choosing.pixels = pictures[choosing.kept % choosing.per_round]
                keyframe_candidates += len(pictures)
            while choosing.kept is None or wants_more(choosing, scene, settings):
                if scene.picture or (
                    choosing.rounds == 0 and drawn_already(choosing, scene, keys, workdir, settings.size)
                ):
                    pictures = None  # scored as it is
                else:
                    pictures = draw_round(own_pipe(), storyboard, choosing, choosing.rounds, settings, timings, stop)
                    keyframe_candidates += len(pictures)
                keep_best(choosing, scorer, scene, pictures, settings, workdir, timings)
            kept, written = keep(choosing, storyboard, keys, scorer.name, workdir)
            storyboard, keyframes = storyboard.with_scenes(kept), keyframes + written
            progress.advance()
            if time.monotonic() - saved_at > SAVE_EVERY_SECONDS:
                save(storyboard)
                saved_at = time.monotonic()
    save(storyboard)
    return Picked(storyboard, keyframes, keyframe_candidates)


def picks_to_make(
    storyboard: Storyboard,
    shown: list[int],
    keys: KeyframeKeys,
    settings: RenderSettings,
    scorer: str,
    workdir: Workdir,
) -> list[Choosing]:
    """The keyframes to pick, one per key of their first candidate (the returns of a motif share it), and
    those whose pick holds but whose picture is gone (drawn among others, it is drawn among them again)."""
    count = settings.keyframe_candidates
    todo: dict[tuple, Choosing] = {}
    for index in shown:
        scene = storyboard.scenes[index]
        pick = scene.pick
        holds = (
            pick is not None and pick.key == keys.key(scene) and kept_seed(pick) == scene.seed and pick.scorer == scorer
        )
        if holds and (count == 1 or pick.candidates == count or scene.picture):
            choosing = choosing_of(pick, index)  # a reroll goes on from the pick as it is
            kept_alone = pick.candidates == 1 or scene.picture  # (then the render draws it as it was)
            choosing.lost = not kept_alone and stored_key(workdir.keyframe(index), settings.size) != pick.key
            if not (choosing.lost or wants_more(choosing, scene, settings)):
                continue
        elif count == 1 or scene.picture or pick is None or kept_seed(pick) != scene.seed:
            choosing = Choosing([index], scene.seed, 1 if scene.picture else count)  # (a seed edited by hand)
        else:  # drawn from another prompt or models: picked again from the seeds it was picked from
            choosing = Choosing([index], pick.from_seed, count)
        same = (keys.key(scene, choosing.from_seed), choosing.per_round, choosing.rounds, choosing.kept)
        if same in todo:
            todo[same].scenes.append(index)
        else:
            todo[same] = choosing
    return list(todo.values())


def keyframes_as_drawn(
    storyboard: Storyboard, todo: list[Choosing], keys: KeyframeKeys, workdir: Workdir, size: tuple[int, int]
) -> set[Path]:
    """The keyframes whose first round is one candidate, the scene's own seed, not drawn yet: the very pictures a
    render draws, so they are drawn as it does, by its blocks of scenes (musicvid.pictures.grouping), and
    written; a killed run keeps them, and a render finds them drawn."""
    stale = set()
    for choosing in todo:
        scene = storyboard.scenes[choosing.scenes[0]]
        own = choosing.per_round == 1 and choosing.from_seed == scene.seed
        if (
            own
            and choosing.rounds == 0
            and not scene.picture
            and not drawn_already(choosing, scene, keys, workdir, size)
        ):
            stale.add(workdir.keyframe(scene.index))
    return stale


def choosing_of(pick: KeyframePick, index: int) -> Choosing:
    scores = SceneScores(pick.lyric, pick.prompt)
    return Choosing([index], pick.from_seed, pick.candidates, pick.rounds, pick.kept, scores)


def wants_more(choosing: Choosing, scene: Scene, settings: RenderSettings) -> bool:
    """Whether --reroll-below asks for another round: the best so far scores below it, rounds are left, and
    the keyframe is drawn (a pinned picture is what it is)."""
    low = settings.reroll_below is not None and choosing.scores.together < settings.reroll_below
    return low and choosing.rounds < MAX_ROUNDS and not scene.picture


def drawn_already(
    choosing: Choosing, scene: Scene, keys: KeyframeKeys, workdir: Workdir, size: tuple[int, int]
) -> bool:
    """Whether a pick's first round is the keyframe on disk: one candidate, the scene's own seed, drawn by a
    render made before picks or by one killed after drawing it (then it is scored, not drawn again)."""
    own = choosing.per_round == 1 and choosing.from_seed == scene.seed
    return own and stored_key(workdir.keyframe(scene.index), size) == keys.key(scene)


def draw_round(
    pipe,
    storyboard: Storyboard,
    choosing: Choosing,
    round: int,
    settings: RenderSettings,
    timings: Timings,
    stop: threading.Event | None,
) -> np.ndarray:
    """A round's candidates of a keyframe: its scene drawn from each candidate's seed, in batches of at most
    --batch-size (one batch, as a rule), as uint8 RGB pictures."""
    scene = storyboard.scenes[choosing.scenes[0]]
    first = round * choosing.per_round
    seeds = [candidate_seed(choosing.from_seed, n) for n in range(first, first + choosing.per_round)]
    # each candidate as a scene of a storyboard of its own, so that it is conditioned as every keyframe is
    drafts = dataclasses.replace(
        storyboard, scenes=[dataclasses.replace(scene, index=n, seed=seed) for n, seed in enumerate(seeds)]
    )
    inputs = SceneInputs(pipe, drafts, list(range(len(seeds))), settings)
    pictures = [Picture(Path(), "", n, None, 0.0) for n in range(len(seeds))]
    batches = [pictures[at : at + settings.batch] for at in range(0, len(pictures), settings.batch)]
    return np.concatenate([draw_group(pipe, inputs, batch, settings, timings, stop) for batch in batches])


def keep_best(
    choosing: Choosing,
    scorer,
    scene: Scene,
    pictures: np.ndarray | None,
    settings: RenderSettings,
    workdir: Workdir,
    timings: Timings,
) -> None:
    """Score a round's candidates (None: the scene's keyframe as it is, pinned or on disk) and keep the best
    of them and the best so far; ties go to the earlier candidate."""
    as_it_is = pictures is None  # (then nothing is written: it is on disk, or the render writes the pinned one)
    if as_it_is:
        source = Path(scene.picture) if scene.picture else workdir.keyframe(scene.index)
        pictures = np.stack([pinned_picture(source, settings) if scene.picture else load_picture(source)])
    with timings.measure("score keyframes"):
        scores = score_keyframes(
            scorer, list(pictures), [scene.prompt] * len(pictures), [lyric_of(scene)] * len(pictures)
        )
    first = choosing.rounds * choosing.per_round
    if choosing.kept is not None:  # the best so far first: it wins a tie
        scores = [choosing.scores, *scores]
    best = rank_candidates(scores)[0]
    if choosing.kept is None or best > 0:
        at = best - (choosing.kept is not None)
        choosing.kept, choosing.scores = first + at, scores[best]
        choosing.pixels = None if as_it_is else pictures[at]
    choosing.rounds += 1


def keep(
    choosing: Choosing, storyboard: Storyboard, keys: KeyframeKeys, scorer: str, workdir: Workdir
) -> tuple[dict[int, Scene], int]:
    """The pick in its scenes (their seed and pick; returned by index) and its picture as their keyframes, with
    how many keyframes were written."""
    written, kept = 0, {}
    for index in choosing.scenes:
        scene = replace(storyboard.scenes[index], seed=candidate_seed(choosing.from_seed, choosing.kept))
        key = keys.key(scene)
        pick = KeyframePick(
            choosing.from_seed,
            choosing.per_round,
            choosing.rounds,
            choosing.kept,
            choosing.scores.lyric,
            choosing.scores.prompt,
            scorer,
            key,
            scene.pick.notes if scene.pick else {},  # (a person's, on the pick before)
        )
        kept[index] = replace(scene, pick=pick)
        if choosing.pixels is not None and not scene.picture:
            save_picture(workdir.keyframe(index), choosing.pixels, key)
            written += 1
    return kept, written
