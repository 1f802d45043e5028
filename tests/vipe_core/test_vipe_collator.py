"""The training examples and their batches: only elaborations (and their closing <eos>) are learned."""

from __future__ import annotations

import pytest

from vipe_core.canvas import examples, read_canvas
from vipe_core.context import lyric_context, model_input
from vipe_core.train import Collator, encode_example
from vipe_core.train_config import paper_batch_size


@pytest.fixture(scope="module")
def batch_items(canvas_parquet):
    return examples(read_canvas(canvas_parquet), "train", 3)[:6]


def test_labelled_tokens_are_exactly_the_elaborations_and_eos(tokenizer, batch_items):
    encoded = [encode_example(tokenizer, e["context"], e["elaboration"], 128) for e in batch_items]
    batch = Collator(tokenizer.eos_token_id)(encoded)
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape
    for row, item in enumerate(batch_items):
        labels = batch["labels"][row]
        learned = labels[labels != -100].tolist()
        assert tokenizer.decode(learned) == item["elaboration"] + tokenizer.eos_token
        assert learned[-1] == tokenizer.eos_token_id


def test_padding_is_never_counted(tokenizer, batch_items):
    encoded = [encode_example(tokenizer, e["context"], e["elaboration"], 128) for e in batch_items]
    batch = Collator(tokenizer.eos_token_id)(encoded)
    lengths = [len(ids) for ids, _ in encoded]
    assert len(set(lengths)) > 1  # the batch really is padded
    for row, length in enumerate(lengths):
        assert batch["attention_mask"][row, :length].all() and not batch["attention_mask"][row, length:].any()
        assert (batch["labels"][row, length:] == -100).all()
    # The pad id is the eos id here: padding differs from the closing eos only by its label.
    assert (batch["labels"] == tokenizer.eos_token_id).sum() == len(batch_items)


def test_the_prompt_is_the_inference_formatters_output(tokenizer, batch_items, canvas_parquet):
    frame = read_canvas(canvas_parquet)
    for item in batch_items:
        lines = frame[frame.song_id == item["song_id"]].sort_values("line_index").lyric.tolist()
        context = lyric_context(lines, item["line_index"], 3)
        assert item["context"] == context
        ids, prompt_length = encode_example(tokenizer, context, item["elaboration"], 128)
        # Exactly the tokens ViPE.elaborate feeds the model for this context ...
        assert ids[:prompt_length] == tokenizer(model_input(context, tokenizer.eos_token))["input_ids"]
        assert tokenizer.decode(ids[:prompt_length]) == model_input(context, tokenizer.eos_token)
        # ... and the whole example tokenizes as the one string <eos> context <eos> elaboration <eos>.
        whole = model_input(context, tokenizer.eos_token) + item["elaboration"] + tokenizer.eos_token
        assert ids == tokenizer(whole)["input_ids"]


def test_a_long_context_loses_its_oldest_tokens_not_the_elaboration(tokenizer):
    context = " ; ".join(f"the river runs wild number {i}" for i in range(40))
    ids, prompt_length = encode_example(tokenizer, context, "a golden river under heavy rain", 48)
    assert len(ids) == 48
    assert ids[0] == tokenizer.eos_token_id and ids[prompt_length - 1] == tokenizer.eos_token_id
    assert tokenizer.decode(ids[prompt_length:]) == "a golden river under heavy rain" + tokenizer.eos_token
    assert tokenizer.decode(ids[1 : prompt_length - 1]).endswith("number 39")


def test_paper_batch_sizes():
    assert paper_batch_size("gpt2-medium", 7) == 8
    assert paper_batch_size("gpt2-medium", 3) == 20
    assert paper_batch_size("gpt2", 7) == 32
    assert paper_batch_size("gpt2", 0) == 50
