"""What to draw: every picture of a video, keyed by its inputs (musicvid.pictures.cache), in its fixed
group, and which of them are stale. Pictures are denoised in fixed groups (keyframes by blocks of scene numbers,
in-between frames by blocks of frame numbers, across scenes), and a group is denoised whole whenever any of its pictures
is missing or stale: the batch a picture is computed in is then always the same, and so are its bytes.
(docs/frames.md)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

from musicvid.core.workdir import Workdir
from musicvid.models.drawing import file_digest
from musicvid.pictures.cache import picture_key, stored_key
from musicvid.pictures.given import READING
from musicvid.pictures.schedule import FrameSchedule
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Scene, Storyboard


@dataclass(frozen=True)
class Picture:
    """One image to denoise: the morph from scene `scene` towards `target` at `t` (t = 0: keyframe)."""

    path: Path
    key: str
    scene: int
    target: int | None
    t: float


# Keyframe settings a picture's key holds in another form: the size as width × height (the look and the aspect
# as the size they made), LoRAs and --fast in the drawing's key, reference pictures by their files' hashes, their
# strength only where an adapter draws and --deep-cache only where it is on (common_inputs), and the keyframe
# picks by the seeds they keep (musicvid.pictures.keyframe_candidates).
KEYED_ELSEWHERE = tuple(
    "look size aspect lora fast reference reference_strength keyframe_candidates reroll_below deep_cache".split()
)


def common_inputs(settings: RenderSettings, drawn_by: dict) -> dict:
    """What every picture depends on besides its own prompts, seeds, reference pictures and t; `drawn_by`: the
    models that draw them (musicvid.models.drawing.Drawing.key)."""
    keys = [name for name in settings.affecting("keyframes") if name not in KEYED_ELSEWHERE]
    keys += ["reference_strength"] * ("reference adapter" in drawn_by) + ["deep_cache"] * (settings.deep_cache > 1)
    values = {k: v for k, v in dataclasses.asdict(settings).items() if k in keys}
    return {**drawn_by, "width": settings.width, "height": settings.height, **values}


def reference_of(scene: Scene, settings: RenderSettings) -> Path | None:
    """The picture whose appearance a scene takes: its own, else the render's (--reference), else none."""
    own = scene.reference or settings.reference
    return Path(own) if own else None


def uses_reference(storyboard: Storyboard, settings: RenderSettings) -> bool:
    return any(reference_of(scene, settings) for scene in storyboard.scenes)


class KeyframeKeys:
    """What each scene's keyframe is keyed by: the drawing's inputs (`common`), its prompt and seed, and the
    hashes of its pinned and reference pictures' files (each file read once)."""

    def __init__(self, storyboard: Storyboard, settings: RenderSettings, drawn_by: dict):
        self.common = common_inputs(settings, drawn_by)
        scenes = storyboard.scenes
        # (each checked before any work: musicvid.prepare, musicvid.storyboard.make.check_storyboard_pictures)
        self.pinned = {s.index: (READING, file_digest(Path(s.picture))) for s in scenes if s.picture}
        self.references = {s.index: (READING, file_digest(r)) for s in scenes if (r := reference_of(s, settings))}

    def scene_inputs(self, scene: Scene, seed: int | None = None) -> tuple:
        """A scene's own inputs (`seed`: another seed than its own, as a candidate's)."""
        own = [self.pinned.get(scene.index), self.references.get(scene.index)]
        return (scene.prompt, scene.seed if seed is None else seed, *[x for x in own if x is not None])

    def key(self, scene: Scene, seed: int | None = None) -> str:
        return picture_key(self.common, self.scene_inputs(scene, seed))


def picture_groups(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    settings: RenderSettings,
    drawn_by: dict,
    workdir: Workdir,
    keyframes_only: bool = False,
    elsewhere: Collection[int] = (),
) -> list[list[Picture]]:
    """Every picture of the video in its fixed group: keyframes first, by blocks of `--batch-size` scene
    numbers (scenes s with the same s // size; a pinned picture alone), then the in-between frames by blocks of
    `--batch-size` frame numbers (frames k with the same k // size), across scene boundaries, so that batches stay
    full however short the scenes are. A block is fixed by the numbers alone: an edit to one scene changes no
    other picture's group (its block is drawn again, and only its stale pictures written), and moving a scene's
    start changes only the blocks around it. `drawn_by`: what draws them, as Drawing.key names it; the
    keyframes alone in a preview, or with `keyframes_only`; `elsewhere`: the first frames of the morphs another
    model draws (the video model's transitions)."""
    keys = KeyframeKeys(storyboard, settings, drawn_by)
    common, scenes = keys.common, storyboard.scenes

    def scene_inputs(i: int) -> tuple:
        return keys.scene_inputs(scenes[i])

    keyframes: dict[object, list[Picture]] = {}
    for s in schedule.shown_scenes:  # a pinned picture alone: it is not drawn (musicvid.pictures.denoise)
        block = ("pinned", s) if s in keys.pinned else s // settings.batch
        keyframes.setdefault(block, []).append(Picture(workdir.keyframe(s), keys.key(scenes[s]), s, None, 0.0))
    groups = list(keyframes.values())
    if settings.preview or keyframes_only:
        return groups
    morph = {"align": settings.align, "align_chunk": settings.align_chunk if settings.align else None}
    if settings.deep_share > 1:  # (its anchors are fixed by the groups: musicvid.pictures.deep_share)
        morph["deep_share"] = [settings.deep_share, settings.batch]
    blocks: dict[int, list[Picture]] = {}
    for segment in schedule.segments:
        if segment.target is None or segment.first in elsewhere:
            continue  # the last scene holds its keyframe; the video model draws the other
        for k in range(segment.first + 1, segment.end):
            blocks.setdefault(k // settings.batch, []).append(
                Picture(
                    workdir.frame(k),
                    picture_key(
                        common,
                        morph,
                        scene_inputs(segment.scene),
                        scene_inputs(segment.target),
                        k - segment.first,
                        segment.length,
                        # paced by the music: t itself (it depends on the audio, not only on the frame's place)
                        *([] if segment.motion is None else [round(segment.t(k), 9)]),
                    ),
                    segment.scene,
                    segment.target,
                    segment.t(k),
                )
            )
    return groups + list(blocks.values())


def stale_pictures(groups: list[list[Picture]], settings: RenderSettings) -> set[Path]:
    """The paths of the pictures that are missing, or drawn from other inputs or at another size."""
    size = (settings.width, settings.height)
    return {p.path for group in groups for p in group if stored_key(p.path, size) != p.key}
