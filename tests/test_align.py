"""Known lyrics aligned by a Whisper model that every render of a process shares: text longer than the
decoder reads at once is aligned in pieces, and a failed alignment leaves the model as it was."""

import pytest
import torch
import whisper

from musicvid.core.assets import DEMO_LYRICS
from musicvid.core.audio import SAMPLE_RATE, load_audio
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.known import parse_lrc
from musicvid.models.choose import choose_models
from musicvid.models.registry import ModelRegistry

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shared():
    """The tiny preset's Whisper (a 64-token text context), kept loaded as the page and a batch keep it."""
    registry = ModelRegistry(choose_models("tiny"), "cpu", keep_loaded=True)
    with registry.use("asr") as asr:
        yield asr


@pytest.fixture(scope="module")
def song():
    return load_audio(DEMO_LYRICS.with_suffix(".mp3"))


def test_a_song_pasted_as_one_paragraph_is_aligned_in_pieces(shared, song):
    sung = " ".join(line.text for line in parse_lrc(DEMO_LYRICS.read_text(), song.info.duration))
    paragraph = " ".join([sung] * 9)  # about 400 words, far over the 64 tokens the decoder reads at once
    assert len(paragraph.split()) > 380
    lines = align_lyrics(shared, song.samples, [paragraph], song.info.sha256, quiet=True).lines
    assert " ".join(line.text for line in lines) == paragraph  # (as phrases where it was found)
    timed = [w.text for line in lines for w in line.words]  # a random model finds some pieces, not all
    assert timed and timed == paragraph.split()[: len(timed)]
    starts = [line.start for line in lines]
    assert starts == sorted(starts) and 0 <= lines[0].start <= lines[-1].end <= song.info.duration


def test_a_failed_alignment_leaves_the_shared_model_working_for_the_next_job(shared, song, monkeypatch):
    def broken(*args, **kwargs):  # fails inside the alignment, while its hooks are on the model
        raise RuntimeError("the GPU is out of memory")

    from musicvid.lyrics import align

    monkeypatch.setattr(align, "detect_language", lambda *args: "en")  # (it runs the decoder too)
    monkeypatch.setattr(shared.model.decoder, "forward", broken)
    with pytest.raises(RuntimeError, match="out of memory"):
        align_lyrics(shared, song.samples, ["my heart is a lighthouse"], song.info.sha256, quiet=True)
    monkeypatch.undo()
    # the next renders: recognition (a hook left behind breaks every pass of its decoder) and another alignment
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(song.samples[: 8 * SAMPLE_RATE]))
    with torch.no_grad():
        shared.model(mel[None], torch.tensor([[whisper.tokenizer.get_tokenizer(False).sot]]))
    lines = align_lyrics(shared, song.samples, ["my heart is a lighthouse"], song.info.sha256, quiet=True).lines
    assert [line.text for line in lines] == ["my heart is a lighthouse"]
