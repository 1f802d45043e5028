"""Vocals: the singing apart from the band (`--separate-vocals`), before voice activity and recognition.

Demucs (htdemucs, the hybrid transformer model) splits the song into drums, bass, other and vocals; a
loud band then no longer hides the voice from Silero or Whisper. It reads the song at its own rate and
channels (44.1 kHz stereo) from the file, not the 16 kHz mono the rest of the pipeline hears.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from musicvid.core.audio import SAMPLE_RATE, decode
from musicvid.core.progress import Progress
from musicvid.models.internals import demucs_format, demucs_stem
from vipe_core.bars import on_terminal

# Demucs cuts a song into segments; a quarter of each overlaps the next, so no seam is heard.
OVERLAP = 0.25


def separate_vocals(separator, song: Path, samples: int, *, quiet: bool = False) -> np.ndarray:
    """The vocals of `song` as 16 kHz mono, `samples` long (the length of the song's own decoding)."""
    import librosa

    rate, channels = demucs_format(separator)
    mix = torch.from_numpy(decode(song, rate, channels).reshape(-1, channels).T.copy())
    # normalized as Demucs' own command line does: the model was trained on songs of unit variance
    mono = mix.mean(0)
    mean, std = mono.mean(), mono.std().clamp_min(1e-8)
    # Demucs' bar is redrawn in place whatever stderr is: where that is no terminal (a log), it is off and the stage's
    # own says when the work starts and ends (the page follows either: Gradio tracks every tqdm), as Whisper's.
    drawn, seconds = not quiet and on_terminal(), round(samples / SAMPLE_RATE, 1)
    with Progress("separate vocals", total=seconds, unit="s", quiet=quiet or drawn) as progress, torch.inference_mode():
        vocals = demucs_stem(separator, (mix - mean) / std, "vocals", OVERLAP, progress=drawn)
        progress.set_to(seconds)
    vocals = (vocals * std + mean).mean(0).cpu()
    heard = librosa.resample(vocals.numpy(), orig_sr=rate, target_sr=SAMPLE_RATE).astype(np.float32)
    return np.pad(heard, (0, max(0, samples - heard.size)))[:samples]
