"""--separate-vocals' model as a first run meets it: the published HTDemucs, loaded by name offline through
demucs' own loading (tests/standins/demucs.py), takes the vocals from the band."""

import numpy as np
import pytest
import torch

from musicvid.cli import main
from musicvid.core.audio import load_audio
from musicvid.core.files import weights_identity
from musicvid.lyrics.transcript import Transcript
from musicvid.lyrics.vocals import separate_vocals
from musicvid.models.loading import load_separator, resolve_device
from musicvid.settings.presets import DEMUCS
from tests.fixtures.songs import make_song
from tests.standins.demucs import HTDEMUCS_KWARGS

# (in the ci tier, as the other first runs by hub name: htdemucs's stand-in separates for 20 s)
pytestmark = [pytest.mark.slow, pytest.mark.ci]


def test_vocals_are_taken_from_the_band_by_the_published_htdemucs_loaded_by_name(standin_hub, tiny_en, tmp_path):
    from demucs.apply import BagOfModels
    from demucs.htdemucs import HTDemucs

    song = make_song(tmp_path / "song.mp3", 12.0, [(3.0, "the morning sun is rising over the hills")])
    separator = load_separator(DEMUCS, resolve_device("cpu"))  # demucs' own loading: the hub, safetensors
    assert isinstance(separator, BagOfModels) and [type(m) for m in separator.models] == [HTDemucs]
    assert separator.sources[-1] == "vocals" and (separator.samplerate, separator.audio_channels) == (44100, 2)
    with torch.device("meta"):  # the published architecture, nothing allocated: the same tensors by name
        published = HTDemucs(**{**HTDEMUCS_KWARGS, "segment": 7.8}).state_dict()
    assert set(separator.models[0].state_dict()) == set(published) and len(published) == 533
    samples = load_audio(song).samples
    vocals = separate_vocals(separator, song, samples.size, quiet=True)
    assert vocals.shape == samples.shape and vocals.dtype == np.float32 and np.isfinite(vocals).all()
    assert np.array_equal(vocals, separate_vocals(separator, song, samples.size, quiet=True))

    workdir = tmp_path / "w"
    command = [
        "storyboard",
        str(song),
        "--models",
        "tiny",
        "--separate-vocals",
        "--separator",
        DEMUCS,
        "--asr",
        "faster-whisper",
        "--asr-model",
        tiny_en,
        "--workdir",
        str(workdir),
        "-q",
    ]
    assert main(command) == 0
    source = Transcript.load(workdir / "transcript.json").model  # (with faster-whisper's compute type)
    assert source.startswith(f"faster-whisper:{weights_identity(str(tiny_en))} in ") and source.endswith(
        f"+vocals:{DEMUCS}"
    )
