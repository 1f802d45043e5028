"""The sampler of --fast: LCM's, with the noise it adds between steps given rather than drawn.

A latent consistency model jumps to a clean picture at every step and then noises it again for the
next one, with fresh Gaussian noise. Drawn anew for every frame, that noise would make each frame of a
morph a different picture: the video would flicker. So each scene has its own noise for every step,
from its seed, and a frame at t between two scenes gets the slerp of theirs at each step, like its
initial latent (musicvid.pictures.conditioning.SceneInputs): nearby t give nearby pictures. (docs/frames.md)

The noise of a call is set on the render's own sampler (musicvid.pictures.switches gives every render one) before the
pipeline is called, and the call draws no noise of its own.
"""

from __future__ import annotations

import torch
from diffusers import LCMScheduler


class SharedNoiseLCMScheduler(LCMScheduler):
    """LCMScheduler whose noise after step s is `step_noise[s]` (steps − 1 × batch × latent), set for each
    pipeline call, where LCM's draws it from a generator."""

    step_noise: torch.Tensor | None = None

    def step(self, model_output, timestep, sample, generator=None, return_dict: bool = True):
        if self.step_noise is None:
            raise ValueError("the noise of each step is given: set step_noise before the pipeline is called")
        out = super().step(model_output, timestep, sample, return_dict=True)
        # LCM's own step noised the clean estimate to the next timestep with noise of its own; the same
        # forward noising (add_noise) with the given noise takes its place. The last step adds none.
        if self.step_index < self.num_inference_steps:
            noise = self.step_noise[self.step_index - 1].to(out.denoised.device, out.denoised.dtype)
            out.prev_sample = self.add_noise(out.denoised, noise, self.timesteps[self.step_index : self.step_index + 1])
        return out if return_dict else (out.prev_sample, out.denoised)
