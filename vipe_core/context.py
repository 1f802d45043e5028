"""How ViPE sees its input: the one place that formats context, for training and inference alike.

A lyric line is elaborated together with the lines before it (its *context*), oldest first,
joined with `CONTEXT_SEPARATOR`. The model input wraps that context in the end-of-text token:
``<eos> context <eos>``; the elaboration follows, and a final ``<eos>`` closes it.
"""

from __future__ import annotations

import re
from typing import Sequence

# The released checkpoints were trained with " ; " between context lines.
CONTEXT_SEPARATOR = " ; "

# The most lines before a line that ViPE reads (the paper's largest is 7): one bound for `vipe train --context`,
# `vipe evaluate --context`, a checkpoint's record of it and musicvid's --context-size.
MAX_CONTEXT_SIZE = 16

# The kinds of a storyboard's scenes (musicvid.storyboard.board, docs/storyboard.md); each has its own context.
SCENE_KINDS = ("intro", "lyric", "break", "outro")

# Sentence punctuation, dashes, and hyphens that do not join two words. The lyrics ViPE was trained on
# carry little punctuation (its authors strip periods from transcribed lines too); apostrophes and
# hyphenated words stay.
SENTENCE_PUNCTUATION = re.compile(r"""[.,!?;:…"“”«»()\[\]–—]+|(?<!\w)-+|-+(?!\w)""")


def plain_line(line: str) -> str:
    """A lyric line as ViPE reads it: without sentence punctuation, single spaces."""
    return " ".join(SENTENCE_PUNCTUATION.sub(" ", line).split())


def lyric_context(lines: Sequence[str], index: int, context_size: int) -> str:
    """Line `index` with up to `context_size` lines before it, oldest first."""
    if context_size < 0:
        raise ValueError("context_size must be >= 0")
    first = max(0, index - context_size)
    return CONTEXT_SEPARATOR.join(plain_line(line) for line in lines[first : index + 1])


def scene_context(
    kind: str,
    *,
    title: str,
    artist: str,
    previous_lines: Sequence[str] = (),
    line: str = "",
    context_size: int = 7,
    mood: str = "",
) -> str:
    """The context string for one storyboard scene.

    A lyric scene is its line after the `context_size` lines before it. Scenes without words are
    described by the song itself: the intro as "{title} by {artist}; musical intro" (the paper's
    example), breaks and the outro as title/artist, then the lines sung before, then "musical break"
    or "musical outro", after the passage's `mood` where one is given ("calm, dark musical intro").
    Those stay within the length the model was trained on: the song and the tail take two of the
    `context_size + 1` places, so at most `context_size - 1` lines come between.
    """
    if kind == "lyric":
        return lyric_context([*previous_lines, line], len(previous_lines), context_size)
    if kind not in SCENE_KINDS:
        raise ValueError(f"unknown scene kind {kind!r}")
    song = f"{title} by {artist}" if artist else title
    tail = " ".join(filter(None, [plain_line(mood), "musical break" if kind == "break" else f"musical {kind}"]))
    between = max(0, context_size - 1) if kind != "intro" else 0
    recent = list(previous_lines)[-between:] if between else []
    return f"{song}; " + CONTEXT_SEPARATOR.join([*(plain_line(line) for line in recent), tail])


def model_input(context: str, eos_token: str) -> str:
    """The text the model continues: ``<eos> context <eos>``."""
    return f"{eos_token}{context}{eos_token}"
