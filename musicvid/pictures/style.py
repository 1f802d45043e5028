"""--style, appended to every prompt so that the text encoder reads it: CLIP reads 77 tokens and cuts the rest, so a
long prompt (a person's, or a ViPE's of many words) would cut the style off and draw as if none were given. Where
prompt + style is longer than the tokenizer takes, the prompt gives up its last words instead:

    drawn = words[:k] + ", " + style,   k = max {k : tokens(words[:k] + ", " + style) <= limit}

A style of more than half the tokens is left to be cut, so that a prompt keeps half of them at least. (docs/frames.md)"""

from __future__ import annotations

import logging

log = logging.getLogger("musicvid")


def styled(prompt: str, style: str) -> str:
    return f"{prompt}, {style}" if style.strip() else prompt


def fitted(prompts: list[str], style: str, tokenizer) -> list[str]:
    """Each of `prompts` with `style` after it, every one within `tokenizer`'s limit (its model_max_length; None:
    a tokenizer without one takes them whole); how many gave up words, said in one warning."""
    limit = getattr(tokenizer, "model_max_length", None) if tokenizer is not None else None
    if not style.strip() or not isinstance(limit, int) or limit > 100_000:  # (transformers' "no limit" sentinel)
        return [styled(prompt, style) for prompt in prompts]

    def fits(text: str) -> bool:
        return len(tokenizer(text)["input_ids"]) <= limit

    drawn = [_fitted(prompt, style, fits, limit) for prompt in prompts]
    if cut := sum(d != styled(p, style) for d, p in zip(drawn, prompts)):
        log.warning(
            f"{cut} prompt(s) with --style were longer than the text encoder's {limit} tokens: their last words "
            "were left out so that the style is read"
        )
    return drawn


def _fitted(prompt: str, style: str, fits, limit: int) -> str:
    """`prompt` with `style`, the prompt's last words left out as few as fit (above); as given where the style
    alone takes more than half of `limit`."""
    whole = styled(prompt, style)
    if fits(whole) or not fits(styled(" ".join(["a"] * (limit // 2)), style)):
        return whole
    words = prompt.split()
    low, high = 0, len(words)  # fits with low words (the style alone does); not with high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(styled(" ".join(words[:middle]), style)) else (low, middle)
    return styled(" ".join(words[:low]), style)
