"""A LoRA or an IP-Adapter file as its header says, before any work (no weight loaded but a LoRA's, to find one not
finite): what it holds, whether each layer is whole, and its family, where its names and widths tell (lora_family):
one of another family than the picture model's is refused (check_lora), as is what diffusers would fail on, or load
only in part, once the storyboard is made."""

from __future__ import annotations

import os
import re
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.models.local_names import cached_file
from musicvid.models.single_file import (
    LEGACY_SUFFIX,
    LORA,
    SUFFIX,
    family_of,
    kind_of,
    known_other,
    read_header,
    written_suffix,
)
from musicvid.models.vipe_files import check_folder_fit
from musicvid.models.weights_files import archive_shapes, json_object
from musicvid.settings.presets import FAMILY_NAMES

# LyCORIS's kinds of adapter by their names, and the families whose LoRA loaders in diffusers convert a LoKr
LYCORIS = {".lokr_": "LoKr", ".hada_": "LoHa"}
LOKR_FAMILIES = frozenset({"zimage", "klein"})
LYCORIS_NAMES = "lycoris_"  # LyCORIS's own names of the modules it adapts (lycoris_layers_0_attention_to_q)
# A LoRA layer's two matrices, down and up, in kohya's names, peft's and diffusers' attention processors'
LORA_HALVES = ((".lora_down.", ".lora_up."), (".lora_A.", ".lora_B."), ("lora.down.", "lora.up."))
# A LoRA's family, by its names in any layout (kohya's `lora_unet_` with underscores, diffusers' and peft's `unet.`,
# `transformer.`, the authors' `diffusion_model.`): a UNet's blocks are SD's or SDXL's, told apart by the width the
# cross-attention's keys and values read (the text encoders': 768 SD 1.x, 1024 SD 2.x, 2048 SDXL, read from its down
# matrix, rank x width) or by kohya's text encoder names (SDXL's two are lora_te1_ and lora_te2_, SD's one lora_te_);
# then the flow-matching transformers' blocks (outside a UNet, `transformer_blocks` are FLUX's double-stream ones).
# Names alone decide nothing more: a FLUX.1 LoRA is named as klein's.
UNET_BLOCKS = re.compile(r"(^|[._])(down_blocks|up_blocks|mid_block|input_blocks|output_blocks|middle_block)[._]")
CROSS_ATTENTION_DOWN = re.compile(r"attn2[._](processor[._])?to_[kv](_lora)?[._]((lora[._])?down|lora_A)\.weight$")
# (Stable Diffusion 2.x is no preset's family: its folders are drawn as SD's, by the same pipeline class, but take
# only its own LoRAs and IP-Adapters: adapted_family; SDXL's refiner draws over a picture, and its folders are refused)
ADAPTED_NAMES = {**FAMILY_NAMES, "sd2": "Stable Diffusion 2.x", "sdxl-refiner": "SDXL's refiner"}
CROSS_ATTENTION_WIDTHS = {  # (the refiner reads OpenCLIP bigG's 1280 alone: its LoRAs are kohya's lora_te2_, as SDXL's)
    width: (family, ADAPTED_NAMES[family])
    for width, family in ((768, "sd"), (1024, "sd2"), (2048, "sdxl"), (1280, "sdxl-refiner"))
}
TEXT_ENCODER_MARKS = {
    "lora_te_": ("sd", FAMILY_NAMES["sd"]),
    **dict.fromkeys(("lora_te1_", "lora_te2_", "text_encoder_2."), ("sdxl", FAMILY_NAMES["sdxl"])),
}
UNET_LORA = (frozenset({"sd", "sdxl"}), "a Stable Diffusion or SDXL UNet")
# peft's own save_pretrained names each layer by its path in the model it wrapped, under `base_model.model.`: a UNet's
# blocks are a UNet's (musicvid.models.drawing loads them as diffusers' `unet.`); a CLIP text encoder's layers are of a
# text encoder alone, whose names do not say which of SDXL's two it adapts
PEFT_PREFIX = "base_model.model."
_KOHYA_ATTENTION = re.compile(r"(lora_te[12]?_(?:text_model_)?encoder_layers_\d+)_self_attn_(q|k|v|out)_proj\.")
PEFT_TEXT_ENCODER = re.compile(r"^base_model\.model\.(text_model\.)?encoder\.layers\.\d+\.")
TRANSFORMER_LORAS = (
    (re.compile(r"(^|[._])((context|noise)_refiner[._]\d|layers[._]\d+[._](attention|feed_forward)[._])"), "zimage"),
    (re.compile(r"(^|[._])(single_transformer_blocks|transformer_blocks|double_blocks|single_blocks)[._]\d"), "klein"),
)
TRANSFORMER_NAMES = {"zimage": FAMILY_NAMES["zimage"], "klein": "FLUX.1 or FLUX.2"}


def adapted_family(diffusion: str, family: str) -> str:
    """The family a LoRA or an IP-Adapter of the picture model `diffusion` (of `family`) must be of: `family`, but for
    an SD pipeline whose UNet's cross-attention reads text 1024 wide (text_width): Stable Diffusion 2.x's, which an
    SD 1.x LoRA does not fit (it failed after the storyboard, in torch's words)."""
    return "sd2" if family == "sd" and text_width(diffusion) == 1024 else family


def text_width(diffusion: str) -> int | None:
    """How wide the text is that the UNet of the picture model `diffusion` reads (its unet/config.json's
    cross_attention_dim, in its folder or the cache); None where it has no UNet there."""
    folder = Path(diffusion).expanduser()
    config = str(folder / "unet" / "config.json") if folder.is_dir() else cached_file(diffusion, "unet/config.json")
    if not config or not Path(config).is_file():
        return None
    width = json_object(Path(config), f"--diffusion {diffusion}'s unet").get("cross_attention_dim")
    return width if isinstance(width, int) else None


def check_reads(widths: set[int], named: str, reads: int | None, what: str) -> None:
    """Refuse a LoRA or an IP-Adapter (`what`) whose layers read text of other `widths` than the picture model's UNet
    `reads` (None: not known), whatever family those widths are named: the load failed after the storyboard."""
    if reads is not None and widths and widths != {reads}:
        read = " and ".join(map(str, sorted(widths)))
        raise UserError(
            f"{named} reads text {read} wide, where the picture model's UNet reads {reads}: {what} of another model"
        )


def check_lora(path: Path, named: str, family: str | None = None, reads: int | None = None) -> None:
    """A LoRA as its header says, before any work: a safetensors file that cannot be read, holds something other
    than a LoRA (or no tensor named as a LoRA's, diffusers' rule), a layer not whole in itself (unpaired), peft's
    adapter of a text encoder alone (PEFT_TEXT_ENCODER), or a LoRA its names say is of another family than `family`
    (the picture model's; None: any) or that reads other text than its UNet `reads` (check_lora_family), is refused
    in one sentence (not once the storyboard is made and the pipeline fuses it); an older .bin is refused where it
    holds more than tensors (weights_files.archive_shapes) or is of another family, and a file of any other suffix (a
    picture, a lyrics file) refused: the pipeline would take it for a .bin after the storyboard; so is one whose
    weights are not finite (check_finite). `path` is a file, as musicvid.models.drawing.weights_file found it."""
    suffix = written_suffix(path, named)
    if suffix not in (SUFFIX, LEGACY_SUFFIX):
        raise UserError(f"{named} is not a LoRA file: give a {SUFFIX} file (or diffusers' older {LEGACY_SUFFIX})")
    if suffix != SUFFIX:  # (tensors alone, on the meta device; what else they are is judged as it loads)
        refuse_dora(shapes := archive_shapes(path, named), named)
        check_lora_family(shapes, named, family, reads)
        return
    shapes = read_header(path, named)
    if kind_of(shapes) == LORA:
        check_lycoris(shapes, named, family)
        refuse_dora(shapes, named)
        if broken := unpaired(shapes):
            raise UserError(f"{named} is not a whole LoRA: {broken}")
        if layer := attention_without_out(shapes):
            raise UserError(
                f"{named}: its text encoder's layer {layer} adapts q_proj, k_proj and v_proj but not out_proj, by which "
                "diffusers tells kohya's text encoder layers: it would leave them out and draw with the LoRA in part "
                "(kohya's scripts save all four)"
            )
        if any(PEFT_TEXT_ENCODER.match(key) for key in shapes):
            raise UserError(
                f"{named} is peft's adapter of a text encoder alone (base_model.model.encoder.layers.*): give a LoRA "
                "of the UNet, with or without its text encoder's (diffusers' save_lora_weights, or kohya's scripts)"
            )
        check_lora_family(shapes, named, family, reads)
        check_finite(path, named)
        return
    whole = family_of(shapes)
    held = kind_of(shapes) or (f"a whole {whole} checkpoint" if whole else known_other(shapes))
    if held or not shapes:
        raise UserError(f"{named} is not a LoRA: it holds {held or 'no tensors'}")
    # a layout not known here is left for the pipeline to judge, but for diffusers' own first rule (some name says
    # lora), which it would say only after the storyboard
    if not any("lora" in key for key in shapes):
        first = ", ".join(sorted(shapes)[:2])
        raise UserError(f"{named} is not a LoRA: none of its tensors is named as a LoRA's are (it holds {first})")
    check_finite(path, named)


def refuse_dora(shapes: dict[str, list[int]], named: str) -> None:
    """Refuse a DoRA in kohya's or LyCORIS's names (each layer's magnitudes as `dora_scale`): diffusers' LoRA loaders
    leave those out, saying so in a log line alone, and would draw it as a plain LoRA (diffusers 0.42.1)."""
    if magnitude := next((key for key in shapes if key.endswith(".dora_scale")), None):
        raise UserError(
            f"{named} is a DoRA ({magnitude}): diffusers would leave out its magnitudes and draw it as a plain LoRA"
        )


def attention_without_out(shapes: dict[str, list[int]]) -> str | None:
    """The first of a kohya LoRA's text encoder attention layers (lora_te*_..._self_attn_) that adapts q, k or v but
    not out_proj (None: none does): diffusers finds kohya's text encoder layers by to_out_lora, the name it gives
    out_proj's, and without one loads none of them, saying only that they were unexpected."""
    attention = [_KOHYA_ATTENTION.match(key) for key in shapes]
    adapted = {(found[1], found[2]) for found in attention if found}
    return next((layer for layer, part in sorted(adapted) if part != "out" and (layer, "out") not in adapted), None)


def check_lora_family(shapes: dict[str, list[int]], named: str, family: str | None, reads: int | None) -> None:
    """Refuse a LoRA its names say is of another family than `family` (None: any: lora_family), or whose
    cross-attention reads other text than the picture model's UNet `reads` (check_reads)."""
    of = lora_family(shapes) if family else None
    if of and family not in of[0]:
        raise UserError(f"{named}: a LoRA of {of[1]}, not of {ADAPTED_NAMES[family]}")
    widths = {shape[-1] for key, shape in shapes.items() if CROSS_ATTENTION_DOWN.search(key) and len(shape) == 2}
    check_reads(widths, named, reads, "a LoRA")


def check_lycoris(shapes: dict[str, list[int]], named: str, family: str | None) -> None:
    """Refuse a LyCORIS file diffusers cannot load into `family` (None: any): a LoHa into none, a LoKr but into
    Z-Image's or FLUX.2 klein's transformer, and one in LyCORIS's own module names but into klein's (diffusers renames
    Z-Image's from its modules' names alone); it would fail after the storyboard, saying its keys were not renamed."""
    held = next((kind for part, kind in LYCORIS.items() if any(part in key for key in shapes)), None)
    takes = LOKR_FAMILIES if held == "LoKr" else frozenset()
    if held == "LoKr" and any(key.startswith(LYCORIS_NAMES) for key in shapes):
        takes = takes & {"klein"}
        if family == "zimage":
            raise UserError(
                f"{named} is a LoKr in LyCORIS's own module names ({LYCORIS_NAMES}...), which diffusers converts for "
                "FLUX.2 klein alone: give Z-Image's in its modules' names (diffusion_model.layers.0.attention.to_q...)"
            )
    if held is None or family is None or family in takes:
        return
    where = f"only into {' and '.join(FAMILY_NAMES[f] for f in sorted(takes))}" if takes else "into no picture model"
    raise UserError(
        f"{named} is a LyCORIS {held}, which diffusers loads {where}: give a LoRA (kohya's lora_down and lora_up, "
        "or peft's lora_A and lora_B)"
    )


def check_finite(path: Path, named: str) -> None:
    """Refuse a safetensors file holding NaN or infinite values (a LoRA trained in float16 that diverged): fused, it
    draws black keyframes and fails only after the drawing. A LoRA is small (10-200 MB), read a tensor at a time."""
    import torch
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as opened:
        for key in opened.keys():
            if not torch.isfinite(opened.get_tensor(key)).all():
                raise UserError(f"{named}: its weights hold NaN or infinite values ({key})")


def unpaired(shapes: dict[str, list[int]]) -> str | None:
    """What is wrong with a LoRA layer in itself, in words: its down matrix without its up matrix (kohya's lora_down
    and lora_up, peft's lora_A and lora_B), or the two of different ranks (the down's rows, the up's columns: a file
    damaged or merged by hand); None where every layer is whole. diffusers would fail on either after the storyboard,
    on the one with a bare KeyError, on the other blaming the model."""
    for key, shape in shapes.items():
        for down, up in LORA_HALVES:
            if down not in key:
                continue
            other = up.join(key.rsplit(down, 1))
            if other not in shapes:
                return f"its {key} has no {other} beside it"
            ranks = (shape[0] if shape else None, shapes[other][1] if len(shapes[other]) > 1 else None)
            if ranks[0] != ranks[1]:
                return f"its {key} is of rank {ranks[0]} and its {other} of rank {ranks[1]}"
    return None


def lora_family(shapes: dict[str, list[int]]) -> tuple[frozenset[str], str] | None:
    """The families a LoRA's tensors `shapes` can be of, and it in words: a UNet's whose marks say nothing or
    disagree is SD's or SDXL's; None where its names do not say (a layout not known here: the pipeline judges it)."""
    if any(UNET_BLOCKS.search(key) for key in shapes):
        widths = [shape[-1] for key, shape in shapes.items() if CROSS_ATTENTION_DOWN.search(key) and len(shape) == 2]
        said = [CROSS_ATTENTION_WIDTHS[width] for width in widths if width in CROSS_ATTENTION_WIDTHS]
        # (the width first: kohya names SD 2.x's one text encoder as SD 1.x's, lora_te_)
        said = said or [of for mark, of in TEXT_ENCODER_MARKS.items() if any(key.startswith(mark) for key in shapes)]
        if said and len({family for family, _ in said}) == 1:
            return frozenset({said[0][0]}), said[0][1]
        return UNET_LORA
    for pattern, family in TRANSFORMER_LORAS:
        if any(pattern.search(key) for key in shapes):
            return frozenset({family}), TRANSFORMER_NAMES[family]
    return None


# What an IP-Adapter's image projection reads of its image encoder (its config.json's widths): the projected image
# embedding (IP-Adapter's), or the hidden states (IP-Adapter Plus's resampler, the full-face adapter's MLP)
ENCODER_WIDTHS = {
    "image_proj.proj.weight": "projection_dim",
    "image_proj.proj_in.weight": "hidden_size",
    "image_proj.proj.0.weight": "hidden_size",
}
# diffusers' image projections, by the keys that tell them apart (loaders.unet, as it converts h94's files)
CLIP_PROJECTIONS = ("image_proj.proj.weight", "image_proj.proj.3.weight")
FACE_ID = ("image_proj.norm.weight", "image_proj.perceiver_resampler.proj_in.weight")


def check_adapter(path: Path, named: str, family: str, reads: int | None = None) -> None:
    """Refuse an IP-Adapter file (safetensors, or h94's older .bin) that holds no image_proj or ip_adapter tensors,
    or one of another family than `family`, by the width its keys read (the text's, as a LoRA's cross-attention)."""
    shapes = adapter_shapes(path, named)
    if not any(key.startswith(("image_proj.", "ip_adapter.")) for key in shapes):
        held = kind_of(shapes) or known_other(shapes) or "no image_proj or ip_adapter tensors"
        raise UserError(f"{named} is not an IP-Adapter: it holds {held}")
    if any(key in shapes for key in FACE_ID) and not any(key in shapes for key in CLIP_PROJECTIONS):
        raise UserError(
            f"{named} is an IP-Adapter FaceID: it reads a face's InsightFace embedding, which musicvid does not make "
            "(its IP-Adapters read a reference picture's CLIP embedding)"
        )
    widths = {shape[-1] for key, shape in shapes.items() if key.endswith(".to_k_ip.weight") and len(shape) == 2}
    said = {CROSS_ATTENTION_WIDTHS[width] for width in widths if width in CROSS_ATTENTION_WIDTHS}
    if len(said) == 1 and (of := said.pop())[0] != family:  # (h94/IP-Adapter holds SD 1.5's and SDXL's side by side)
        raise UserError(f"{named}: an IP-Adapter of {of[1]}, not of {ADAPTED_NAMES[family]}")
    check_reads(widths, named, reads, "an IP-Adapter")


def adapter_shapes(path: Path, named: str) -> dict[str, list[int]]:
    return read_header(path, named) if path.suffix.lower() == SUFFIX else archive_shapes(path, named)


def check_image_encoder(path: Path, named: str, local: bool) -> None:
    """Refuse the IP-Adapter file `path` (`local`: given as a file here, not the cache's copy of a hub file) without
    its image encoder (image_encoder_of), or with one whose weights do not fill the encoder its config describes, or
    that makes other widths than the adapter reads (ENCODER_WIDTHS: SDXL's encoder beside SD 1.5's adapter failed
    after the storyboard)."""
    encoder = image_encoder_of(path, named)
    if local and not (encoder / "config.json").is_file():
        raise UserError(
            f"{named}: there is no image_encoder/config.json beside it, the image encoder an IP-Adapter is loaded "
            "with (h94/IP-Adapter's layout)"
        )
    if (encoder / "config.json").is_file():  # (a hub file's, where the cache holds it)
        from transformers import CLIPVisionModelWithProjection

        check_folder_fit(encoder, CLIPVisionModelWithProjection, f"{named}'s image encoder {encoder}")
        if why := encoder_misfit(path, named, encoder):
            raise UserError(why)


def encoder_misfit(path: Path, named: str, encoder: Path) -> str | None:
    """Why the image encoder `encoder` does not fit the IP-Adapter file `path`, in a sentence; None where it does."""
    shapes, said = adapter_shapes(path, named), json_object(encoder / "config.json", f"{named}'s image encoder")
    for key, field in ENCODER_WIDTHS.items():
        reads, makes = (shapes.get(key) or [0, 0])[-1], said.get(field)
        if key in shapes and isinstance(makes, int) and reads != makes:
            return (
                f"{named} reads image embeddings {reads} wide ({key}), where the image encoder beside it makes them "
                f"{makes} wide (its config.json's {field}): another model's encoder"
            )
    return None


def image_encoder_of(path: Path, named: str) -> Path:
    """The image encoder the IP-Adapter file `path` is loaded with: image_encoder/ beside it; but where that one does
    not fit it and h94/IP-Adapter's SD 1.5 encoder does (models/image_encoder/, beside the folder the file is in: the
    ViT-H that its sdxl_models/*_vit-h adapters, the most used SDXL ones, read), that one."""
    beside, h94 = path.parent / "image_encoder", path.parent.parent / "models" / "image_encoder"
    if not all((encoder / "config.json").is_file() for encoder in (beside, h94)) or h94 == beside:
        return beside
    return h94 if encoder_misfit(path, named, beside) and not encoder_misfit(path, named, h94) else beside


def encoder_folder(path: Path, subfolder: str, named: str) -> str:
    """The image encoder of the IP-Adapter file `path` (in `subfolder` of its repository or folder) as diffusers'
    load_ip_adapter names it: a folder's name inside `subfolder`, or a path from the repository's root."""
    relative = os.path.relpath(image_encoder_of(path, named), path.parent)
    return os.path.normpath(os.path.join(subfolder, relative))
