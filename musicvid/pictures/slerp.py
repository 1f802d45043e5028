"""Spherical interpolation and Chunked Similarity Alignment (paper eq. 2 and Appendix B.4).

slerp walks the great circle between two tensors; CSA first rearranges the target text embedding so
that similar chunks of rows sit where the source has them. The UNet reads the text only through
cross-attention, which ignores the order of the 77 rows, so the rearranged target draws the same
picture as the original: the morph still lands on the next keyframe, but like is paired with like.
The flow-matching families read each text row at its position, so there a rearranged target is another
prompt: their morph aligns softly (soft_aligned) and ends on the target as it is. The contract: docs/frames.md.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

# Above this |cos θ| the two tensors are nearly parallel: sin θ ~ 0, so interpolate linearly.
DOT_THRESHOLD = 0.9995


def slerp(p0: torch.Tensor, p1: torch.Tensor, t: float | torch.Tensor) -> torch.Tensor:
    """slerp(p0, p1, t) in float32; `t` a number, or a 1-D tensor giving one result per value.

    θ is the angle between the flattened tensors. slerp(p0, p1, 0) is p0 and slerp(p0, p1, 1) is p1,
    exactly. Where one of them is zero (no reference picture) there is no angle, and the walk is a straight
    line: the other fades in or out.
    """
    a = p0.to(torch.float32)
    b = p1.to(torch.float32)
    ts = torch.as_tensor(t, dtype=torch.float64).reshape(-1)
    norms = float(a.double().norm() * b.double().norm())
    cos = float(torch.dot(a.flatten().double(), b.flatten().double())) / norms if norms else 1.0
    if abs(cos) > DOT_THRESHOLD:
        w0, w1 = 1.0 - ts, ts
    else:
        theta = np.arccos(np.clip(cos, -1.0, 1.0))
        w0 = torch.sin((1.0 - ts) * theta) / np.sin(theta)
        w1 = torch.sin(ts * theta) / np.sin(theta)
    shape = (-1,) + (1,) * a.dim()
    out = w0.to(torch.float32).reshape(shape) * a + w1.to(torch.float32).reshape(shape) * b
    return out if isinstance(t, torch.Tensor) and t.dim() > 0 else out[0]


def chunk_similarity(p0: torch.Tensor, p1: torch.Tensor, chunk: int) -> np.ndarray:
    """score[a, b]: mean cosine similarity, position by position, of p0's chunk a and p1's chunk b
    (only the full-length chunks: a shorter last chunk can only stay where it is)."""
    rows, width = p0.shape
    full = (rows - 1) // chunk
    unit0 = torch.nn.functional.normalize(p0[1 : 1 + full * chunk].float(), dim=-1).reshape(full, chunk, width)
    unit1 = torch.nn.functional.normalize(p1[1 : 1 + full * chunk].float(), dim=-1).reshape(full, chunk, width)
    return (torch.einsum("ajd,bjd->ab", unit0, unit1) / chunk).double().numpy()


def alignment_permutation(p0: torch.Tensor, p1: torch.Tensor, chunk: int) -> torch.Tensor:
    """Row order for p1 that puts each of its chunks in the slot of p0 it matches best, one to one,
    maximizing the total similarity (an optimal assignment)."""
    rows = p0.shape[0]
    if p1.shape != p0.shape:
        raise ValueError(f"embeddings differ in shape: {tuple(p0.shape)} vs {tuple(p1.shape)}")
    order = torch.arange(rows)
    full = (rows - 1) // chunk
    if full < 2:
        return order
    slots, chosen = linear_sum_assignment(chunk_similarity(p0, p1, chunk), maximize=True)
    for slot, source in zip(slots, chosen):
        order[1 + slot * chunk : 1 + (slot + 1) * chunk] = torch.arange(1 + source * chunk, 1 + (source + 1) * chunk)
    return order


def align(p0: torch.Tensor, p1: torch.Tensor, chunk: int) -> torch.Tensor:
    """CSA(p0, p1): p1 with its chunks moved to their assigned slots (a permutation of its rows)."""
    return p1[alignment_permutation(p0, p1, chunk)]


def soft_aligned(p0: torch.Tensor, aligned: torch.Tensor, p1: torch.Tensor, t: float) -> torch.Tensor:
    """The morph's text at t where a rearranged target is another prompt: slerp(p0, slerp(CSA(p0, p1), p1, t), t),
    with `aligned` = CSA(p0, p1). Near t = 0 it leaves p0 toward the aligned target, like paired with like; at
    t = 1 it is p1 exactly, so the morph lands on the next keyframe."""
    return slerp(p0, slerp(aligned, p1, t), t)
