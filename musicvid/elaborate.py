"""Elaborate: ViPE turns each scene into a visual prompt, with the lines before it as context."""

from __future__ import annotations

import logging

from musicvid.progress import Progress
from musicvid.storyboard import Storyboard
from vipe_core.context import scene_context
from vipe_core.inference import ViPE

log = logging.getLogger(__name__)


def scene_contexts(storyboard: Storyboard, context_size: int) -> list[str]:
    """What ViPE reads for each scene (English lines; title/artist for scenes without words)."""
    contexts = []
    sung: list[str] = []
    for scene in storyboard.scenes:
        contexts.append(
            scene_context(
                scene.kind,
                title=storyboard.title,
                artist=storyboard.artist,
                previous_lines=sung,
                line=scene.english,
                context_size=context_size,
            )
        )
        if scene.kind == "lyric":
            sung.append(scene.english)
    return contexts


def elaborate(
    storyboard: Storyboard, vipe: ViPE, *, context_size: int, seed: int, batch_size: int = 16, quiet: bool = False
) -> list[str]:
    """Fill in every empty prompt; returns the warnings for scenes where ViPE gave nothing usable."""
    contexts = scene_contexts(storyboard, context_size)
    todo = [s for s in storyboard.scenes if not s.prompt.strip()]
    warnings = []
    with Progress("elaborate", total=len(todo), unit="scene", quiet=quiet) as progress:
        prompts = vipe.elaborate(
            [contexts[s.index] for s in todo], seed=seed, batch_size=batch_size, on_batch=progress.advance
        )
    for scene, prompt in zip(todo, prompts):
        if not prompt:
            prompt = scene.english or contexts[scene.index]
            warnings.append(f"scene {scene.index}: ViPE produced no prompt; using {prompt!r} as it is")
        scene.prompt = prompt
    return warnings
