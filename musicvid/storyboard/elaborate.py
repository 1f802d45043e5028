"""Elaborate: ViPE turns each scene into a visual prompt, with the lines before it as context."""

from __future__ import annotations

from dataclasses import replace

from musicvid.core.errors import RenderError
from musicvid.core.progress import Progress
from musicvid.storyboard.board import Scene, Storyboard
from vipe_core.context import scene_context
from vipe_core.inference import ViPE


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
                mood=scene.mood or "",
            )
        )
        if scene.kind == "lyric":
            sung.append(scene.english)
    return contexts


def elaborate(
    storyboard: Storyboard,
    vipe: ViPE,
    *,
    context_size: int,
    seed: int,
    prompt_candidates: int = 1,
    lens: str | None = None,
    batch_size: int = 16,
    quiet: bool = False,
) -> Storyboard:
    """The storyboard with every empty prompt filled in. With several prompt candidates per scene the most visualisable one (under
    `lens`) is kept. A scene ViPE gives nothing usable keeps its lyric as the prompt, flagged as a
    fallback; more than half of them falling back means the model is broken, and is an error. A
    return of a motif (a chorus line sung again) takes the prompt of the motif's first scene."""
    contexts = scene_contexts(storyboard, context_size)
    first_of_motif: dict[str, Scene] = {}
    for scene in storyboard.scenes:
        if scene.motif:
            first_of_motif.setdefault(scene.motif, scene)
    empty = [s for s in storyboard.scenes if not s.prompt.strip()]
    first = {s.index: first_of_motif[s.motif] if s.motif else s for s in empty}
    todo = [s for s in empty if first[s.index] is s]
    drawn = (
        sample_prompts(
            todo,
            contexts,
            vipe,
            prompt_candidates=prompt_candidates,
            seed=seed,
            lens=lens,
            batch_size=batch_size,
            quiet=quiet,
        )
        if todo
        else {}
    )
    for scene in empty:  # a return of a motif takes its first scene's prompt
        if first[scene.index] is not scene:
            made = drawn.get(first[scene.index].index, first[scene.index])
            drawn[scene.index] = replace(scene, prompt=made.prompt, fallback=made.fallback)
    return storyboard.with_scenes(drawn)


def sample_prompts(
    todo: list[Scene],
    contexts: list[str],
    vipe: ViPE,
    *,
    prompt_candidates: int,
    seed: int,
    lens: str | None,
    batch_size: int,
    quiet: bool,
) -> dict[int, Scene]:
    """Each scene of `todo` with ViPE's prompt, from its context, by index."""
    with Progress("elaborate", total=len(todo), unit="scene", quiet=quiet) as progress:
        sampled = vipe.sample(
            [contexts[s.index] for s in todo],
            candidates=prompt_candidates,
            seed=seed,
            batch_size=batch_size,
            on_batch=progress.advance,
        )
    if prompt_candidates > 1:
        from vipe_core.choose import choose

        prompts = [
            choose(texts, line=s.english, context=contexts[s.index], lens=lens) for s, texts in zip(todo, sampled)
        ]
    else:
        prompts = [texts[0] for texts in sampled]
    done = {
        s.index: replace(s, fallback=not prompt, prompt=prompt or s.english or contexts[s.index])
        for s, prompt in zip(todo, prompts)
    }
    fell_back = sum(s.fallback for s in done.values())
    if fell_back * 2 > len(todo):
        raise RenderError(
            f"ViPE gave nothing usable for {fell_back} of {len(todo)} scenes, so the video would show the lyrics' "
            "literal words: the model is likely broken or not a ViPE model, or its tokenizer does not match it"
        )
    return done
