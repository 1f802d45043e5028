"""The flow-matching families' tiny pipelines (musicvid.models.tiny_flow), built with no download: each draws a
64 x 64 picture in two steps on the CPU, the same pixels from a fresh build and the same seed, other pixels for
another prompt (the prompt reaches the picture through the text encoder)."""

import numpy as np
import pytest
import torch

from musicvid.models import published as P
from musicvid.models.tiny_flow import tiny_klein, tiny_zimage


def picture(pipe, prompt: str, guidance: float) -> np.ndarray:
    pipe.set_progress_bar_config(disable=True)
    generator = torch.Generator().manual_seed(7)
    settings = dict(height=64, width=64, num_inference_steps=2, guidance_scale=guidance, output_type="np")
    return pipe(prompt=prompt, generator=generator, **settings).images[0]


# each as its card draws: Z-Image-Turbo without guidance, klein distilled (guidance 1)
@pytest.mark.parametrize("build, guidance", [(tiny_zimage, 0.0), (tiny_klein, 1.0)])
def test_a_tiny_flow_pipeline_draws_the_same_picture_from_the_same_seed(build, guidance):
    pipe = build()
    # the hidden states both families read are there, none of them the last (the final norm's)
    assert pipe.text_encoder.config.num_hidden_layers == P.QWEN3_4B["num_hidden_layers"] > max(P.KLEIN_TEXT_LAYERS)
    first = picture(pipe, "a red sun over the sea", guidance)
    assert first.shape == (64, 64, 3) and np.isfinite(first).all() and first.std() > 0.01
    assert np.array_equal(picture(build(), "a red sun over the sea", guidance), first)
    assert not np.array_equal(picture(pipe, "rain on a dark city", guidance), first)
