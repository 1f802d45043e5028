"""A model's weights files as their headers declare them, and how they fill the model its config describes, before
any work and nothing read but the headers: the tensors' names and shapes (a safetensors header, a sharded
checkpoint's index and its shards', a PyTorch archive opened on the meta device), laid against the model built on
the meta device as its library loads it (transformers' renamings and tied tensors; diffusers' older attention
names), and what is missing or of another shape said in one sentence. A ViPE folder (musicvid.models.vipe_files)
and each part of a diffusers pipeline's folder (musicvid.models.pipeline_files) are checked so: transformers would
fill a missing tensor with random numbers and say nothing, diffusers would fail on it after the storyboard."""

from __future__ import annotations

import json
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from musicvid.core.errors import UserError
from musicvid.models.single_file import header, torch_archive

# The attention names diffusers' VAEs were saved with before diffusers 0.14, which its from_pretrained renames
LEGACY_ATTENTION = {".query.": ".to_q.", ".key.": ".to_k.", ".value.": ".to_v.", ".proj_attn.": ".to_out.0."}


def safetensors_twin(name: str) -> str:
    """The safetensors file its library reads in place of the PyTorch file `name` (a weights file or a shard index)
    where both are there: transformers' pytorch_model(.variant).bin is model(.variant).safetensors, diffusers'
    diffusion_pytorch_model(.variant).bin keeps its stem."""
    twin = name.replace(".bin", ".safetensors", 1)
    return twin.removeprefix("pytorch_") if twin.startswith("pytorch_model") else twin


# A weights file saved as a variant, by diffusers' and transformers' names: diffusion_pytorch_model.bf16.safetensors,
# model.fp16-00001-of-00002.safetensors, diffusion_pytorch_model.safetensors.index.fp16.json
VARIANT_NAME = re.compile(
    r"(?:diffusion_pytorch_model|model|pytorch_model)(?:\.safetensors\.index|\.bin\.index)?\.([^.-]+)(?:-\d+-of-\d+)?"
    r"\.(?:safetensors|bin|json)"
)


def weights_variants(folder: Path) -> list[str]:
    """The variants a model's folder, or its parts' folders, hold weights in (save_pretrained(variant=...) writes
    them so: bf16 and fp16 alone, as hub copies keep them)."""
    if not folder.is_dir():
        return []
    names = (path.name for path in (*folder.iterdir(), *folder.glob("*/*")))
    return sorted({found[1] for name in names if (found := VARIANT_NAME.fullmatch(name))})


def json_object(path: Path, named: str) -> dict:
    """The JSON object the file `path` holds, refused in one sentence (`named` and the file) where it holds none."""
    if not path.is_file():
        raise UserError(f"{named} holds no {path.name}")
    try:
        read = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        read = None
    if not isinstance(read, dict):
        raise UserError(f"{named}: its {path.name} is not a JSON object")
    return read


def archive_shapes(path: Path, named: str) -> dict[str, list[int]]:
    """The tensors' names and shapes a PyTorch weights file holds (pickled_state): one that holds anything but tensors
    is refused, not read as it loads after the storyboard. A dict of tensors inside it is read as diffusers reads an
    IP-Adapter's: `image_proj.proj.weight`."""
    import torch

    state = pickled_state(path, named)
    if not isinstance(state, dict):
        raise UserError(f"{named} holds no state dict of tensors")
    # (an IP-Adapter's holds two, image_proj's and ip_adapter's, as h94/IP-Adapter saves them: named as diffusers does)
    flat = {
        f"{outer}.{key}" if isinstance(inner, dict) else outer: tensor
        for outer, inner in state.items()
        for key, tensor in (inner.items() if isinstance(inner, dict) else [(None, inner)])
    }
    if not all(isinstance(tensor, torch.Tensor) for tensor in flat.values()):
        raise UserError(f"{named} holds no state dict of tensors")
    return {str(key): list(tensor.shape) for key, tensor in flat.items()}


def pickled_state(path: Path, named: str, advice: str = "save it as .safetensors"):
    """What a PyTorch file holds, opened on the meta device (no weight read; torch's zip archive mapped, an older
    pickle read op by op) by torch's weights-only unpickler: a pickle that would build anything but tensors, numbers,
    strings and their containers (and so could run code as it loads) is refused."""
    import pickle

    import torch

    from musicvid.models.kinds import first_line

    archive = torch_archive(path, named)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (an older pickle's protocol, said as a warning)
            state = torch.load(str(path), map_location="meta", mmap=archive, weights_only=True)
    except pickle.UnpicklingError as error:  # (torch's own words are a page of advice: load it with weights_only=False)
        if f"Unsupported operand {pickle.LONG4[0]}" in str(error):  # (pickle's for an int of 256 bytes or more)
            raise UserError(
                f"{named} holds a whole number of over 600 digits, which no weights hold: {advice}"
            ) from None
        raise UserError(
            f"{named} holds more than tensors, and musicvid reads tensors alone of a PyTorch file: a pickle can run "
            f"code as it loads ({advice})"
        ) from None
    except Exception as error:
        raise UserError(f"{named} cannot be read as weights alone ({first_line(error)})") from None
    return state


def shapes_of(path: Path, named: str) -> dict[str, list[int]]:
    return header(path, named) if path.suffix == ".safetensors" else archive_shapes(path, named)


def sharded(folder: Path, index: Path, named: str) -> dict[str, list[int]]:
    """The tensors a sharded checkpoint's index places, each as the shard it names holds it: a file beside the index
    (one named by a path elsewhere is refused, as diffusers refuses it at its load)."""
    try:
        placed = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        placed = None
    if not isinstance(placed, dict) or not all(isinstance(shard, str) for shard in placed.values()):
        raise UserError(f"{named}: its {index.name} is damaged (no weight_map of tensor names to files)")
    shards = {}
    for shard in sorted(set(placed.values())):
        if Path(shard).name != shard or shard in ("", ".", ".."):
            raise UserError(f"{named}: its {index.name} names {shard!r}, which is no file beside it, as a shard is")
        if not (folder / shard).is_file():
            raise UserError(f"{named}: its {index.name} names {shard}, which is not there")
        shards[shard] = shapes_of(folder / shard, f"{named}: its {shard}")
    for tensor, shard in placed.items():
        if tensor not in shards[shard]:
            raise UserError(f"{named}: its {index.name} places {tensor} in {shard}, which does not hold it")
    return {tensor: shards[shard][tensor] for tensor, shard in placed.items()}


@dataclass(frozen=True)
class Fit:
    """How weights fill a model: its tensors they miss and those of another shape (name, held, the model's), in the
    model's order, among all its tensors; and the tensors they hold that the model has no place for (unused)."""

    every: list[str]
    missing: list[str]
    mismatched: list[tuple[str, list[int], list[int]]]
    unused: list[str]


@contextmanager
def silenced(bars: bool = True) -> Iterator[None]:
    """diffusers', transformers' and the hub's loggers silenced, their errors too (offline, the hub's "Could not reach
    the Hub … Using cached commit hash" at every load), and (where `bars`) diffusers' and transformers' progress bars,
    then as they were: the hub's bars too, which transformers' switch with its own (-q's, off)."""
    from diffusers.utils import logging as diffusers_logging
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
    from huggingface_hub.utils import logging as hub_logging
    from transformers.utils import logging

    hub_off = are_progress_bars_disabled()
    libraries = (diffusers_logging, logging, hub_logging)
    was = [library.get_verbosity() for library in libraries]
    shown = [library for library in (diffusers_logging, logging) if bars and library.is_progress_bar_enabled()]
    for library in libraries:
        library.set_verbosity(library.CRITICAL)
    for library in shown:
        library.disable_progress_bar()
    try:
        with warnings.catch_warnings():  # (diffusers' models still pass the hub an argument it has deprecated)
            warnings.filterwarnings("ignore", "The `local_dir_use_symlinks` argument is deprecated")
            warnings.filterwarnings("ignore", "Initializing zero-element tensors")  # (a config of 0 tokens, built)
            yield
    finally:
        for library, verbosity in zip(libraries, was, strict=True):
            library.set_verbosity(verbosity)
        for library in shown:
            library.enable_progress_bar()
        if hub_off and not are_progress_bars_disabled():
            disable_progress_bars()


def transformers_fit(kind: type, config, held: dict[str, list[int]], named: str) -> Fit:
    """How the weights `held` fill the transformers model `kind` of `config`, as its from_pretrained loads them (its
    renamings, tied and ignored tensors): given as a state dict of meta tensors, loaded on the meta device."""
    import torch

    from musicvid.models.kinds import first_line

    state = {name: torch.empty(shape, device="meta") for name, shape in held.items()}
    try:
        with silenced():
            model, info = kind.from_pretrained(
                None,
                config=config,
                state_dict=state,
                device_map="meta",
                output_loading_info=True,
                ignore_mismatched_sizes=True,
            )
    except Exception as error:  # (a config of values no model has: transformers says so in its own types)
        raise UserError(f"{named}: its config.json describes no {kind.__name__} ({first_line(error)})") from None
    every = list(model.state_dict())
    order = {name: number for number, name in enumerate(every)}
    mismatched = [(name, list(theirs), list(ours)) for name, theirs, ours in info["mismatched_keys"]]

    def place(name: str) -> int:  # (a name the model has not last)
        return order.get(name, len(order))

    missing, unused = sorted(info["missing_keys"], key=place), sorted(info["unexpected_keys"])
    return Fit(every, missing, sorted(mismatched, key=lambda m: place(m[0])), unused)


def diffusers_fit(kind: type, config: dict, held: dict[str, list[int]], named: str) -> Fit:
    """How the weights `held` fill the diffusers model `kind` of `config`, built on the meta device: by name, the
    older attention names as diffusers renames them."""
    import torch

    from musicvid.models.kinds import first_line

    try:
        with torch.device("meta"), silenced():
            model = kind.from_config(config)
    except Exception as error:
        raise UserError(f"{named}: its config.json describes no {kind.__name__} ({first_line(error)})") from None
    shapes = {name: list(tensor.shape) for name, tensor in model.state_dict().items()}
    renamed = {}
    for name, shape in held.items():
        for old, new in LEGACY_ATTENTION.items():
            name = name if name in shapes else name.replace(old, new)
        renamed[name] = shape
    missing = [name for name in shapes if name not in renamed]
    mismatched = [(name, renamed[name], shape) for name, shape in shapes.items() if renamed.get(name, shape) != shape]
    return Fit(list(shapes), missing, mismatched, sorted(name for name in renamed if name not in shapes))


def check_fit(fit: Fit, kind: str, config, named: str, weights: str = "its weights") -> None:
    """Refuse, in one sentence naming `named` and its `weights`, weights that do not fill the model `kind` of
    `config` (its config.json's): a tensor missing, one of another shape, or none of them there."""
    if fit.missing and len(fit.missing) + len(fit.mismatched) == len(fit.every):
        raise UserError(
            f"{named}: {weights} hold none of the tensors of the {kind} its config.json describes ({fit.missing[0]}, "
            "…): they are another model's"
        )
    if fit.missing:
        raise UserError(f"{named}: {weights} hold no {what_is_missing(fit.missing, fit.every, config)}")
    for name, held, shape in fit.mismatched[:1]:
        raise UserError(
            f"{named}: {weights} hold {name} of {' x '.join(map(str, held))}, where the model its config.json "
            f"describes has {' x '.join(map(str, shape))}"
        )
    if layer := layer_left_out(fit.unused, fit.every):
        raise UserError(
            f"{named}: {weights} hold {layer}, a layer the model its config.json describes has not: the config "
            "describes fewer layers than the weights hold, which would be left out"
        )


def layer_left_out(unused: list[str], every: list[str]) -> str | None:
    """The first layer (`transformer.h.1.*`) of the unused tensors that is a layer of the model's kind, numbered past
    its own (its name, numbers aside, one of the model's tensors'); None where none is (a buffer the model no longer
    keeps, as GPT-2's older attn.bias)."""
    unnumbered = lambda name: re.sub(r"\.\d+\.", ".#.", name)  # noqa: E731
    kinds = {unnumbered(name) for name in every}
    for name in unused:
        if unnumbered(name) in kinds and (layer := re.match(r"(.+\.\d+)\.", name)):
            return f"{layer[1]}.*"
    return None


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
