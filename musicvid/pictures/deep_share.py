"""--deep-share N: neighbouring frames of a morph share the UNet's deep features.

Frames k and k + 1 of a morph are denoised from inputs 1 / (K_j − K_i) of the walk apart (musicvid.pictures.slerp),
and the UNet's deep blocks (every level but the outermost, musicvid.pictures.deep_cache), which lay out the picture,
change little from one to the next. So in a group of in-between frames, each run of one morph's frames (the same
scene and target, consecutive frame numbers) has anchors, its positions 0, N, 2N, … and its last, whose deep blocks
run; a frame f between two anchors a < f < b runs its outermost level on its own noise and text, and takes, at every
step and every deep block, the anchors' outputs blended by where it lies on the morph:

    D_f = lerp(D_a, D_b, w_f),    w_f = (t_f − t_a) / (t_b − t_a)    (w = 0 on an anchor: drawn as if whole)

The deep blocks then run on A of the group's B pictures, A ≈ B / N + the runs. The anchors are fixed by the frame
numbers and --batch-size alone (musicvid.pictures.grouping keys both), so a group redrawn after a killed render gives
the same bytes. Keyframes are drawn whole. The in-between pictures differ a little from those drawn whole:
benchmarks/device.py's deep-share rows give the difference, and benchmarks/quality.py's score.

With classifier-free guidance the UNet sees the group twice, [unconditional; conditional]: the plan repeats for each
half. What the plan holds are tensors, so that a compiled UNet (--compile) guards on their shapes, not their values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import torch


@dataclass(frozen=True)
class Plan:
    """Which pictures of a group run the deep blocks, and how each takes theirs: picture r gets
    lerp(D[before[r]], D[after[r]], weight[r]), D indexed by anchor (0 … A − 1)."""

    anchors: tuple[int, ...]
    before: tuple[int, ...]
    after: tuple[int, ...]
    weight: tuple[float, ...]


def plan(morphs: Sequence[Hashable], ts: Sequence[float], interval: int, rows: int | None = None) -> Plan:
    """The anchors of a group whose pictures are of morphs `morphs` at `ts`, one in `interval` of each run and its
    last; `rows` ≥ len(ts): the batch a compiled UNet is padded to, the padding a copy of the last picture."""
    runs: list[list[int]] = []
    for r, morph in enumerate(morphs):
        if runs and morphs[runs[-1][0]] == morph:
            runs[-1].append(r)
        else:
            runs.append([r])
    anchors = [r for run in runs for i, r in enumerate(run) if i % interval == 0 or r == run[-1]]
    slot = {r: i for i, r in enumerate(anchors)}
    before, after, weight = [], [], []
    for run in runs:
        ends = [r for r in run if r in slot]
        for r in run:
            a = max(x for x in ends if x <= r)
            b = min(x for x in ends if x >= r)
            before.append(slot[a])
            after.append(slot[b])
            weight.append(0.0 if a == b else (ts[r] - ts[a]) / (ts[b] - ts[a]))
    padding = (rows or len(ts)) - len(ts)
    return Plan(
        tuple(anchors),
        tuple(before + before[-1:] * padding),
        tuple(after + after[-1:] * padding),
        tuple(weight + weight[-1:] * padding),
    )


class Sharing:
    """A plan on the UNet's device, for a pass of the group (B rows) and of the group under guidance (2B)."""

    def __init__(self, shared: Plan, device: torch.device):
        pictures, count = len(shared.before), len(shared.anchors)

        def repeat(index: tuple, step: int, halves: int) -> torch.Tensor:
            return torch.tensor([i + h * step for h in range(halves) for i in index], device=device)

        self.rows = {
            pictures * halves: (
                repeat(shared.anchors, pictures, halves),
                repeat(shared.before, count, halves),
                repeat(shared.after, count, halves),
                torch.tensor(shared.weight * halves, device=device),
            )
            for halves in (1, 2)
        }

    def run(self, block: torch.nn.Module, args: tuple, kwargs: dict):
        """The block run on the anchors' rows of every input that has the batch's rows, its outputs spread."""
        rows = args[0].shape[0] if args else kwargs["hidden_states"].shape[0]
        anchors, before, after, weight = self.rows[rows]

        def take(x):
            if isinstance(x, torch.Tensor):
                return x[anchors] if x.dim() and x.shape[0] == rows else x
            return type(x)(take(y) for y in x) if isinstance(x, (tuple, list)) else x

        def spread(y):
            if isinstance(y, torch.Tensor):
                w = weight.to(y.dtype).view(-1, *[1] * (y.dim() - 1))
                return torch.lerp(y[before], y[after], w)
            return type(y)(spread(z) for z in y)

        return spread(block(*take(args), **{k: take(v) for k, v in kwargs.items()}))
