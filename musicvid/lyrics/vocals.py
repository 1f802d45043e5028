"""Vocals: the singing apart from the band (`--separate-vocals`), before voice activity and recognition.

Demucs (htdemucs, the hybrid transformer model) splits the song into drums, bass, other and vocals; a
loud band then no longer hides the voice from Silero or Whisper. It reads the song at its own rate and
channels (44.1 kHz stereo) from the file, not the 16 kHz mono the rest of the pipeline hears.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from musicvid.core.audio import SAMPLE_RATE, cancelling, decode
from musicvid.core.progress import Progress
from musicvid.models.internals import demucs_format, demucs_stem
from vipe_core.bars import on_terminal

# Demucs cuts a song into segments; a quarter of each overlaps the next, so no seam is heard.
OVERLAP = 0.25
# Demucs is given the song a window at a time, of which only the vocals (16 kHz mono) are kept: it holds all four
# stems of what it is given at 44.1 kHz stereo, with its copies about 230 MB a minute, so windows of 5.3 minutes
# bound that to ~1.2 GB whatever the song's length. Most songs are shorter: separated in one call, as before windows.
# A window starts 50 of htdemucs' segment steps (its 7.8 s segments less OVERLAP: 5.85 s) after the one before, so
# that its segments fall where the whole song's do and are weighed as in one call.
WINDOW_STEP_SECONDS = 292.5
# Windows overlap by 4 steps. Within a segment of its edges a window's vocals are not the whole song's (Demucs heard
# nothing beyond them); further in, the same segments at the same places weighed alike give the same vocals. So the
# windows are cross-faded linearly over the overlap less a segment at either end, where both are the whole song's:
# no seam. (A linear fade over all of the overlap would mix in each window's edge; a model with other segments is
# faded alike, near the whole song's.)
WINDOW_OVERLAP_SECONDS = 23.4
FADE_MARGIN_SECONDS = 7.8


def separate_vocals(separator, song: Path, samples: int, *, quiet: bool = False) -> np.ndarray:
    """The vocals of `song` as 16 kHz mono, `samples` long (the length of the song's own decoding)."""
    rate, channels = demucs_format(separator)
    mix = decode(song, rate, channels).reshape(-1, channels).T.copy()
    if channels == 2 and cancelling(mix.mean(0), (mix[0] - mix[1]) / 2):  # heard by its side (heard_mix): Demucs
        mix[1] = -mix[1]  # is given the channels in phase, as a player's two speakers sound them
    mix = torch.from_numpy(mix)
    # normalized as Demucs' own command line does, by the whole song: the model was trained on songs of unit variance
    level = song_level(mix)
    heard, overlap = np.zeros(samples, np.float32), round(WINDOW_OVERLAP_SECONDS * SAMPLE_RATE)
    margin = round(FADE_MARGIN_SECONDS * SAMPLE_RATE)
    fade = np.clip((np.arange(overlap, dtype=np.float32) - margin) / (overlap - 2 * margin), 0, 1)
    # Demucs' bar is redrawn in place whatever stderr is: where that is no terminal (a log), it is off and the stage's
    # own says when the work starts and ends (the page follows either: Gradio tracks every tqdm), as Whisper's.
    drawn, seconds = not quiet and on_terminal(), round(samples / SAMPLE_RATE, 1)
    with Progress("separate vocals", total=seconds, unit="s", quiet=quiet or drawn) as progress:
        for index, (start, end) in enumerate(windows(mix.shape[1], rate)):
            with torch.inference_mode():
                vocals = window_vocals(separator, mix[:, start:end], level, drawn)
            at = round(start * SAMPLE_RATE / rate)
            vocals = vocals[: max(0, samples - at)]
            if index:  # the previous window's tail fades out as this one's head fades in
                tail = heard[at : at + overlap]
                vocals[: tail.size] = tail * (1 - fade[: tail.size]) + vocals[: tail.size] * fade[: tail.size]
            heard[at : at + vocals.size] = vocals
            progress.set_to(min(seconds, round(end / rate, 1)))
    return heard


def song_level(mix: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The mean and standard deviation of the whole song's mono mix (`mix`: channels × samples)."""
    mono = mix.mean(0)
    return mono.mean(), mono.std().clamp_min(1e-8)


def windows(length: int, rate: int) -> list[tuple[int, int]]:
    """The windows Demucs is given of a song `length` samples long at `rate`: (start, end), each a step after the one
    before and a step and an overlap long; the last ends with the song (one window if the song is no longer)."""
    step = round(WINDOW_STEP_SECONDS * rate)
    window = step + round(WINDOW_OVERLAP_SECONDS * rate)
    starts = range(0, max(1, length - window + step), step)
    return [(start, min(length, start + window)) for start in starts]


def window_vocals(separator, mix: torch.Tensor, level: tuple[torch.Tensor, torch.Tensor], drawn: bool) -> np.ndarray:
    """The vocals of `mix` (channels × samples at the separator's rate) as 16 kHz mono, normalized by the song's
    `level` (song_level) for Demucs and back."""
    import librosa

    mean, std = level
    vocals = demucs_stem(separator, (mix - mean) / std, "vocals", OVERLAP, progress=drawn)
    vocals = (vocals * std + mean).mean(0).cpu()
    rate, _ = demucs_format(separator)
    return librosa.resample(vocals.numpy(), orig_sr=rate, target_sr=SAMPLE_RATE).astype(np.float32)
