"""A model as a person names it (--scorer, --vipe, --diffusion, --fast-decoder, --video-model, or a scorer a work
directory's records name), checked before anything loads: not a URL; a folder that is there where a path is named;
and a checkpoint of its role's family, as its config says (config.json; a pipeline's model_index.json), read from
the folder or, for a hub name, from the Hugging Face cache where it is there. Nothing is downloaded here: a hub
name not in the cache is taken as named, and loading it says what it is. Nothing here imports torch, but the checks
of a ViPE folder, a ViPE tokenizer and a scorer folder's weights do (musicvid.models.vipe_files, weights_files).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from musicvid.core.errors import UserError
from musicvid.models.local_names import (
    cached_file,
    check_leads_somewhere,
    check_not_url,
    is_hub_name,
    is_weights_file,
    unavailable,
)
from musicvid.models.single_file import check_transformer_fits, header, single_file_family, torch_archive
from musicvid.models.vipe_files import (
    TOKENIZER,
    check_folder_fit,
    check_tokenizer_fits,
    check_vipe_folder,
    check_vocabulary,
    holds_tokenizer,
    refuse_training,
    tokenizer_folder,
)
from musicvid.models.weights_files import silenced
from musicvid.settings.presets import (
    CONFIG_REPOSITORIES,
    FLOW_FAMILIES,
    PIPELINE_FAMILIES,
    TINY,
    VIDEO_FAMILY_NAMES,
    VIDEO_PIPELINES,
)
from vipe_core.errors import VipeError
from vipe_core.released import DEFAULT_VIPE_TOKENIZER, trained_context


def what_it_is(config: dict) -> str:
    """What a config says its checkpoint is: its architecture, its model type or its pipeline; an architecture with
    its model type where that is none of its name (a CLIPModel of model_type 'siglip', or of none)."""
    named, typed = config.get("architectures"), config.get("model_type")
    if isinstance(named, list) and named and str(typed).replace("_", "").lower() not in str(named[0]).lower():
        return f"{named[0]} of model_type {typed!r}" if typed else f"{named[0]} of no model_type"
    named = named[0] if isinstance(named, list) and named else typed or config.get("_class_name")
    return str(named) if named else "checkpoint of no kind its config names"


def clip_model(config: dict) -> bool:
    return config.get("model_type") == "clip"


def causal_lm(config: dict) -> bool:
    """ViPE is loaded as a causal language model (AutoModelForCausalLM): GPT-2's LM head, or any other."""
    named = config.get("architectures")
    return (
        not isinstance(named, list) or not named or any(str(a).endswith(("ForCausalLM", "LMHeadModel")) for a in named)
    )


@dataclass(frozen=True)
class Role:
    """What a role's model must be: the option that names it, the file that says what a checkpoint is, the
    family in words and the test of its config, and the layout a folder of it has."""

    flag: str
    config: str
    family: str
    fits: Callable[[dict], bool]
    layout: str


TRANSFORMERS = "transformers' layout (with config.json)"
DIFFUSERS = "diffusers' layout (with model_index.json)"
ROLES = {
    "scorer": Role("--scorer", "config.json", "a CLIP model (model_type clip)", clip_model, TRANSFORMERS),
    "vipe": Role("--vipe", "config.json", "a causal language model, as ViPE is (GPT-2's)", causal_lm, TRANSFORMERS),
    "diffusion": Role(
        "--diffusion",
        "model_index.json",
        "a Stable Diffusion 1.x/2.x, SDXL, Z-Image or FLUX.2 klein text-to-image model",
        lambda config: config.get("_class_name") in PIPELINE_FAMILIES,
        DIFFUSERS,
    ),
    "decoder": Role(
        "--fast-decoder",
        "config.json",
        "a tiny autoencoder (AutoencoderTiny), as TAESD is",
        lambda config: config.get("_class_name") == "AutoencoderTiny",
        "diffusers' layout (with config.json)",
    ),
    "video": Role(
        "--video-model",
        "model_index.json",
        f"an {', '.join(list(VIDEO_FAMILY_NAMES.values())[:-1])} or {list(VIDEO_FAMILY_NAMES.values())[-1]} pipeline "
        "(first and last frame to video), which --transitions video draws with",
        lambda config: config.get("_class_name") in VIDEO_PIPELINES,
        DIFFUSERS,
    ),
}


def check_model(role: str, name: str, named: str | None = None) -> dict | None:
    """Refuse, in one sentence, a model `name` that cannot be `role`'s (module doc; `named`: how the message
    names it, by default as its option does); returns its config where it was read, None where it was not (a
    model built here, or a hub name not in the cache)."""
    if name == TINY:
        return None
    kind, named = ROLES[role], named or f"{ROLES[role].flag} {name}"
    check_not_url(named, name)
    folder = Path(name).expanduser()
    if role == "vipe":  # first: a save in progress may leave no folder there, or half of one
        refuse_training(folder, named)
    if folder.is_dir():
        file = folder / kind.config
        if not file.is_file():
            if role == "vipe" and (folder / "best" / kind.config).is_file():  # (vipe evaluate takes it so)
                raise UserError(f"{named} is a `vipe train` run's folder: give its checkpoint, {folder / 'best'}")
            raise UserError(f"{named} holds no {kind.config}: give a folder in {kind.layout}, or a hub name")
    elif folder.exists():
        if role != "diffusion":
            raise UserError(f"{named} is a single file; give a folder in {kind.layout}")
        return checkpoint_index(name, named)
    else:
        check_leads_somewhere(named, name)
        if is_weights_file(name):  # a file typed wrong, not a hub name to fetch
            raise UserError(f"{named}: there is no such file")
        if not is_hub_name(name):
            raise UserError(f"{named}: there is no such folder (a hub name is owner/name)")
        cached = cached_file(name, kind.config)
        if cached is None:
            return None
        file = Path(cached)
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise UserError(f"{named}: its {kind.config} is not JSON, so it is no model in {kind.layout}") from None
    config = check_family(role, config if isinstance(config, dict) else {}, named)
    if folder.is_dir() and kind.layout == TRANSFORMERS:
        check_weights(folder, config, named)
    if folder.is_dir() and role == "vipe":
        check_vipe_folder(folder, config, named)
    if folder.is_dir() and role == "scorer":
        check_scorer_folder(folder, named)
    return config


PREPROCESSOR = "preprocessor_config.json"  # (a CLIP processor's for its pictures)


def check_scorer_folder(folder: Path, named: str) -> None:
    """A CLIP scorer's folder holds what its processor reads, beside its model: the pictures' preprocessor_config.json
    and the text's tokenizer (CLIP's: tokenizer.json, or vocab.json and merges.txt); and weights that fill the
    CLIPModel its config describes (built on the meta device: a size no model has is refused too)."""
    from transformers import CLIPModel, CLIPProcessor

    from musicvid.models.kinds import first_line

    if not (folder / PREPROCESSOR).is_file():
        raise UserError(f"{named} holds no {PREPROCESSOR}: the settings its pictures are read with")
    if not holds_tokenizer(folder):
        raise UserError(f"{named} holds no {TOKENIZER}, nor vocab.json and merges.txt: its texts' tokenizer")
    check_vocabulary(folder, named)
    described = check_folder_fit(folder, CLIPModel, named)
    try:
        with silenced():
            tokens = len(CLIPProcessor.from_pretrained(str(folder), trust_remote_code=False).tokenizer)
    except Exception as error:  # (transformers' own types: a file not JSON, a class it lacks, code of the folder's)
        raise UserError(
            f"{named}: its processor cannot be read from its {PREPROCESSOR} and tokenizer ({first_line(error)})"
        ) from None
    words = described.text_config.vocab_size
    if tokens > words:
        raise UserError(
            f"{named}: its tokenizer's vocabulary ({tokens}) is larger than its text model's ({words}): another model's"
        )


# The PyTorch files transformers reads where no variant is asked for (ViPE's load asks none) and no model.safetensors
# (or its index) is there: a whole file or a shard
_UNVARIED = re.compile(r"pytorch_model(-\d+-of-\d+)?\.bin")


def check_weights(folder: Path, config: dict, named: str) -> None:
    """A model folder's weights as their headers declare them, no tensor read: each safetensors file whole (one cut
    short by a copy or a download is refused now, not at its load after the song's analysis), each PyTorch file a
    whole zip archive (where no model.safetensors is there, which transformers reads instead), and the token embedding as wide as the config says (GPT-2's `n_embd`, `vocab_size`)."""
    for weights in sorted(folder.glob("*.safetensors")):
        shapes = header(weights, f"{named}: its {weights.name}")
        embedding = next((shape for key, shape in shapes.items() if key.endswith("wte.weight")), None)
        said = [config.get("vocab_size"), config.get("n_embd")]
        if embedding is not None and all(isinstance(n, int) for n in said) and embedding != said:
            raise UserError(
                f"{named}: its {weights.name} holds token embeddings of {embedding[0]} x {embedding[1]}, and its "
                f"config.json says {said[0]} x {said[1]}"
            )
    if any((folder / name).is_file() for name in ("model.safetensors", "model.safetensors.index.json")):
        return  # (transformers reads them: a .bin beside them, maybe a clone's LFS pointer, never)
    for weights in sorted(path for path in folder.glob("pytorch_model*.bin") if _UNVARIED.fullmatch(path.name)):
        torch_archive(weights, f"{named}: its {weights.name}")  # (a whole archive; an older pickle is read as it loads)


def checkpoint_index(name: str, named: str) -> dict:
    """The model index a diffusion checkpoint file stands for (musicvid.models.single_file): its family's pipeline,
    whose configs come from the family's repository; refused where that repository cannot be had."""
    family = single_file_family(name, named)
    repository = CONFIG_REPOSITORIES[family]
    missing = unavailable(repository, "model_index.json")
    if missing:
        raise UserError(f"{named} takes its configs from {repository}, but {missing}")
    if family in FLOW_FAMILIES:  # its transformer alone: the rest is the repository's, and must fit it
        check_transformer_fits(
            name, family, repository_config(repository, "transformer/config.json"), repository, named
        )
    return {"_class_name": next(kind for kind, of in PIPELINE_FAMILIES.items() if of == family)}


def repository_config(repository: str, file: str) -> dict:
    """A config file of a hub repository: from the cache, else fetched alone (a few hundred bytes)."""
    from huggingface_hub import hf_hub_download

    with open(hf_hub_download(repository, file), encoding="utf-8") as opened:
        return json.load(opened)


def check_family(role: str, config: dict, named: str) -> dict:
    """`config` if it is of `role`'s family, else one sentence saying what it is instead."""
    kind = ROLES[role]
    if not kind.fits(config):
        what = what_it_is(config)
        raise UserError(f"{named} is {'an' if what[0] in 'AEIOaeio' else 'a'} {what}, not {kind.family}")
    return config


def vipe_context(vipe: str) -> int:
    """How many lyric lines before each line the ViPE checkpoint `vipe` was trained to read
    (vipe_core.released.trained_context); a record that cannot say is refused in one sentence."""
    try:
        return trained_context(vipe)
    except VipeError as error:
        raise UserError(f"--vipe {vipe}: {str(error).rstrip('.')}") from None


def check_vipe_tokenizer(vipe: str, tokenizer: str | None, config: dict | None) -> None:
    """The tokenizer ViPE `vipe` (its config.json: `config`, None where it was not read) is to read with, checked
    before any work where it is named (--vipe-tokenizer) or a --vipe folder's (its own, else GPT-2 Medium's): a
    folder holding a GPT-2 tokenizer, or a hub name the cache holds where HF_HUB_OFFLINE keeps the run from the
    hub, whose vocabulary and end-of-text id fit the model's; refused in one sentence naming the option that is
    wrong."""
    from vipe_core.inference import ships_tokenizer

    folder = Path(vipe).expanduser()
    advice, named = "use the tokenizer the model was trained with", f"--vipe-tokenizer {tokenizer}"
    if tokenizer is None and not folder.is_dir():
        return  # (a hub model's own, or GPT-2 Medium's: its load compares them)
    if tokenizer is None and ships_tokenizer(str(folder)):
        tokenizer, named = str(folder), f"--vipe {vipe}'s own tokenizer"
    elif tokenizer is None:
        tokenizer = DEFAULT_VIPE_TOKENIZER
        named = f"the tokenizer --vipe {vipe} takes for want of its own, {tokenizer}"
        advice += " (--vipe-tokenizer NAME_OR_DIR)"
    if Path(tokenizer).expanduser().is_dir():
        tokenizer = str(Path(tokenizer).expanduser())
        tokenizer_folder(Path(tokenizer), named)
    elif Path(tokenizer).expanduser().exists():
        raise UserError(f"{named} is a single file; give a tokenizer's folder (with tokenizer.json) or a hub name")
    else:
        check_leads_somewhere(named, tokenizer)
        if not is_hub_name(tokenizer):
            raise UserError(f"{named}: there is no such folder (a hub name is owner/name)")
        if not any(cached_file(tokenizer, file) for file in ("tokenizer.json", "vocab.json")):
            if missing := unavailable(tokenizer, "tokenizer.json"):
                raise UserError(f"{named}: {missing}")
            return  # (downloads are on, and it is not here yet: its load fetches it and compares)
    check_tokenizer_fits(tokenizer, config, vipe, named, advice)
