"""--style is read however long the prompt (a probe's finding: appended to a prompt of 77 CLIP tokens or more, it was
cut off by the text encoder, and every picture was drawn again as if no style were given)."""

import logging

import pytest
import torch
from transformers import CLIPTokenizer

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.pictures.style import fitted, styled

STYLE = "oil painting, thick impasto brush strokes"
LONG = " ".join(f"a lantern number {n} glowing over the quiet harbour" for n in range(12))  # ~100 tokens


@pytest.fixture(scope="module")
def clip():
    return CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER)


def tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text)["input_ids"])


def test_a_long_prompt_gives_up_its_last_words_so_that_the_style_is_read(clip, caplog):
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        short, long = fitted(["a red lighthouse", LONG], STYLE, clip)
    assert short == styled("a red lighthouse", STYLE) and tokens(clip, styled(LONG, STYLE)) > 77
    kept = long.removesuffix(f", {STYLE}")
    assert long.endswith(STYLE) and LONG.startswith(kept) and tokens(clip, long) <= 77
    assert tokens(clip, styled(" ".join(LONG.split()[: len(kept.split()) + 1]), STYLE)) > 77  # as few left out as fit
    assert "1 prompt(s) with --style" in caplog.text
    # a style of more than half the tokens is cut, not the prompt; no style, or a tokenizer of no limit: as given
    wordy = " ".join(["gold"] * 50)
    assert fitted([LONG], wordy, clip) == [styled(LONG, wordy)]
    assert fitted([LONG], " ", clip) == [LONG] and fitted([LONG], STYLE, None) == [styled(LONG, STYLE)]


def test_a_long_prompts_picture_takes_the_style():
    from musicvid.models.tiny import local_diffusion
    from musicvid.pictures.conditioning import SceneInputs
    from musicvid.settings.render import RenderSettings
    from musicvid.storyboard.board import Scene, SongAudio, Storyboard

    board = Storyboard(audio=SongAudio(1.0), scenes=[Scene(0, "lyric", 0.0, 1.0, "", LONG, 0)])
    pipe = local_diffusion()
    embeds = [SceneInputs(pipe, board, [0], RenderSettings(size=(64, 64), style=s)).text[0] for s in ("", STYLE)]
    assert not torch.equal(*embeds)
