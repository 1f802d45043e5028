"""A render's pictures against the same storyboard's pictures drawn whole: how far a lever that shares or skips work
(`--deep-share`, `--deep-cache`, `--fast`) moves each picture from the one drawing every frame in full would give.

The keyframe scores of benchmarks/quality.py cannot tell this: `--deep-share` draws every keyframe whole, so its
keyframes, and their scores, are the baseline's; only the frames between change. Here both renders' pictures are
set side by side, name by name (the same storyboard, size and rate give the same names), apart for keyframes and
the frames between:

- PSNR, over the pictures: 10·log10(255² / MSE), with MSE the mean squared difference of all their pixels (`psnr_db`),
  and the worst picture's (`worst_psnr_db`); None where every pixel is the same;
- the scorer's picture embeddings: the mean cosine of each picture with its twin (`clip_image`) and the lowest
  (`lowest_clip_image`), 1 for the same picture: does the frame still show what the whole one shows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from musicvid.models.scorer import BATCH, Scorer
from musicvid.pictures.cache import load_picture

KINDS = {"keyframes": "keyframes", "between": "frames"}  # the figures' name: the work directory's folder


def psnr(mse: float) -> float | None:
    """PSNR in dB of a mean squared difference on 0–255 pixels; None for none (the same pixels)."""
    return None if mse == 0 else round(10 * math.log10(255.0**2 / mse), 2)


def image_embeddings(scorer: Scorer, pictures: list[np.ndarray]) -> torch.Tensor:
    """The scorer's picture embeddings, normalised, in batches of BATCH, in its dtype on its device."""
    weights = next(scorer.model.parameters())
    embedded = []
    for start in range(0, len(pictures), BATCH):
        batch = [Image.fromarray(np.ascontiguousarray(p)) for p in pictures[start : start + BATCH]]
        pixels = scorer.processor(images=batch, return_tensors="pt")["pixel_values"]
        with torch.inference_mode():
            out = scorer.model.get_image_features(pixel_values=pixels.to(weights.device, weights.dtype))
        features = out if isinstance(out, torch.Tensor) else out.pooler_output  # (a tensor, or an output object)
        embedded.append(torch.nn.functional.normalize(features.float(), dim=-1).cpu())
    return torch.cat(embedded)


def pair_names(whole: Path, shared: Path) -> tuple[list[str], str | None]:
    """The pictures' names both folders hold, and why they cannot be set side by side (None where they can): the
    same names, and the first picture of one size in both (a render draws all its pictures at one size)."""
    names = sorted(p.name for p in whole.glob("*.png"))
    if names != sorted(p.name for p in shared.glob("*.png")):
        return [], f"{shared.name}/ holds other pictures than the render drawn whole (another rate or storyboard?)"
    for name in names[:1]:
        with Image.open(whole / name) as a, Image.open(shared / name) as b:
            if a.size != b.size:
                return [], f"pictures of {b.size[0]}x{b.size[1]}, drawn whole {a.size[0]}x{a.size[1]}"
    return names, None


def compared(whole: Path, shared: Path, scorer: Scorer) -> dict:
    """One folder's pictures against their twins drawn whole: the figures of the module doc, and their count."""
    names, problem = pair_names(whole, shared)
    if problem:
        return {"not_comparable": problem}
    if not names:
        return {"pictures": 0}
    errors, cosines = [], []
    for start in range(0, len(names), BATCH):  # (a song's frames, a batch at a time: not all in memory)
        part = names[start : start + BATCH]
        a = [load_picture(whole / name) for name in part]
        b = [load_picture(shared / name) for name in part]
        errors += [float(np.mean((x.astype(np.float64) - y.astype(np.float64)) ** 2)) for x, y in zip(a, b)]
        cosines += (image_embeddings(scorer, a) * image_embeddings(scorer, b)).sum(dim=-1).tolist()
    return {
        "pictures": len(names),
        "psnr_db": psnr(float(np.mean(errors))),
        "worst_psnr_db": psnr(max(errors)),
        "clip_image": round(float(np.mean(cosines)), 4),
        "lowest_clip_image": round(min(cosines), 4),
    }


def against_whole(whole: Path, render: Path, scorer: Scorer) -> dict:
    """The render in the work directory `render` against the one in `whole`: keyframes and frames between apart."""
    return {kind: compared(whole / folder, render / folder, scorer) for kind, folder in KINDS.items()}
