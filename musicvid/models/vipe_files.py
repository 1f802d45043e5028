"""A ViPE folder (--vipe DIR) and a ViPE tokenizer, checked against each other before any work: the model its
config.json describes is built on the meta device (no memory, no weight read), refused where it is no size a ViPE
is, and its tensors' names and shapes compared with those its weights files declare (the safetensors headers, a
sharded index, or a PyTorch archive opened without reading it); a tokenizer is a folder of tokenizer.json, or
vocab.json and merges.txt, whose vocabulary and end-of-text id fit the model's config. transformers would
otherwise fill a missing tensor with random numbers and say nothing (tests/test_vipe_folders.py)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.models.single_file import header

# ViPE-M and ViPE-L are GPT-2 Medium (355M parameters) and GPT-2 Large (774M); the family's largest, GPT-2 XL,
# has 1.56B. A config describing more is no ViPE: a config without sizes takes transformers' defaults, Llama's
# 6.7B, which as float32 fills 27 GB before a single weight is found to be missing.
MOST_PARAMETERS = 2_000_000_000

# The weights transformers' from_pretrained loads from a folder, in the order it looks for them
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
TOKENIZER = "tokenizer.json"
VOCABULARY = ("vocab.json", "merges.txt")


def not_finite(config, where: str = "") -> tuple[str, float] | None:
    """The first key of a config (nested ones dotted) whose number is NaN or infinite, and that number: JSON's
    parser takes both."""
    if isinstance(config, float) and not math.isfinite(config):
        return where, config
    entries = config.items() if isinstance(config, dict) else enumerate(config) if isinstance(config, list) else ()
    for key, value in entries:
        found = not_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def model_config(folder: Path, config: dict, named: str):
    """The folder's config as transformers reads it, its values of the types its class needs."""
    from transformers import AutoConfig

    from musicvid.models.kinds import first_line

    bad = not_finite(config)
    if bad is not None:
        raise UserError(f"{named}: its config.json's {bad[0]} is {bad[1]}, not a number a model can have")
    try:
        return AutoConfig.from_pretrained(str(folder))
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
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except Exception as error:
        raise UserError(f"{named}: its config.json describes no causal language model ({first_line(error)})") from None
    count = sum(parameter.numel() for parameter in model.parameters())
    if count > MOST_PARAMETERS:
        raise UserError(
            f"{named}: its config.json describes a model of {count / 1e9:.1f} billion parameters; ViPE is GPT-2 "
            f"Medium or Large (0.36 or 0.77 billion), and musicvid takes none over {MOST_PARAMETERS / 1e9:.0f} billion"
        )
    return model


def archive_shapes(path: Path, named: str) -> dict[str, list[int]] | None:
    """The tensors' names and shapes a PyTorch weights file holds, opened on the meta device (nothing read);
    None for an older pickle, which torch opens only by reading it (it is checked as it loads)."""
    import torch

    from musicvid.models.kinds import first_line

    with path.open("rb") as opened:
        if opened.read(2) != b"PK":
            return None
    try:
        state = torch.load(str(path), map_location="meta", mmap=True, weights_only=True)
    except Exception as error:  # (torch's weights-only load refuses anything but tensors, in its own words)
        raise UserError(f"{named} cannot be read as weights alone ({first_line(error)})") from None
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise UserError(f"{named} holds no state dict of tensors")
    return {str(key): list(tensor.shape) for key, tensor in state.items()}


def shapes_of(path: Path, named: str) -> dict[str, list[int]] | None:
    return header(path, named) if path.suffix == ".safetensors" else archive_shapes(path, named)


def sharded(folder: Path, index: Path, named: str) -> dict[str, list[int]] | None:
    """The tensors a sharded checkpoint's index places, each as the shard it names holds it."""
    try:
        placed = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        placed = None
    if not isinstance(placed, dict) or not all(isinstance(shard, str) for shard in placed.values()):
        raise UserError(f"{named}: its {index.name} is damaged (no weight_map of tensor names to files)")
    shards = {}
    for shard in sorted(set(placed.values())):
        if not (folder / shard).is_file():
            raise UserError(f"{named}: its {index.name} names {shard}, which is not there")
        shards[shard] = shapes_of(folder / shard, f"{named}: its {shard}")
        if shards[shard] is None:
            return None
    for tensor, shard in placed.items():
        if tensor not in shards[shard]:
            raise UserError(f"{named}: its {index.name} places {tensor} in {shard}, which does not hold it")
    return {tensor: shards[shard][tensor] for tensor, shard in placed.items()}


def held_weights(folder: Path, named: str) -> dict[str, list[int]] | None:
    """What from_pretrained would load from `folder`: one weights file, else the shards its index names; None
    where that cannot be known without reading the weights (an older pickle)."""
    for weights in WEIGHTS:
        if (folder / weights).is_file():
            return shapes_of(folder / weights, f"{named}: its {weights}")
        index = folder / f"{weights}.index.json"
        if index.is_file():
            return sharded(folder, index, named)
    raise UserError(f"{named} holds no weights: give a folder with {WEIGHTS[0]} (or {WEIGHTS[1]}), or a hub name")


def check_vipe_folder(folder: Path, config: dict, named: str) -> None:
    """Refuse, in one sentence, a ViPE folder (module doc) whose weights do not make the model its config
    describes: a tensor missing (transformers would make it up), of another shape, or a model no ViPE is."""
    model = meta_model(model_config(folder, config, named), named)
    held = held_weights(folder, named)
    if held is None:
        return
    # Tied tensors (GPT-2's head is its token embedding) are one tensor under several names, saved under one.
    state, names = model.state_dict(keep_vars=True), {}  # (buffers not saved are not in it)
    for name, tensor in state.items():
        names.setdefault(id(tensor), []).append(name)
    shapes = {name: list(tensor.shape) for name, tensor in state.items()}
    prefix = f"{model.base_model_prefix}."  # a base model's checkpoint holds its tensors without it

    def found(name: str) -> str | None:
        return next((key for key in (name, name.removeprefix(prefix)) if key in held), None)

    missing = [group[0] for group in names.values() if not any(found(name) for name in group)]
    if len(missing) == len(names):
        raise UserError(
            f"{named}: its weights hold none of the tensors of the {type(model).__name__} its config.json describes "
            f"({missing[0]}, …): they are another model's"
        )
    if missing:
        raise UserError(f"{named}: its weights hold no {what_is_missing(missing, list(shapes), model.config)}")
    for name, shape in shapes.items():
        key = found(name)
        if key is not None and held[key] != shape:
            raise UserError(
                f"{named}: its weights hold {key} of {' x '.join(map(str, held[key]))}, where the model its "
                f"config.json describes has {' x '.join(map(str, shape))}"
            )


def what_is_missing(missing: list[str], every: list[str], config) -> str:
    """The missing tensors in words: a whole layer as `transformer.h.1.*` where none of it is there."""
    said: list[str] = []
    gone = set(missing)
    for name in missing:
        layer = re.match(r"(.+?\.\d+)\.", name)
        whole = layer and all(other in gone for other in every if other.startswith(f"{layer[1]}."))
        label = f"{layer[1]}.*" if whole else name
        if label not in said:
            said.append(label)
    listed = " or ".join(said) if len(said) < 3 else f"{said[0]}, {said[1]} or {len(said) - 2} more"
    layers = getattr(config, "num_hidden_layers", None)
    if all(label.endswith(".*") for label in said) and isinstance(layers, int):
        return f"{listed} that its config.json's {layers} layers need"
    return f"{listed}, which the model its config.json describes needs"


def tokenizer_folder(folder: Path, named: str) -> None:
    """A tokenizer folder holds what a GPT-2 tokenizer is read from: tokenizer.json, or vocab.json and merges.txt."""
    if not (folder / TOKENIZER).is_file() and not all((folder / name).is_file() for name in VOCABULARY):
        raise UserError(
            f"{named} holds no {TOKENIZER}, nor {' and '.join(VOCABULARY)}: give a GPT-2 tokenizer's folder or a hub "
            "name"
        )


def check_tokenizer_fits(tokenizer: str, config: dict | None, model: str, named: str, advice: str) -> None:
    """The tokenizer `tokenizer` (a folder, or a hub name in the cache), built as ViPE builds it (it is small),
    refused in one sentence saying `named` where it cannot be built or does not fit `config`, the config.json of
    the ViPE model `model`, by vipe_core.inference.check_tokenizer's rule; `advice`: what to do instead."""
    from types import SimpleNamespace

    from transformers import AutoTokenizer

    from musicvid.models.kinds import first_line
    from vipe_core.errors import VipeError
    from vipe_core.inference import check_tokenizer

    try:
        built = AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
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
