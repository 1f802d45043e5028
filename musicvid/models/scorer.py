"""The keyframes' scorer loaded by name (the registry's "scorer" role): a CLIP-family model in transformers'
CLIPModel layout, with its processor, in the run's compute dtype.

`name` is a hub repository or a local folder; tiny builds the tiny preset's random one. A repository
published without a processor of its own (PickScore) takes the one it was trained with (PROCESSORS).
"""

from __future__ import annotations

import torch

from musicvid.models import tiny
from musicvid.models.loading import ModelUnavailable, auto_precision
from musicvid.models.precision import Precision
from musicvid.models.presets import TINY
from musicvid.pictures.scores import Scorer

PICKSCORE = "yuvalkirstain/PickScore_v1"
# PickScore is CLIP ViT-H/14 fine-tuned on people's preferences; its repository holds the weights alone.
PROCESSORS = {PICKSCORE: "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"}


def load_scorer(name: str, device: torch.device, precision: Precision | None = None) -> Scorer:
    dtype = auto_precision(device, precision).compute
    model, processor = tiny.tiny_clip_scorer() if name == TINY else _published(name, dtype)
    return Scorer(model.to(device, dtype).eval(), processor, name)


def _published(name: str, dtype: torch.dtype):
    from transformers import CLIPModel, CLIPProcessor

    try:
        return CLIPModel.from_pretrained(name, dtype=dtype), CLIPProcessor.from_pretrained(PROCESSORS.get(name, name))
    except Exception as error:  # network, cache or format: one sentence with the ways out, as every model's
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise ModelUnavailable(
            f"could not load the scorer model '{name}' ({reason}); it downloads on first use, so either let this "
            "machine reach the model hub once, run with --models tiny, pass a local copy with --scorer PATH, or "
            "point HF_HOME at a cache that holds it"
        ) from None
