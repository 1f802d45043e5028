"""The keyframes' scorer loaded by name (the registry's "scorer" role): a CLIP-family model in transformers'
CLIPModel layout, with its processor, in the run's compute dtype.

`name` is a hub repository or a local folder; tiny builds the tiny preset's random one. A repository
published without a processor of its own (PickScore) takes the one it was trained with (PROCESSORS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from PIL import Image

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.core.errors import UserError
from musicvid.models.kinds import ModelUnavailable
from musicvid.models.loading import auto_precision
from musicvid.models.local_names import unavailable
from musicvid.models.precision import Precision
from musicvid.models.tiny import TINY_SEED
from musicvid.settings.presets import TINY, ModelSet
from musicvid.settings.render import RenderSettings

BATCH = 16  # pictures and texts embedded at a time

PICKSCORE = "yuvalkirstain/PickScore_v1"
# PickScore is CLIP ViT-H/14 fine-tuned on people's preferences; its repository holds the weights alone.
PROCESSORS = {PICKSCORE: "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"}


# CLIP's two towers and their projection at the least that runs (the published ViT-L/14: text 768 wide in 12
# layers, vision 1024 wide in 24 layers at 224² in patches of 14, projection 768).
TINY_CLIP_TOWER = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
TINY_CLIP_SCORER = dict(
    text=TINY_CLIP_TOWER, vision=dict(TINY_CLIP_TOWER, image_size=32, patch_size=16), projection_dim=16
)


def tiny_clip_scorer():
    """(CLIPModel, CLIPProcessor) at TINY_CLIP_SCORER's sizes, over the tiny CLIP tokenizer."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    tokenizer = CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER)
    ids = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    text = dict(vocab_size=len(tokenizer), max_position_embeddings=77, **ids, **TINY_CLIP_SCORER["text"])
    vision = TINY_CLIP_SCORER["vision"]
    torch.manual_seed(TINY_SEED)
    model = CLIPModel(
        CLIPConfig(text_config=text, vision_config=vision, projection_dim=TINY_CLIP_SCORER["projection_dim"])
    )
    side = vision["image_size"]
    images = CLIPImageProcessor(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
    return model.eval(), CLIPProcessor(image_processor=images, tokenizer=tokenizer)


@dataclass(frozen=True)
class Scorer:
    """A CLIP-family model (CLIPModel's outputs: image_embeds, text_embeds) with its processor."""

    model: Any
    processor: Any
    name: str

    def score(self, images: Sequence[np.ndarray | Image.Image], texts: Sequence[str]) -> np.ndarray:
        """The cosine of each picture with its text (pairs, in order), in batches of BATCH, in the model's dtype
        on its device; texts longer than the model reads (77 tokens for CLIP) are cut."""
        if len(images) != len(texts):
            raise ValueError(f"{len(images)} pictures and {len(texts)} texts: they are scored in pairs")
        weights = next(self.model.parameters())
        cosines = []
        for start in range(0, len(images), BATCH):
            inputs = self.processor(
                text=list(texts[start : start + BATCH]),
                # (as pictures: a keyframe read from disk is a read-only array, which torch warns of)
                images=[Image.fromarray(x) if isinstance(x, np.ndarray) else x for x in images[start : start + BATCH]],
                return_tensors="pt",
                padding=True,
                truncation=True,  # (at what the text tower reads: a tokenizer's own length may be longer)
                max_length=self.model.config.text_config.max_position_embeddings,
            )
            inputs = {
                key: value.to(weights.device, weights.dtype if value.is_floating_point() else value.dtype)
                for key, value in inputs.items()
            }
            with torch.inference_mode():
                out = self.model(**inputs)
            image, text = (
                torch.nn.functional.normalize(e.float(), dim=-1) for e in (out.image_embeds, out.text_embeds)
            )
            cosines.append((image * text).sum(dim=-1).cpu().numpy())
        return np.concatenate(cosines) if cosines else np.zeros(0, dtype=np.float32)


def check_scorer(models: ModelSet, settings: RenderSettings) -> bool:
    """Whether the render loads the keyframes' scorer: where it cannot be had (musicvid.models.names.unavailable)
    it costs the scores alone, unless --keyframe-candidates over 1 or --reroll-below pick by it: then that is
    refused now, before the work."""
    missing = unavailable(models.scorer)
    if missing and settings.picks_by_score:
        raise UserError(
            f"--keyframe-candidates and --reroll-below pick keyframes by their scores, but the scorer model {missing}: "
            "give --scorer a model this machine has, or leave both out"
        )
    return missing is None


def load_scorer(name: str, device: torch.device, precision: Precision | None = None) -> Scorer:
    dtype = auto_precision(device, precision).compute
    model, processor = tiny_clip_scorer() if name == TINY else _published(name, dtype)
    return Scorer(model.to(device, dtype).eval(), processor, name)


def _published(name: str, dtype: torch.dtype):
    from transformers import CLIPModel, CLIPProcessor

    try:
        model = CLIPModel.from_pretrained(name, dtype=dtype, trust_remote_code=False)
        return model, CLIPProcessor.from_pretrained(PROCESSORS.get(name, name), trust_remote_code=False)
    except Exception as error:  # network, cache or format: one sentence with the ways out, as every model's
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise ModelUnavailable(
            f"could not load the scorer model '{name}' ({reason}); it downloads on first use, so either let this "
            "machine reach the model hub once, run with --models tiny, pass a local copy with --scorer PATH, or "
            "point HF_HOME at a cache that holds it"
        ) from None
