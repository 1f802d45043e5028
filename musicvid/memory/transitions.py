"""The memory plan's transitions stage (--transitions video; musicvid.memory.plan): each video family's passes for one
transition, counted on the meta device as musicvid.memory.activations counts a picture's (LTX-Video's, LTX-2's, Wan's:
the text encoder, the transformer on the guided clip, the VAE's decode, each alone), and the stage's ways of running,
cheapest first: one transition at a time, each of at most its family's longest clip at the drawn size."""

from __future__ import annotations

from functools import cache
from typing import Iterator

import torch

from musicvid.memory.activations import peak_gb, tiling
from musicvid.memory.ladder import Option, Pass, modes_from, switches
from musicvid.models import sizes
from musicvid.models.families import video_family
from musicvid.models.precision import Precision
from musicvid.models.published import LTX_TEXT_TOKENS
from musicvid.settings.geometry import drawn_size
from musicvid.settings.presets import VIDEO_FAMILIES, ModelSet
from musicvid.settings.render import RenderSettings


@cache
def video_gb(name: str, dtype: torch.dtype, size: tuple[int, int], frames: int, tiled: bool) -> dict[str, float]:
    """LTX-Video's passes for one transition of `frames` frames at `size` (a multiple of 32), guided: the text
    encoder on the prompt and the negative one, the transformer on both (the clip's tokens, and those of its last
    picture, appended as a latent frame of their own) and the VAE's decode of the clip, in tiles where `tiled`."""
    transformer = sizes.part_in("video", name, "transformer", dtype)
    text_encoder = sizes.part_in("video", name, "text_encoder", dtype)
    vae = sizes.part_in("video", name, "vae", dtype)
    tiling(vae, tiled)
    width, height = size
    space, time = vae.spatial_compression_ratio, vae.temporal_compression_ratio
    latent = (vae.config.latent_channels, (frames - 1) // time + 1, height // space, width // space)
    tokens = (latent[1] + 1) * latent[2] * latent[3]
    text_width = transformer.config.caption_channels

    def step():
        transformer(
            hidden_states=torch.empty(2, tokens, transformer.config.in_channels, dtype=dtype),
            encoder_hidden_states=torch.empty(2, LTX_TEXT_TOKENS, text_width, dtype=dtype),
            timestep=torch.empty(2, tokens, dtype=dtype),
            encoder_attention_mask=torch.empty(2, LTX_TEXT_TOKENS, dtype=dtype),
            video_coords=torch.empty(2, 3, tokens, dtype=dtype),
        )

    return {
        "text_encoder": peak_gb(
            lambda: text_encoder(input_ids=torch.zeros(2, LTX_TEXT_TOKENS, dtype=torch.long)), text_encoder
        ),
        "transformer": peak_gb(step, transformer),
        "vae": peak_gb(lambda: vae.decode(torch.empty(1, *latent, dtype=dtype), torch.empty(1, dtype=dtype)), vae),
    }


@cache
def ltx2_video_gb(name: str, dtype: torch.dtype, size: tuple[int, int], frames: int, tiled: bool) -> dict[str, float]:
    """LTX-2's passes for one transition of `frames` frames at `size` (a multiple of 32), drawn for 24 fps, guided:
    Gemma on the prompt and the negative one (every hidden state kept, and its logits), the connectors on them, the
    transformer on both (the clip's tokens and its last picture's, and the sound's), the VAE's decode of the clip (in
    tiles where `tiled`), and the sound's decode, which the audio VAE and the vocoder make and musicvid drops."""
    from musicvid.models.published import LTX2_TEXT_TOKENS

    part = {name_: sizes.part_in("video", name, name_, dtype) for name_ in sizes.parts("video", name)}
    transformer, vae, config = part["transformer"], part["vae"], part["transformer"].config
    tiling(vae, tiled)
    width, height = size
    latent = ((frames - 1) // 8 + 1, height // 32, width // 32)
    tokens, fps = (latent[0] + 1) * latent[1] * latent[2], 24.0
    sound = round(frames / fps * 25)  # latent frames of sound: 16 kHz, hops of 160, 4 to a latent
    states = part["connectors"].config.caption_channels * part["connectors"].config.text_proj_in_factor

    def mask():  # (made in the pass, on the meta device)
        return torch.ones(2, LTX2_TEXT_TOKENS, dtype=torch.long)

    def step():
        video = transformer.rope.prepare_video_coords(2, latent[0] + 1, *latent[1:], torch.device("meta"), fps=fps)
        audio = transformer.audio_rope.prepare_audio_coords(2, sound, torch.device("meta"))
        text = torch.empty(2, LTX2_TEXT_TOKENS, config.caption_channels, dtype=dtype)
        transformer(
            hidden_states=torch.empty(2, tokens, config.in_channels, dtype=dtype),
            audio_hidden_states=torch.empty(2, sound, config.audio_in_channels, dtype=dtype),
            encoder_hidden_states=text,
            audio_encoder_hidden_states=text,
            timestep=torch.empty(2, tokens, dtype=dtype),
            audio_timestep=torch.empty(2, dtype=dtype),
            sigma=torch.empty(2, dtype=dtype),
            audio_sigma=torch.empty(2, dtype=dtype),
            encoder_attention_mask=mask(),
            audio_encoder_attention_mask=mask(),
            num_frames=latent[0] + 1,
            height=latent[1],
            width=latent[2],
            fps=fps,
            audio_num_frames=sound,
            video_coords=video,
            audio_coords=audio,
            return_dict=False,
        )

    mel = part["audio_vae"].config.mel_bins // 4
    return {
        # (Gemma without its mask: on the meta device the mask's check for padding cannot be answered)
        "text_encoder": peak_gb(
            lambda: part["text_encoder"](
                input_ids=torch.zeros(2, LTX2_TEXT_TOKENS, dtype=torch.long), output_hidden_states=True
            ),
            part["text_encoder"],
        ),
        "connectors": peak_gb(
            lambda: part["connectors"](torch.empty(2, LTX2_TEXT_TOKENS, states, dtype=dtype), mask()),
            part["connectors"],
        ),
        "transformer": peak_gb(step, transformer),
        "vae": peak_gb(lambda: vae.decode(torch.empty(1, vae.config.latent_channels, *latent, dtype=dtype)), vae),
        "audio_vae": peak_gb(
            lambda: part["vocoder"](
                part["audio_vae"].decode(
                    torch.empty(1, part["audio_vae"].config.latent_channels, sound, mel, dtype=dtype)
                )[0]
            ),
            part["audio_vae"],
            part["vocoder"],
        ),
        "vocoder": 0.0,  # (its pass is counted with the audio VAE's, whose output it reads)
    }


@cache
def wan_video_gb(name: str, dtype: torch.dtype, size: tuple[int, int], frames: int, tiled: bool) -> dict[str, float]:
    """Wan 2.1 FLF2V's passes for one transition of `frames` frames at `size` (a multiple of 16): UMT5 on one prompt
    (the negative one is a call of its own), CLIP on both keyframes, the transformer on the clip's tokens (guidance
    runs it twice, one after the other) and the VAE, whose encode of the conditioning clip (the two keyframes and
    blank frames between) is larger than its decode, in tiles where `tiled`."""
    from musicvid.models.published import WAN_IMAGE_TOKENS, WAN_TEXT_TOKENS

    part = {name_: sizes.part_in("video", name, name_, dtype) for name_ in sizes.parts("video", name)}
    transformer, vae, config = part["transformer"], part["vae"], part["transformer"].config
    tiling(vae, tiled)
    width, height = size
    latent = (vae.config.z_dim, (frames - 1) // 4 + 1, height // 8, width // 8)
    pixels = part["image_encoder"].config.image_size

    def step():
        transformer(
            hidden_states=torch.empty(1, config.in_channels, *latent[1:], dtype=dtype),
            timestep=torch.empty(1, dtype=dtype),
            encoder_hidden_states=torch.empty(1, WAN_TEXT_TOKENS, config.text_dim, dtype=dtype),
            encoder_hidden_states_image=torch.empty(2, WAN_IMAGE_TOKENS, config.image_dim, dtype=dtype),
            return_dict=False,
        )

    return {
        "text_encoder": peak_gb(
            lambda: part["text_encoder"](input_ids=torch.zeros(1, WAN_TEXT_TOKENS, dtype=torch.long)),
            part["text_encoder"],
        ),
        "image_encoder": peak_gb(
            lambda: part["image_encoder"](torch.empty(2, 3, pixels, pixels, dtype=dtype), output_hidden_states=True),
            part["image_encoder"],
        ),
        "transformer": peak_gb(step, transformer),
        "vae": max(
            peak_gb(lambda: vae.encode(torch.empty(1, 3, frames, height, width, dtype=dtype)), vae),
            peak_gb(lambda: vae.decode(torch.empty(1, *latent, dtype=dtype)), vae),
        ),
    }


# Each video family's passes (VIDEO_FAMILIES), by the same arguments
VIDEO_PASSES = {"ltx-video": video_gb, "ltx2": ltx2_video_gb, "wan": wan_video_gb}


def transitions_options(models: ModelSet, settings: RenderSettings, precision: Precision) -> Iterator[Option]:
    """The video model's transitions, one at a time, each of at most its family's longest clip at the drawn size."""
    family, dtype = video_family(models.video), precision.video
    size, frames = drawn_size(settings.size, VIDEO_FAMILIES[family].size_step), VIDEO_FAMILIES[family].max_frames
    video = {w.part: w for w in sizes.weights("video", models.video, lambda part: dtype)}
    floor = settings.offloads_asked("transitions")
    for mode in modes_from(floor):
        for tiled in (False, True) if "vae-tiling" not in floor else (True,):
            passes = VIDEO_PASSES[family](models.video, dtype, size, frames, tiled)
            batches = (("transitions", 1), ("clip_frames", frames))
            chosen = switches(floor, mode, "vae-tiling" if tiled else None)
            yield Option(batches, chosen, tuple(Pass((video[part],), gb) for part, gb in passes.items()))
