"""The sampler of --fast: LCM's, with the noise it adds between steps given rather than drawn.

A latent consistency model jumps to a clean picture at every step and then noises it again for the
next one, with fresh Gaussian noise. Drawn anew for every frame, that noise would make each frame of a
morph a different picture: the video would flicker. So each scene has its own noise for every step,
from its seed, and a frame at t between two scenes gets the slerp of theirs at each step, like its
initial latent (musicvid.pictures.conditioning.SceneInputs): nearby t give nearby pictures. (docs/frames.md)

The noise goes in with the pipeline call, as its `generator`: a diffusers pipeline hands that to the
sampler's step for the step's randomness, and uses it for nothing else when the initial latents are given.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from diffusers import LCMScheduler


@dataclass(frozen=True)
class StepNoise:
    """The noise to add after each step but the last: steps − 1 × batch × latent."""

    noise: torch.Tensor


class SharedNoiseLCMScheduler(LCMScheduler):
    """LCMScheduler whose noise after step s is the given `StepNoise`'s [s], where LCM's draws it from a
    generator."""

    def step(self, model_output, timestep, sample, generator: StepNoise, return_dict: bool = True):
        out = super().step(model_output, timestep, sample, return_dict=True)
        # LCM's own step noised the clean estimate to the next timestep with noise of its own; the same
        # forward noising (add_noise) with the given noise takes its place. The last step adds none.
        if self.step_index < self.num_inference_steps:
            noise = generator.noise[self.step_index - 1].to(out.denoised.device, out.denoised.dtype)
            out.prev_sample = self.add_noise(out.denoised, noise, self.timesteps[self.step_index : self.step_index + 1])
        return out if return_dict else (out.prev_sample, out.denoised)
