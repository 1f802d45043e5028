"""--style, appended to every prompt so that the text encoder reads it: CLIP reads 77 tokens and cuts the rest, so a
long prompt (a person's, or a ViPE's of many words) would cut the style off and draw as if none were given. Where
prompt + style is longer than the tokenizer takes, the prompt gives up its last words instead, keeping k of them:

    k = max(max {k : tokens(words[:k] + ", " + style) <= limit},  max {k : tokens(words[:k]) <= limit / 2})

so that a style of more than half the tokens is read in part (its tail cut by the encoder) and a prompt keeps half
of them at least. Said in one warning a process for each prompt and style. (docs/frames.md)"""

from __future__ import annotations

import logging
from typing import Callable

log = logging.getLogger("musicvid")
_said: set[tuple[str, str]] = set()  # (prompt, style) already warned of: each is said once, not at every stage


def styled(prompt: str, style: str) -> str:
    return f"{prompt}, {style}" if style.strip() else prompt


def fitted(prompts: list[str], style: str, tokenizer) -> list[str]:
    """Each of `prompts` with `style` after it, the prompt shortened as above to `tokenizer`'s limit (its
    model_max_length; None: a tokenizer without one takes them whole); those shortened said in one warning."""
    limit = getattr(tokenizer, "model_max_length", None) if tokenizer is not None else None
    if not style.strip() or not isinstance(limit, int) or limit > 100_000:  # (transformers' "no limit" sentinel)
        return [styled(prompt, style) for prompt in prompts]

    def tokens(text: str) -> int:
        return len(tokenizer(text)["input_ids"])

    drawn = [_fitted(prompt, style, tokens, limit) for prompt in prompts]
    cut = {(p, style) for p, d in zip(prompts, drawn) if d != styled(p, style)} - _said
    if cut:
        _said.update(cut)
        log.warning(
            f"{len(cut)} prompt(s) with --style were longer than the text encoder's {limit} tokens: their last words "
            "were left out so that the style is read"
            + (" (in part: it takes more than half of them)" if tokens(styled("", style)) > limit // 2 else "")
        )
    return drawn


def _fitted(prompt: str, style: str, tokens: Callable[[str], int], limit: int) -> str:
    """`prompt` with `style`, its last words left out as few as the rule above asks."""
    if tokens(styled(prompt, style)) <= limit:
        return styled(prompt, style)
    words = prompt.split()

    def most(fits: Callable[[str], bool]) -> int:
        """The most of the first words that fit (0 where none do)."""
        low, high = 0, len(words) + 1  # fits with low words, or low is 0; not with high
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(" ".join(words[:middle])) else (low, middle)
        return low

    kept = max(most(lambda text: tokens(styled(text, style)) <= limit), most(lambda text: tokens(text) <= limit // 2))
    return styled(" ".join(words[:kept]), style)
