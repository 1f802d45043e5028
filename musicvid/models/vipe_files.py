"""A ViPE folder (--vipe DIR) and a ViPE tokenizer, checked against each other before any work: the model its
config.json describes is built on the meta device (no memory, no weight read), refused where it is no size a ViPE
is, and its tensors' names and shapes compared with those its weights files declare (musicvid.models.weights_files:
the safetensors headers, a sharded index, or a PyTorch archive opened without reading it); a tokenizer is a folder of tokenizer.json, or
vocab.json and merges.txt, whose vocabulary and end-of-text id fit the model's config. transformers would
otherwise fill a missing tensor with random numbers and say nothing (tests/test_vipe_folders.py). A checkpoint whose
`vipe train` run still runs is refused: the run replaces it as it saves."""

from __future__ import annotations

from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.models.weights_files import (
    check_fit,
    json_object,
    shapes_of,
    sharded,
    silenced,
    transformers_fit,
)
from vipe_core.guards import checkpoint_around, impossible_number, is_checkpoint_copy, is_held

# ViPE-M and ViPE-L are GPT-2 Medium (355M parameters) and GPT-2 Large (774M); the family's largest, GPT-2 XL,
# has 1.56B. A config describing more is no ViPE: a config without sizes takes transformers' defaults, Llama's
# 6.7B, which as float32 fills 27 GB before a single weight is found to be missing.
MOST_PARAMETERS = 2_000_000_000

# The weights transformers' from_pretrained loads from a folder, in the order it looks for them
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
TOKENIZER = "tokenizer.json"
VOCABULARY = ("vocab.json", "merges.txt")


def model_config(folder: Path, config: dict, named: str):
    """The folder's config as transformers reads it, its values of the types its class needs."""
    from transformers import AutoConfig

    from musicvid.models.kinds import first_line

    bad = impossible_number(config)
    if bad is not None:
        raise UserError(f"{named}: its config.json's {bad[0]} is {bad[1]}, not a number a model can have")
    named_as = config.get("architectures")
    if named_as is not None and not (isinstance(named_as, list) and all(isinstance(n, str) for n in named_as)):
        raise UserError(f'{named}: its config.json\'s architectures is no list of class names, as ["GPT2LMHeadModel"]')
    try:
        return AutoConfig.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as error:  # (transformers' strict configs say a wrong type in their own error types)
        raise UserError(
            f"{named}: its config.json describes no model transformers can build ({first_line(error)})"
        ) from None


def meta_model(config, named: str):
    """The causal language model `config` describes, on the meta device: its tensors' names and shapes, no memory."""
    import torch
    from transformers import AutoModelForCausalLM

    from musicvid.models.kinds import first_line

    try:
        with torch.device("meta"), silenced():
            model = AutoModelForCausalLM.from_config(config)
    except Exception as error:
        if "overflow" in str(error).lower():  # (torch's: a tensor of more bytes than a 64-bit count holds)
            raise UserError(
                f"{named}: its config.json describes a model of over a billion billion {_PARAMETERS}"
            ) from None
        raise UserError(f"{named}: its config.json describes no causal language model ({first_line(error)})") from None
    count = sum(parameter.numel() for parameter in model.parameters())
    if count > MOST_PARAMETERS:
        raise UserError(f"{named}: its config.json describes a model of {count / 1e9:.1f} billion {_PARAMETERS}")
    return model


_PARAMETERS = (
    "parameters; ViPE is GPT-2 Medium or Large (0.36 or 0.77 billion), and musicvid takes none "
    f"over {MOST_PARAMETERS / 1e9:.0f} billion"
)


def held_weights(folder: Path, named: str) -> dict[str, list[int]]:
    """What from_pretrained would load from `folder`: one weights file, else the shards its index names."""
    for weights in WEIGHTS:
        if (folder / weights).is_file():
            return shapes_of(folder / weights, f"{named}: its {weights}")
        index = folder / f"{weights}.index.json"
        if index.is_file():
            return sharded(folder, index, named)
    raise UserError(f"{named} holds no weights: give a folder with {WEIGHTS[0]} (or {WEIGHTS[1]}), or a hub name")


def check_folder_fit(folder: Path, kind: type, named: str):
    """Refuse, in one sentence, a transformers folder whose weights do not fill the `kind` model its config.json
    describes (built on the meta device: a size no model has is refused too); the config, as transformers reads it."""
    described = model_config(folder, json_object(folder / "config.json", named), named)
    check_fit(transformers_fit(kind, described, held_weights(folder, named), named), kind.__name__, described, named)
    return described


def check_vipe_folder(folder: Path, config: dict, named: str) -> None:
    """Refuse, in one sentence, a ViPE folder (module doc) whose weights do not make the model its config
    describes: a tensor missing (transformers would make it up), of another shape, a model no ViPE is, or one whose
    context window holds no line beside the prompt it writes (GenerationSettings.max_new_tokens)."""
    from vipe_core.inference import GenerationSettings, causal_lm
    from vipe_core.train_checks import window_of

    described = model_config(folder, config, named)
    if not causal_lm(described):  # (a BERT whose config does not make it a decoder: it reads each line both ways)
        kind = (described.architectures or [described.model_type])[0]
        raise UserError(f"{named} is a {kind} that reads both ways, not a causal language model, as ViPE is (GPT-2's)")
    if (window := window_of(described)) <= (writes := GenerationSettings().max_new_tokens):
        raise UserError(
            f"{named} reads {window} tokens at most, and the prompt it writes takes {writes} of them: it has no room "
            "for the lyrics (ViPE-M reads 1024)"
        )
    model = meta_model(described, named)
    held = held_weights(folder, named)
    check_fit(transformers_fit(type(model), model.config, held, named), type(model).__name__, model.config, named)


def refuse_training(folder: Path, named: str) -> None:
    """Refuse a checkpoint (best/, last/) of a `vipe train` run that still holds its run folder: each save swaps
    in a new folder by two renames, so a load across one finds none, or the files of two saves."""
    if is_checkpoint_copy(folder):
        raise UserError(f"{named} is a copy a `vipe train` run makes while it saves a checkpoint: give its best/")
    checkpoint = checkpoint_around(folder)
    if checkpoint is not None and is_held(checkpoint.parent):
        raise UserError(
            f"{named} is a checkpoint of the `vipe train` run in {checkpoint.parent}, which is still running and "
            "replaces it at each save: wait for the run to end"
        )
    if checkpoint == folder.resolve() and not folder.exists():  # (not a hub name: a run's, stopped between renames)
        raise UserError(
            f"{named} is not there: the `vipe train` run in {checkpoint.parent} was stopped while it saved it; run "
            "that `vipe train` command again to put it back"
        )


def holds_tokenizer(folder: Path, vocabulary: tuple[str, ...] = VOCABULARY) -> bool:
    """Whether `folder` holds what a tokenizer is read from: tokenizer.json, or each file of its `vocabulary` (a
    GPT-2 tokenizer's, vocab.json and merges.txt, by default), where it has one."""
    return (folder / TOKENIZER).is_file() or bool(vocabulary) and all((folder / name).is_file() for name in vocabulary)


def check_vocabulary(folder: Path, named: str, names: tuple[str, ...] = (TOKENIZER, *VOCABULARY)) -> None:
    """Refuse a tokenizer folder whose files (of `names`, those there) hold no tokens, as a download or a copy cut to
    nothing leaves them: tokenizer.json's model without a vocabulary (a BPE one's, without merges), a vocab.json of
    no entries or a merges.txt of no merge, another file of 0 bytes. transformers reads an empty merges.txt and splits
    every word into letters, a picture model then drawing what no prompt said."""
    for name in (name for name in names if (folder / name).is_file()):
        empty = (folder / name).stat().st_size == 0
        if name == TOKENIZER:
            model = json_object(folder / name, named).get("model")
            model = model if isinstance(model, dict) else {}
            empty = not model.get("vocab") or model.get("type") == "BPE" and not model.get("merges")
        elif name == "vocab.json":
            empty = not json_object(folder / name, named)
        elif name == "merges.txt":
            lines = (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
            empty = not any(line.strip() and not line.startswith("#version") for line in lines)
        if empty:
            raise UserError(f"{named}: its {name} is empty (a download or a copy cut short?), and a tokenizer reads it")


def tokenizer_folder(folder: Path, named: str) -> None:
    """A tokenizer folder holds what a GPT-2 tokenizer is read from, not empty: tokenizer.json, or vocab.json and
    merges.txt."""
    if not holds_tokenizer(folder):
        raise UserError(
            f"{named} holds no {TOKENIZER}, nor {' and '.join(VOCABULARY)}: give a GPT-2 tokenizer's folder or a hub "
            "name"
        )
    check_vocabulary(folder, named)


def check_tokenizer_fits(tokenizer: str, config: dict | None, model: str, named: str, advice: str) -> None:
    """The tokenizer `tokenizer` (a folder, or a hub name in the cache), built as ViPE builds it (it is small),
    refused in one sentence saying `named` where it cannot be built or does not fit `config`, the config.json of
    the ViPE model `model`, by vipe_core.inference.check_tokenizer's rule; `advice`: what to do instead."""
    from types import SimpleNamespace

    from musicvid.models.kinds import first_line
    from vipe_core.errors import VipeError
    from vipe_core.inference import check_tokenizer, read_tokenizer

    try:
        built = read_tokenizer(tokenizer, local_files_only=True)
    except Exception as error:
        raise UserError(f"{named} cannot be read as a tokenizer ({first_line(error)})") from None
    said = SimpleNamespace(vocab_size=(config or {}).get("vocab_size"), eos_token_id=(config or {}).get("eos_token_id"))
    if not isinstance(said.vocab_size, int):
        return  # (a hub model's config not in the cache: its load compares them)
    try:
        check_tokenizer(built, said, tokenizer, model)
    except VipeError:
        raise UserError(
            f"{named} (vocabulary {len(built)}, end-of-text id {built.eos_token_id}) does not match the ViPE model "
            f"{model} (vocabulary {said.vocab_size}, end-of-text id {said.eos_token_id}); {advice}"
        ) from None
