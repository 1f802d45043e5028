"""Fixtures for the vipe_core tests: the tiny tokenizer, a tiny GPT-2 built locally, a small
LyricCanvas, and one small training run that several tests look at."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from .helpers import ASSET_TOKENIZER, lyric_line, make_songs, teacher_elaboration, write_labelled

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# ---------------------------------------------------------------------------------------------
# Tokenizer, tiny model, a small LyricCanvas and one training run.


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory) -> Path:
    """The repository's tiny GPT-2 tokenizer; a throwaway one trained here if it is missing."""
    if (ASSET_TOKENIZER / "vocab.json").exists():
        return ASSET_TOKENIZER
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2TokenizerFast

    path = tmp_path_factory.mktemp("tokenizer")
    rng = random.Random(0)
    corpus = [lyric_line(rng) for _ in range(500)] + [teacher_elaboration(lyric_line(rng)) for _ in range(500)]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=600, special_tokens=["<|endoftext|>"])
    GPT2TokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>"
    ).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory, tokenizer) -> Path:
    """A random tiny GPT-2 saved as a base model folder (what --base takes)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    path = tmp_path_factory.mktemp("tiny-gpt2")
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def canvas_parquet(tmp_path_factory) -> Path:
    """A LyricCanvas of 8 songs (6 train, 2 validation) made through `build`."""
    from vipe_core.canvas import run_build

    folder = tmp_path_factory.mktemp("canvas")
    write_labelled(folder / "canvas", make_songs(8))
    run_build(folder / "lyric_canvas.parquet", canvas_dir=folder / "canvas", validation_fraction=0.25)
    return folder / "lyric_canvas.parquet"


@pytest.fixture(scope="session")
def trained(made_once, tiny_base, canvas_parquet):
    """One training run of the tiny model, made once for all of pytest-xdist's workers (their tiny base and canvas
    are the same bytes; tests/conftest.py's made_once): (output folder, result dict)."""
    import json

    def make(folder: Path) -> None:
        (folder / "result.json").write_text(json.dumps(train_tiny(folder / "run", tiny_base, canvas_parquet)))

    folder = made_once("trained", make)
    return folder / "run", json.loads((folder / "result.json").read_text())


def train_tiny(out: Path, tiny_base: Path, canvas_parquet: Path) -> dict:
    import torch

    from vipe_core.train import TrainConfig, train

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model on a busy 2-core machine: one thread is several times faster
    try:
        return train(
            TrainConfig(
                data=str(canvas_parquet),
                out=str(out),
                base=str(tiny_base),
                context_size=1,
                epochs=24,
                batch_size=16,
                lr=6e-3,
                warmup_steps=10,
                patience=0,
                save_every=0,
                progress=False,
            )
        )
    finally:
        torch.set_num_threads(threads)


def _no_work(*args, **kwargs):
    raise AssertionError("the run began its work before refusing")


@pytest.fixture
def no_work(monkeypatch):
    """Loading the base model fails the test: a refusal must come before it."""
    monkeypatch.setattr("vipe_core.train.load_base", _no_work)


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
