"""ViPE as a first run meets it: the released checkpoint, loaded by hub name offline (tests/standins/vipe.py),
gets gpt2-medium's tokenizer; a checkpoint without tokenizer files takes the one named; a tokenizer that does not
fit its model stops the run in one sentence."""

import pytest

from musicvid.cli import main
from musicvid.core.assets import TINY_GPT2_TOKENIZER
from tests.fixtures.gpt2 import GPT2_EOS, GPT2_VOCAB
from tests.standins.hub import snapshot
from vipe_core.errors import VipeError
from vipe_core.inference import ViPE
from vipe_core.released import DEFAULT_VIPE

pytestmark = pytest.mark.slow


def test_the_released_vipe_checkpoint_gets_gpt2_mediums_tokenizer(standin_hub):
    vipe = ViPE.from_pretrained(DEFAULT_VIPE)  # by hub name: the checkpoint ships no tokenizer
    assert (len(vipe.tokenizer), vipe.tokenizer.eos_token_id) == (GPT2_VOCAB, GPT2_EOS)
    assert vipe.tokenizer("a lighthouse in the storm")["input_ids"] == [64, 46371, 287, 262, 6388]
    [candidates] = vipe.sample(["my heart is a lighthouse in the storm"], candidates=3, seed=0)
    assert len(candidates) == 3 and all(candidates)


def test_a_checkpoint_without_tokenizer_files_loads_with_the_named_tokenizer(tmp_path):
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(TINY_GPT2_TOKENIZER)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "ckpt")
    assert not any(p.name.startswith(("tokenizer", "vocab")) for p in (tmp_path / "ckpt").iterdir())
    vipe = ViPE.from_pretrained(str(tmp_path / "ckpt"), str(TINY_GPT2_TOKENIZER))
    assert len(vipe.tokenizer) == len(tokenizer) and vipe.tokenizer("the sun is rising")["input_ids"]
    assert all(vipe.elaborate(["the sun is rising", "the night is falling"], seed=1))
    # Without a tokenizer to fall back on, transformers 5 makes one of 1 token: every context became
    # [0, 0] and every prompt empty. That tokenizer is refused now, naming both sides.
    with pytest.raises(VipeError, match=r"vocabulary 1, .*vocabulary 1536"):
        ViPE.from_pretrained(str(tmp_path / "ckpt"), str(tmp_path / "ckpt"))


def test_a_tokenizer_that_does_not_fit_its_model_stops_the_run_in_one_sentence(
    standin_hub, demo_song, demo_lyrics, tmp_path, capsys
):
    vipe = snapshot(standin_hub, DEFAULT_VIPE)
    with pytest.raises(VipeError) as error:
        ViPE.from_pretrained(DEFAULT_VIPE, str(TINY_GPT2_TOKENIZER))
    assert "vocabulary 1536, end-of-text id 1535" in str(
        error.value
    ) and "vocabulary 50257, end-of-text id 50256" in str(error.value)
    code = main(
        [
            "storyboard",
            str(demo_song),
            "--models",
            "tiny",
            "--lyrics",
            str(demo_lyrics),
            "--vipe",
            str(vipe),
            "--vipe-tokenizer",
            str(TINY_GPT2_TOKENIZER),
            "--workdir",
            str(tmp_path / "w"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "does not match the ViPE model" in err and "--vipe-tokenizer" in err
    assert not (tmp_path / "w" / "storyboard.json").exists()
