"""A diffusers pipeline's folder (--diffusion DIR, --video-model DIR) checked part by part before any work, as a
ViPE folder is (musicvid.models.vipe_files): each part its model_index.json names, but those the pipeline is loaded
without (SD's safety checker), is a folder there; a model's config.json reads as a JSON object of numbers a model can
have, and its weights (a file, or shards and their index; each variant there: fp16's beside the full ones, or alone)
are whole by their headers and fill the model its config describes, built on the meta device (musicvid.models.
weights_files); a tokenizer holds tokenizer.json or its class's vocabulary files, none empty (vipe_files' rule), a
scheduler a scheduler_config.json its class builds; their JSON files, and a processor's, read as JSON objects. A part
of a library but diffusers (its pipelines' modules too) and transformers is refused: diffusers would import it. A
Stable Diffusion or SDXL UNet takes the VAE's latents alone: an inpainting one is refused. A checkpoint file
(musicvid.models.single_file) holds as many weights for each part as its family's repository's part has, its UNet
reading the latents alone (check_file_parts). A part of a class diffusers lacks is refused. Each
damage is refused in one sentence naming the part and the file, not as the model loads after the storyboard, or
leaves a layer empty."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import math
import re
import typing
from collections.abc import Callable, Iterable
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import model_files
from musicvid.core.paths import file_version
from musicvid.models.families import video_pipeline
from musicvid.models.kinds import as_unavailable
from musicvid.models.loading import pipeline_class
from musicvid.models.local_names import refuse_offline
from musicvid.models.names import check_model, repository_config
from musicvid.models.single_file import FILE_PARTS, UNET, header
from musicvid.models.vipe_files import TOKENIZER, check_vocabulary, holds_tokenizer
from musicvid.models.weights_files import (
    check_fit,
    diffusers_fit,
    json_object,
    safetensors_twin,
    shapes_of,
    sharded,
    silenced,
    transformers_fit,
)
from musicvid.settings.presets import CONFIG_REPOSITORIES, FAMILY_NAMES, FLOW_FAMILIES
from vipe_core.guards import impossible_number

LATENTS = 4  # the channels of Stable Diffusion's and SDXL's latents, which --fast decodes
UPSCALE = 8  # how many times the latents' size their VAEs' pictures are
CHECKED: set[tuple] = set()  # the picture models found whole, each by the version of its files
# The parts a picture model's pipeline draws with (those it may go without: a safety checker, an image encoder)
MOST_TIMESTEPS = 100_000  # a scheduler's training steps: every published one's are 1,000
DRAWN_WITH = {"unet", "transformer", "vae", "text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2", "scheduler"}
# The names each library's from_pretrained gives a model's weights (a variant's: diffusion_pytorch_model.fp16....)
WEIGHTS_STEMS = {"diffusers": ("diffusion_pytorch_model",), "transformers": ("model", "pytorch_model")}


def check_picture_model(name: str, family: str) -> None:
    """The picture model `name` (of `family`)'s own files, where it is on this machine: a folder part by part, but
    those its pipeline is loaded without; a checkpoint file's parts counted (module doc)."""

    def check(path: Path, named: str) -> None:
        if path.is_dir():
            without = [part for part, given in pipeline_class(family)[1].items() if given is None]
            check_pipeline_folder(path, named, without)
            check_drawing_parts(path, named, pipeline_class(family)[0])
            if family not in FLOW_FAMILIES:
                check_text_to_image(path, named)
                check_prompts_fit(path, named)
        else:
            check_file_parts(path, family, named)

    check_once(name, "--diffusion", check)


def check_video_model_files(name: str) -> None:
    """The video model `name`'s own folder (of --transitions video), where it is one on this machine, part by part:
    each its model_index.json names, as its pipeline loads them all."""

    def check(path: Path, named: str) -> None:
        check_pipeline_folder(path, named, ())
        check_drawing_parts(path, named, video_pipeline(name))

    check_once(name, "--video-model", check)


def check_fast_decoder(name: str, family: str) -> None:
    """--fast's tiny decoder `name`, for the picture model of `family`: its config (check_model's, read from a folder
    or the cache; offline, a name not there is refused) of an AutoencoderTiny that decodes that family's latents, of
    LATENTS channels, to pictures as many times their size as the VAE does (UPSCALE: its upsampling factor to the
    power of its decoder's blocks less one; 0 failed after the storyboard), and a folder's weights part by part."""
    decoder, named = check_model("decoder", name), f"--fast-decoder {name}"
    if decoder is None:  # built here, or not in the cache
        refuse_offline("--fast-decoder", name, name, "config.json")
        return
    if (channels := decoder.get("latent_channels", LATENTS)) != LATENTS:  # (TAEF1's 16: FLUX's)
        raise UserError(
            f"{named} decodes latents of {channels} channels, where {FAMILY_NAMES[family]} draws {LATENTS} (TAESD and "
            "TAESDXL are its tiny decoders)"
        )
    factor, blocks = decoder.get("upsampling_scaling_factor", 2), decoder.get("decoder_block_out_channels", [0] * 4)
    if not isinstance(factor, int) or not isinstance(blocks, list) or factor ** (len(blocks) - 1) != UPSCALE:
        raise UserError(
            f"{named}: its config.json's upsampling_scaling_factor {factor} over {len(blocks)} decoder blocks does "
            f"not make pictures {UPSCALE} times the latents' size, as {FAMILY_NAMES[family]}'s VAE does"
        )
    check_once(name, "--fast-decoder", lambda path, named: check_part(path, "diffusers", "AutoencoderTiny", named))


def check_once(name: str, flag: str, check: Callable[[Path, str], None]) -> None:
    """`check` the model `name` (given with the option `flag`) where it is on this machine: its path, and how the
    refusal names it. Once per version of its files in a process: a batch checks each row's run."""
    path, named = Path(name).expanduser(), f"{flag} {name}"
    if not path.exists():
        return
    files = model_files(path) if path.is_dir() else [path]
    version = (named, *((str(file), file_version(file.stat())) for file in files))
    if version in CHECKED:
        return
    check(path, named)
    CHECKED.add(version)


def check_pipeline_folder(folder: Path, named: str, without: Iterable[str]) -> None:
    """Refuse, in one sentence, a pipeline folder (module doc; `named`: how its option names it) a part of which is
    not there or damaged; the parts in `without` are not loaded."""
    for part, names in json_object(folder / "model_index.json", named).items():
        if part.startswith("_") or part in without or not is_part(names):
            continue  # (a setting, or a part the pipeline goes without: [null, null])
        library, class_name = names
        if not (folder / part).is_dir():
            raise UserError(
                f"{named}: its model_index.json names a {part} ({class_name}), and there is no {part}/ folder"
            )
        check_part(folder / part, library, class_name, f"{named}'s {part}")


def check_drawing_parts(folder: Path, named: str, kind: type) -> None:
    """Refuse a model's folder that goes without a part its pipeline (`kind`) draws with (DRAWN_WITH; the image
    encoder of a transformer that reads image embeddings, Wan 2.1's), or whose text encoder is of another class than
    the pipeline takes: diffusers loads an SDXL folder whose model_index.json gives text_encoder_2 as [null, null] (a
    refiner's, or one saved without it), or as a CLIPTextModel without SDXL's projection, and the first prompt fails."""
    index = json_object(folder / "model_index.json", named)
    transformer = folder / "transformer" / "config.json"
    images = transformer.is_file() and json_object(transformer, f"{named}'s transformer").get("image_dim") is not None
    takes = inspect.signature(kind.__init__).parameters
    for part in sorted((DRAWN_WITH | ({"image_encoder"} if images else set())) & set(takes)):
        if not is_part(index.get(part)):
            raise UserError(f"{named}: its model_index.json gives no {part}, which {kind.__name__} draws with")
    hints = typing.get_type_hints(kind.__init__)
    for part in (part for part in takes if part.startswith("text_encoder") and is_part(index.get(part))):
        given, wanted = part_class(*index[part]), hints.get(part)
        if isinstance(wanted, type) and isinstance(given, type) and not issubclass(given, wanted):
            raise UserError(
                f"{named}'s {part} is a {given.__name__}, where {kind.__name__} draws with a {wanted.__name__}"
            )


def check_text_to_image(folder: Path, named: str) -> None:
    """Refuse a UNet that takes more than the VAE's latents (an inpainting one takes 9 channels: the latents, the
    masked picture's and the mask), whatever pipeline class its model_index.json names: it fails as it draws."""
    takes = json_object(folder / "unet" / "config.json", f"{named}'s unet").get("in_channels", 4)
    latents = json_object(folder / "vae" / "config.json", f"{named}'s vae").get("latent_channels", 4)
    check_channels(takes, latents, f"{named}'s unet", "its vae's")


def check_prompts_fit(folder: Path, named: str) -> None:
    """Refuse a CLIP tokenizer that makes what its text encoder cannot read: a token past the encoder's vocabulary (one
    added to the tokenizer alone: its prompt fails as it is drawn, after the storyboard), or prompts longer than its
    positions (diffusers pads every prompt to the tokenizer's model_max_length)."""
    from musicvid.models.kinds import first_line

    index = json_object(folder / "model_index.json", named)
    for tokenizer, encoder in (("tokenizer", "text_encoder"), ("tokenizer_2", "text_encoder_2")):
        if not (is_part(index.get(tokenizer)) and is_part(index.get(encoder))):
            continue
        config = json_object(folder / encoder / "config.json", f"{named}'s {encoder}")
        try:
            with silenced():
                read = part_class(*index[tokenizer]).from_pretrained(str(folder / tokenizer))
        except Exception as error:  # (transformers' own types: a file not JSON, a class it lacks)
            raise UserError(f"{named}'s {tokenizer} cannot be read ({first_line(error)})") from None
        words, positions = config.get("vocab_size"), config.get("max_position_embeddings")
        if isinstance(words, int) and len(read) > words:
            raise UserError(
                f"{named}'s {tokenizer} holds {len(read)} tokens, and its {encoder} reads {words}: a token added to the "
                "tokenizer alone (add it to the text encoder too, or give the tokenizer it was trained with)"
            )
        if isinstance(positions, int) and read.model_max_length > positions:
            said = (
                f"{read.model_max_length} tokens"
                if read.model_max_length < 2**31
                else "no length (no model_max_length)"
            )
            raise UserError(
                f"{named}'s {tokenizer} makes prompts of {said}, and its {encoder} reads {positions} at most: set its "
                f"tokenizer_config.json's model_max_length to {positions}"
            )


def check_channels(takes: int, latents: int, unet: str, vae: str) -> None:
    """Refuse a UNet (named `unet`) whose input channels are not the latents' of the VAE (named `vae`)."""
    if takes != latents:
        what = "an inpainting model" if takes == 2 * latents + 1 else "a model drawn over a picture"
        raise UserError(
            f"{unet} takes {takes} input channels, where {vae} latents have {latents}: {what}, not a text-to-image one"
        )


def is_part(names) -> bool:
    return isinstance(names, list) and len(names) == 2 and all(isinstance(name, str) for name in names)


def part_class(library: str, class_name: str) -> type | None:
    """The class model_index.json names a part by: of diffusers or transformers, or of a module of diffusers'
    pipelines, as diffusers' load finds it (LTX-2's connectors are ltx2's); None where there is none such."""
    import diffusers.pipelines

    if library in WEIGHTS_STEMS:
        module = importlib.import_module(library)
    elif is_pipeline_module(library):
        module = getattr(diffusers.pipelines, library)
    else:
        return None
    return getattr(module, class_name, None)


def is_pipeline_module(library: str) -> bool:
    import diffusers.pipelines

    return library.isidentifier() and hasattr(diffusers.pipelines, library)


def check_part(folder: Path, library: str, class_name: str, named: str) -> None:
    """One part: a model's config and weights, a tokenizer's files, another's JSON files (module doc)."""
    from diffusers import ModelMixin
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    if library not in WEIGHTS_STEMS and not is_pipeline_module(library):  # (diffusers would import any module)
        raise UserError(
            f"{named} is of the library {library!r} ({class_name}), which musicvid loads no part from (diffusers, its "
            "pipelines' modules and transformers are)"
        )
    kind = part_class(library, class_name)
    if library == "transformers" and class_name.startswith("Auto"):  # (diffusers loads it without trust_remote_code)
        for file in sorted(folder.glob("*.json")):
            if "auto_map" in json_object(file, named):
                raise UserError(
                    f"{named}: its {file.name} names code of its own to run (auto_map, for its {class_name}), which "
                    "musicvid never runs"
                )
    if kind is None and library != "transformers":  # (transformers' older names, CLIPFeatureExtractor, diffusers maps)
        version = importlib.metadata.version("diffusers")
        raise UserError(
            f"{named} is a {class_name}, a class diffusers {version} does not have (saved by a newer diffusers?)"
        )
    if kind is not None and issubclass(kind, PreTrainedTokenizerBase):
        check_tokenizer_files(folder, kind, class_name, named)
    if kind is None or not issubclass(kind, (ModelMixin, PreTrainedModel)):
        check_settings_part(folder, kind, class_name, named)
        return
    config = json_object(folder / "config.json", named)
    bad = impossible_number(config)
    if bad is not None:
        raise UserError(f"{named}: its config.json's {bad[0]} is {bad[1]}, not a number a model can have")
    if issubclass(kind, PreTrainedModel):
        config = transformers_config(kind, folder, named)
    for weights in weights_of(folder, WEIGHTS_STEMS.get(library, WEIGHTS_STEMS["diffusers"]), named):
        held = (
            sharded(folder, weights, named)
            if ".index" in weights.name
            else shapes_of(weights, f"{named}: its {weights.name}")
        )
        fits = transformers_fit if issubclass(kind, PreTrainedModel) else diffusers_fit
        check_fit(fits(kind, config, held, named), class_name, config, named, f"the weights in its {weights.name}")


def check_tokenizer_files(folder: Path, kind: type, class_name: str, named: str) -> None:
    """A tokenizer part holds tokenizer.json or its class's vocabulary files, each holding tokens (vipe_files)."""
    vocabulary = tuple(name for name in kind.vocab_files_names.values() if name != TOKENIZER)
    if not holds_tokenizer(folder, vocabulary):
        besides = f", nor {' and '.join(vocabulary)}" if vocabulary else ""
        raise UserError(f"{named} holds no {TOKENIZER}{besides}: the files a {class_name} is read from")
    check_vocabulary(folder, named, (TOKENIZER, *vocabulary))


def check_settings_part(folder: Path, kind: type | None, class_name: str, named: str) -> None:
    """A part of settings alone (a scheduler, a tokenizer's or a processor's JSON files): each JSON file an object
    of numbers (infinities allowed: DPMSolver's lambda_min_clipped is -inf; NaN draws NaN pictures), and a scheduler
    one its class builds (0 training timesteps would fail as the pipeline loads, after the storyboard)."""
    from diffusers import SchedulerMixin

    from musicvid.models.kinds import first_line

    config_name = getattr(kind, "config_name", None)  # (a scheduler's: scheduler_config.json)
    for file in [folder / config_name] if config_name else sorted(folder.glob("*.json")):
        config = json_object(file, named)
        if (bad := impossible_number(config, infinite=True)) is not None:
            raise UserError(f"{named}: its {file.name}'s {bad[0]} is {bad[1]}, not a number a model can have")
        if kind is not None and issubclass(kind, SchedulerMixin):
            steps = config.get("num_train_timesteps")
            if isinstance(steps, int) and steps > MOST_TIMESTEPS:  # (its schedule is built as it is read: 4 GB at 10⁹)
                raise UserError(
                    f"{named}: its {file.name}'s num_train_timesteps is {steps:,}; the published schedulers are trained "
                    f"over 1,000, and musicvid takes at most {MOST_TIMESTEPS:,}"
                )
            try:
                with silenced():
                    kind.from_config(config)
            except Exception as error:  # (a scheduler says a setting it cannot take in its own error types)
                raise UserError(f"{named}: its {file.name} describes no {class_name} ({first_line(error)})") from None


def transformers_config(kind: type, folder: Path, named: str):
    """The part's config as its class reads it, its values of the types the class needs."""
    from musicvid.models.kinds import first_line

    try:
        return kind.config_class.from_pretrained(str(folder))
    except Exception as error:  # (transformers' strict configs say a wrong type in their own error types)
        raise UserError(f"{named}: its config.json describes no {kind.__name__} ({first_line(error)})") from None


def weights_of(folder: Path, stems: tuple[str, ...], named: str) -> list[Path]:
    """The part's weights files and shard indexes by its library's names, each variant's too; refused where there
    are none."""
    stem = "|".join(stems)
    single = re.compile(rf"({stem})(\.[^.-]+)?\.(safetensors|bin)")
    index = re.compile(rf"({stem})\.(safetensors|bin)\.index(\.[^.]+)?\.json")
    found = [path for path in sorted(folder.iterdir()) if single.fullmatch(path.name) or index.fullmatch(path.name)]
    # a .bin beside its .safetensors is never read (a clone that fetched the safetensors alone holds its pointer)
    names = {path.name for path in found}
    found = [path for path in found if ".bin" not in path.name or safetensors_twin(path.name) not in names]
    if not found:
        raise UserError(
            f"{named} holds no weights: no {stems[0]}.safetensors, nor its shards and their index, nor a .bin"
        )
    return found


def check_file_parts(path: Path, family: str, named: str) -> None:
    """Refuse a checkpoint file of `family` a part of which holds fewer weights than its family's repository's part
    (its config built on the meta device) has: a file missing layers, which diffusers would leave empty. Counted, not
    named: diffusers' conversion of a file's names renames, splits and joins its tensors, and drops no weight."""
    repository = CONFIG_REPOSITORIES[family]
    shapes = header(path, named)
    first = shapes.get(f"{UNET}input_blocks.0.0.weight")
    if first is not None and len(first) == 4:  # (an SD or SDXL UNet: its first convolution reads the latents)
        with as_unavailable("diffusion", repository):
            latents = repository_config(repository, "vae/config.json").get("latent_channels", 4)
        check_channels(first[1], latents, f"{named}'s unet", f"{repository}'s vae's")
    for part, prefix in FILE_PARTS[family].items():
        held = sum(math.prod(shape) for key, shape in shapes.items() if key.startswith(prefix))
        with as_unavailable("diffusion", repository):  # (its configs, which its load takes too: fetched once)
            needed = part_size(repository, part, repository_config(repository, "model_index.json")[part])
        if held < needed:
            raise UserError(
                f"{named} holds {held:,} weights for the {part}, where {repository}'s {part} has {needed:,}: it is "
                "missing layers"
            )


def part_size(repository: str, part: str, names: list[str]) -> int:
    """How many weights (parameters and buffers, tied ones once) a part of `repository` has, built on the meta
    device from its config."""
    import torch

    kind, config = part_class(*names), repository_config(repository, f"{part}/config.json")
    with torch.device("meta"), silenced():
        model = kind.from_config(config) if names[0] == "diffusers" else kind(kind.config_class.from_dict(config))
    return sum({id(tensor): tensor.numel() for tensor in model.state_dict(keep_vars=True).values()}.values())
