"""A diffusion model as one file: the `.safetensors` checkpoint a model site gives. What it holds (a model, or a LoRA
or a VAE alone), then its family, are read from the names and shapes in its header alone (no weight is loaded), and
its configs and tokenizers come from the family's repository (CONFIG_REPOSITORIES), from the model cache or
downloaded once; diffusers' `from_single_file` then loads it (musicvid.models.loading). docs/models.md, "Your own
checkpoint".

What the original (Stability's) layout names, by family:
- SD 1.x: `model.diffusion_model.*` beside `cond_stage_model.transformer.*`, CLIP ViT-L/14's text encoder, as
  wide as the UNet's cross-attention reads (768);
- SDXL: `model.diffusion_model.*` beside `conditioner.embedders.0.*` and `.1.*` (CLIP ViT-L and OpenCLIP bigG).
A Z-Image or FLUX.2 klein file is its transformer alone (what model sites give; the text encoder and the VAE are
its repository's), in its authors' layout or diffusers', perhaps under `model.diffusion_model.`: Z-Image's has
`layers.*` beside `context_refiner.*`, FLUX.2's one `single_stream_modulation` for all its single blocks. Its
sizes must be those of the repository's transformer (check_transformer_fits).
Anything else is refused in one sentence that says what the file holds, where its names say so; a LoRA is checked so
too (musicvid.models.lora_files).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import check_file
from musicvid.core.paths import file_version
from musicvid.settings.presets import CONFIG_REPOSITORIES, FAMILY_NAMES

SUFFIX = ".safetensors"
LEGACY_SUFFIX = ".bin"  # diffusers' pytorch_lora_weights.bin, loaded with torch.load
HEADERS: dict[tuple, dict[str, list[int]]] = {}  # each file's header by its version (path, size, time), read once
UNET = "model.diffusion_model."
# SD 1.x's cross-attention reads the text encoder's last hidden states: as wide as its final LayerNorm
CROSS_ATTENTION = ".attn2.to_k.weight"
TEXT_WIDTH = "cond_stage_model.transformer.text_model.final_layer_norm.weight"
# Where each part of a family's pipeline is in its file, by how its names start (a flow-matching family's file is its
# transformer alone: every name)
VAE = "first_stage_model."
FILE_PARTS = {
    "sd": {"unet": UNET, "vae": VAE, "text_encoder": "cond_stage_model.transformer."},
    "sdxl": {
        "unet": UNET,
        "vae": VAE,
        "text_encoder": "conditioner.embedders.0.transformer.",
        "text_encoder_2": "conditioner.embedders.1.model.",
    },
    "zimage": {"transformer": ""},
    "klein": {"transformer": ""},
}
# The flow-matching families' transformers: diffusers' classes, and names only theirs have (after any
# `model.diffusion_model.`)
TRANSFORMER_CLASSES = {"zimage": "ZImageTransformer2DModel", "klein": "Flux2Transformer2DModel"}
FLOW_TRANSFORMERS = {
    "zimage": ("layers.0.adaLN_modulation.0.weight", "context_refiner.0."),
    "klein": ("single_stream_modulation.",),
}
# What a file holds that is no model, judged before its family (a LoRA of a family's transformer is named as its
# layers are, under its authors' names or diffusers'): by a part of a name only that kind has, or how names start
LORA = "a LoRA (give it with --lora)"
KINDS = (
    *((part, LORA) for part in (".lora_down.", ".lora_up.", ".lora_A.", ".lora_B.", "lora_unet_", "lora_te")),
    *((part, LORA) for part in (".lora.down.", ".lora.up.")),  # diffusers' attention processors' (save_attn_procs)
    *((part, LORA) for part in (".lokr_w1", ".hada_w1_a", "lora_transformer_")),  # LyCORIS's, kohya's for DiTs
    ("encoder.down.", "a VAE alone"),
    ("encoder.down_blocks.", "a VAE alone"),
)
# What a file of none of the families holds, by a name only it has: (prefix or part, what it is)
OTHERS = (
    ("cond_stage_model.model.", "a Stable Diffusion 2.x checkpoint"),
    ("conditioner.embedders.0.model.", "the SDXL refiner"),
    ("double_blocks.", "a FLUX.1 transformer"),
    ("single_transformer_blocks.", "a FLUX.1 transformer"),
    # (many SD 1.x merges of 2022: AUTOMATIC1111's web UI renames their text encoders as it loads; diffusers does not)
    (
        "cond_stage_model.transformer.embeddings.",
        "a checkpoint whose text encoder is named the older way (cond_stage_model.transformer.embeddings.*, without "
        "text_model.), which diffusers does not load",
    ),
    ("cond_stage_model.transformer.", "a checkpoint whose text encoder does not fit its UNet"),
    (VAE, "a checkpoint without its text encoder"),
    (UNET, "a UNet without its VAE and text encoder"),
)


# What a checkpoint's marker tensors (empty, named alone) say of how it was trained, which its layout does not: the
# scheduler settings each asks for. v-prediction SDXL files (NoobAI-XL's) carry `v_pred`, and `ztsnr` where trained
# to zero terminal SNR; diffusers' from_single_file reads neither, and would sample them as epsilon models.
TRAINING_MARKS = {
    "v_pred": {"prediction_type": "v_prediction"},
    "ztsnr": {"rescale_betas_zero_snr": True, "timestep_spacing": "trailing"},
}


def trained_with(shapes: dict[str, list[int]]) -> dict:
    """The scheduler settings a checkpoint's marker tensors ask for (TRAINING_MARKS); {} for none."""
    return {key: value for mark, said in TRAINING_MARKS.items() if mark in shapes for key, value in said.items()}


def load_single_file(kind: type, family: str, path: Path, dtype, extra: dict, named: str):
    """The picture model of pipeline class `kind` from the checkpoint file `path`, by diffusers' `from_single_file`,
    its configs from its family's repository (CONFIG_REPOSITORIES); a flow-matching family's file is its transformer,
    the rest of its pipeline the repository's. A transformer whose every name sits under `model.diffusion_model.` (as
    ComfyUI saves them) is handed over without the prefix, which diffusers' FLUX.2 converter reads as a block's number
    (diffusers 0.42.1); a checkpoint's TRAINING_MARKS set its sampler."""
    import diffusers

    config = CONFIG_REPOSITORIES[family]
    if family in FLOW_TRANSFORMERS:
        checkpoint: str | dict = str(path)
        if all(key.startswith(UNET) for key in header(path, named)):
            from safetensors.torch import load_file

            checkpoint = {key.removeprefix(UNET): tensor for key, tensor in load_file(path).items()}
        transformer_class = getattr(diffusers, TRANSFORMER_CLASSES[family])
        transformer = transformer_class.from_single_file(
            checkpoint, config=config, subfolder="transformer", dtype=dtype
        )
        return kind.from_pretrained(config, transformer=transformer, dtype=dtype)
    pipe = kind.from_single_file(str(path), config=config, dtype=dtype, **extra)
    if marks := trained_with(header(path, named)):  # (DDIM's config holds them all)
        pipe.scheduler = diffusers.DDIMScheduler.from_config(pipe.scheduler.config, **marks)
    return pipe


def is_single_file(name: str) -> bool:
    """Whether the model `name` is a file on this machine (not a folder, not a hub name)."""
    return Path(name).expanduser().is_file()


def header(path: Path, named: str) -> dict[str, list[int]]:
    """The tensors' names and shapes a safetensors file declares, read from its header alone, once it is found to be
    a file (a named pipe would hold the read); once per version of the file in a process (its checks, then its memory
    plan, read it)."""
    try:
        status = path.stat()
        version = (path.resolve(), file_version(status))
    except OSError:
        version = None  # (check_file says why, in its words)
    if version in HEADERS:
        return HEADERS[version]
    if not path.is_file():  # (an empty or broken file is named below, as safetensors reads it)
        check_file(path, "checkpoint file")
    if written_suffix(path, named) != SUFFIX:
        raise UserError(
            f"{named} is not a {SUFFIX} file: musicvid loads a checkpoint from safetensors alone (a .ckpt or .pt is a "
            "pickle, which can run code as it loads)"
        )
    shapes = HEADERS[version] = read_header(path, named)
    return shapes


def written_suffix(path: Path, named: str) -> str:
    """A weights file's suffix, refused where it is .safetensors or .bin in capitals: diffusers tells a file's format
    by its lower-case suffix alone, and would read such a file as a pickle after the storyboard."""
    if path.suffix.lower() in (SUFFIX, LEGACY_SUFFIX) and path.suffix not in (SUFFIX, LEGACY_SUFFIX):
        raise UserError(
            f"{named}: diffusers knows a weights file by its suffix in lower case: rename it "
            f"{path.stem}{path.suffix.lower()}"
        )
    return path.suffix


def read_header(path: Path, named: str) -> dict[str, list[int]]:
    """The tensors' names and shapes the safetensors file `path` (a file, checked) declares in its header."""
    from safetensors import safe_open

    check_not_pointer(path, named)
    try:
        with safe_open(str(path), framework="pt") as opened:
            shapes = {key: list(opened.get_slice(key).get_shape()) for key in opened.keys()}
    except Exception as error:  # (safetensors says "header too large", "invalid JSON", ... in its own types)
        raise UserError(f"{named} cannot be read as a safetensors file ({str(error).splitlines()[0]})") from None
    return shapes


LFS_POINTER = b"version https://git-lfs"  # what a clone made without git-lfs holds in place of each large file
PICKLE = b"\x80"  # pickle's first opcode (PROTO): torch.save's files before its zip archive (torch 1.6)
ARCHIVE = b"PK"  # a zip archive: torch.save's since


def check_not_pointer(path: Path, named: str) -> None:
    """Refuse a Git LFS pointer (a few lines of text) in place of a weights file: a model cloned without git-lfs; and
    anything but a file there."""
    if not path.is_file():
        raise UserError(f"{named} is no file to read (a folder, a pipe, or a link that leads nowhere or to itself)")
    with path.open("rb") as opened:
        begins = opened.read(len(LFS_POINTER))
    if begins == LFS_POINTER:
        raise UserError(
            f"{named} is a Git LFS pointer, not the weights it stands for: fetch them (`git lfs pull` in its clone)"
        )


def torch_archive(path: Path, named: str) -> bool:
    """Whether a PyTorch weights file (.bin, .pt, .pth) is torch.save's zip archive (False: an older pickle, which
    torch opens only by reading it); anything else (a Git LFS pointer, a web page saved in its place), or an archive
    cut short by a copy or a download (no zip directory at its end), is refused."""
    check_not_pointer(path, named)
    with path.open("rb") as opened:
        begins = opened.read(16)
    if begins.startswith(ARCHIVE):
        if not zipfile.is_zipfile(path):
            raise UserError(f"{named} is cut short (no whole zip archive)")
        return True
    if begins.startswith(PICKLE):
        return False
    shown = begins.decode("ascii", "replace").split("\n")[0]
    raise UserError(f"{named} holds no PyTorch weights: neither torch's zip archive nor a pickle (it begins {shown!r})")


def family_of(shapes: dict[str, list[int]]) -> str | None:
    """The family (musicvid.settings.presets.FAMILIES) the tensors `shapes` are a checkpoint of (SD's whole, a flow-
    matching family's transformer), else None."""
    names = shapes.keys()
    has = lambda prefix: any(key.startswith(prefix) for key in names)  # noqa: E731
    bare = {key.removeprefix(UNET) for key in names}
    for family, marks in FLOW_TRANSFORMERS.items():
        if all(any(key.startswith(mark) for key in bare) for mark in marks):
            return family
    if not has(UNET) or not has(VAE):
        return None
    if has("conditioner.embedders.0.") and has("conditioner.embedders.1."):
        return "sdxl"
    reads = {shape[-1] for key, shape in shapes.items() if key.startswith(UNET) and key.endswith(CROSS_ATTENTION)}
    if TEXT_WIDTH in shapes and reads == {shapes[TEXT_WIDTH][0]}:
        return "sd"
    return None


def kind_of(shapes: dict[str, list[int]]) -> str | None:
    """What a file holds that is no model (KINDS), in words; None: a model, of a family or not. A VAE is its
    names' start (a whole checkpoint holds one under `first_stage_model.`); a LoRA is named anywhere."""
    for part, what in KINDS:
        if any(key.startswith(part) or (what == LORA and part in key) for key in shapes):
            return what
    return None


def known_other(shapes: dict[str, list[int]]) -> str | None:
    """What a file of none of the families holds, in words, where its names say (OTHERS)."""
    return next((what for part, what in OTHERS if any(key.startswith(part) or part in key for key in shapes)), None)


def what_it_holds(shapes: dict[str, list[int]]) -> str:
    """What a file of none of the families holds, in words."""
    if known := known_other(shapes):
        return known
    if not shapes:
        return "no tensors"
    first = sorted(shapes)[:2]
    return f"tensors named like {', '.join(first)}, which no checkpoint of the families musicvid draws with has"


def single_file_family(name: str, named: str) -> str:
    """The family of the checkpoint file `name`, or one sentence (`named`: how it was given) saying what it is."""
    shapes = header(Path(name).expanduser(), named)
    kind = kind_of(shapes)
    family = None if kind else family_of(shapes)
    if family is None:
        raise UserError(
            f"{named} holds {kind or what_it_holds(shapes)}: a checkpoint file must be a whole Stable Diffusion 1.x "
            "or SDXL model (UNet, VAE and text encoders), or a Z-Image or FLUX.2 klein transformer"
        )
    return family


def blocks(shapes: dict[str, list[int]], *prefixes: str) -> int:
    """How many numbered blocks (prefix.N.) the file holds under any of `prefixes`."""
    found = {key.removeprefix(UNET).split(".")[1] for key in shapes if key.removeprefix(UNET).startswith(prefixes)}
    return len(found)


# FLUX.2's width, which its diffusers config gives as its heads and their size
WIDTH = "num_attention_heads × attention_head_dim"


def transformer_sizes(family: str, shapes: dict[str, list[int]], named: str) -> dict[str, int]:
    """A flow-matching transformer's sizes, as its diffusers config names them, read from the file's shapes; refused
    where the projection of the text into it is not there (a file cut down, or of a relative)."""
    bare = {key.removeprefix(UNET): shape for key, shape in shapes.items()}
    # cap_embedder (Z-Image's): a norm, then the text's width to the model's; txt_in (context_embedder in diffusers')
    projections = ("cap_embedder.1.weight",) if family == "zimage" else ("txt_in.weight", "context_embedder.weight")
    text_in = next((bare[key] for key in projections if key in bare and len(bare[key]) == 2), None)
    if text_in is None:
        raise UserError(f"{named} holds no {' nor '.join(projections)}: not a whole {FAMILY_NAMES[family]} transformer")
    if family == "klein" and "context_embedder.weight" in bare and f"{UNET}context_embedder.weight" in shapes:
        raise UserError(  # (diffusers converts its authors' names under the prefix, and reads its own without it)
            f"{named} holds diffusers' names under {UNET}, which diffusers loads nothing of: save it without the prefix"
        )
    if family == "zimage":
        return {"dim": text_in[0], "cap_feat_dim": text_in[1], "n_layers": blocks(shapes, "layers.")}
    return {
        "joint_attention_dim": text_in[1],
        WIDTH: text_in[0],
        "num_layers": blocks(shapes, "double_blocks.", "transformer_blocks."),
        "num_single_layers": blocks(shapes, "single_blocks.", "single_transformer_blocks."),
    }


def check_transformer_fits(name: str, family: str, config: dict, repository: str, named: str) -> None:
    """Refuse a flow-matching transformer file of other sizes than `repository`'s transformer (its `config`): the
    text encoder and VAE it is drawn with are that repository's (another FLUX.2 is not klein 4B)."""
    sizes = transformer_sizes(family, header(Path(name).expanduser(), named), named)
    config = {**config, WIDTH: config.get("num_attention_heads", 0) * config.get("attention_head_dim", 0)}
    differ = {key: (value, config.get(key)) for key, value in sizes.items() if config.get(key) != value}
    if differ:
        said = ", ".join(f"{key} {mine} where it has {theirs}" for key, (mine, theirs) in differ.items())
        raise UserError(
            f"{named} is a transformer of other sizes than {repository}'s, whose text encoder and VAE it would use ({said})"
        )
