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
    # said once for each prompt and style, not at every stage that encodes them
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        assert fitted(["a red lighthouse", LONG], STYLE, clip) == [short, long]
    assert not caplog.text
    # a style of more than half the tokens: the prompt keeps half of them, and the style is read in part
    wordy = " ".join(["gold"] * 60)
    [drawn] = fitted([LONG], wordy, clip)
    kept = drawn.removesuffix(f", {wordy}")
    assert LONG.startswith(kept) and 77 // 2 - 10 <= tokens(clip, kept) <= 77 // 2
    # no style, or a tokenizer of no limit: as given
    assert fitted([LONG], " ", clip) == [LONG] and fitted([LONG], STYLE, None) == [styled(LONG, STYLE)]


def test_a_long_prompts_picture_takes_the_style():
    from musicvid.models.tiny import local_diffusion
    from musicvid.pictures.conditioning import SceneInputs
    from musicvid.settings.render import RenderSettings
    from musicvid.storyboard.board import Scene, SongAudio, Storyboard

    board = Storyboard(audio=SongAudio(1.0), scenes=[Scene(0, "lyric", 0.0, 1.0, "", LONG, 0)])
    pipe = local_diffusion()
    styles = ("", STYLE, " ".join(["gold"] * 60))  # (the last: more than half of CLIP's tokens)
    embeds = [SceneInputs(pipe, board, [0], RenderSettings(size=(64, 64), style=s)).text[0] for s in styles]
    assert not torch.equal(embeds[0], embeds[1]) and not torch.equal(embeds[0], embeds[2])
    # in half precision, as a GPU draws: the styled prompt is encoded, and every module keeps its dtype and device
    pipe.to(torch.bfloat16)
    [half] = SceneInputs(pipe, board, [0], RenderSettings(size=(64, 64), style=STYLE)).text.values()
    assert torch.isfinite(half).all() and (half - embeds[1]).abs().max() < 0.1 * embeds[1].abs().max()
    modules = [pipe.text_encoder, pipe.unet, pipe.vae]
    assert {p.dtype for m in modules for p in m.parameters()} == {torch.bfloat16}
    assert {p.device.type for m in modules for p in m.parameters()} == {"cpu"}
