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

# Demucs cuts a song into segments; a quarter of each overlaps the next, so no seam is heard.
OVERLAP = 0.25


def separate_vocals(separator, song: Path, samples: int, *, quiet: bool = False) -> np.ndarray:
    """The vocals of `song` as 16 kHz mono, `samples` long (the length of the song's own decoding)."""
    import librosa
    from demucs.apply import apply_model

    channels = separator.audio_channels
    mix = torch.from_numpy(decode(song, separator.samplerate, channels).reshape(-1, channels).T.copy())
    # normalized as Demucs' own command line does: the model was trained on songs of unit variance
    mono = mix.mean(0)
    mean, std = mono.mean(), mono.std().clamp_min(1e-8)
    device = next(separator.parameters()).device
    with torch.inference_mode():
        # shifts=0: Demucs' default shifts the song by a random offset, and a rerun must hear the same vocals
        stems = apply_model(
            separator,
            ((mix - mean) / std)[None],
            device=device,
            shifts=0,
            split=True,
            overlap=OVERLAP,
            progress=not quiet,
        )[0]
    vocals = (stems[separator.sources.index("vocals")] * std + mean).mean(0).cpu()
    heard = librosa.resample(vocals.numpy(), orig_sr=separator.samplerate, target_sr=SAMPLE_RATE).astype(np.float32)
    return np.pad(heard, (0, max(0, samples - heard.size)))[:samples]
