"""The style LoRAs the page offers: the files a visitor uploads, and the .safetensors files directly in the
folder the server's operator named (`musicvid ui --lora-dir`). The page's box gives them weights, a line
each, `NAME[:WEIGHT]`, by their file names alone.

A name is looked up among the names offered, never on disk or on the hub: a name the page does not offer
(`/etc/shadow`, `../a.safetensors`, `org/repo`) is refused in a sentence that reads the same whether or not
the server holds something of that name, and nothing of that name is opened, stat'ed or fetched.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import check_file
from musicvid.models.lora_files import check_lora as check_lora_file
from musicvid.settings.loras import MAX_LORAS, Lora, Loras, check_loras

SUFFIX = ".safetensors"  # the one layout read without running code from the file (a .bin is a pickle)
# A style LoRA is 10–200 MB (SD 1.5's at ranks 8–128, SDXL's at rank 32); the largest shared ones, SDXL's at
# rank 128, stay under 900 MB. Gradio refuses any upload over --max-upload-mb as it arrives; this cap holds
# where an operator raised that for long songs: a job keeps at most MAX_LORAS of these, read whole to fuse.
MAX_LORA_MB = 1024
# A line of the LoRAs' box is a file name (at most 255 bytes) and a weight.
LORA_BOX_CHARACTERS = MAX_LORAS * 300


def is_lora_name(name: str) -> bool:
    return name.lower().endswith(SUFFIX)


def operator_loras(folder: Path | None) -> dict[str, Path]:
    """The .safetensors files directly in the operator's folder, by file name. A link is offered where it
    leads to a file directly in that folder, and nowhere else (a subfolder, /etc)."""
    if folder is None or not folder.is_dir():
        return {}
    root = folder.resolve()
    offered = {}
    for entry in sorted(root.iterdir()):
        real = entry.resolve()
        if is_lora_name(entry.name) and real.parent == root and real.is_file():
            offered[entry.name] = real
    return offered


def uploaded_loras(uploads: list[str] | str | None) -> dict[str, Path]:
    """The visitor's uploaded LoRAs (Gradio's copies), by file name; refused before anything reads them
    whole: too many, not .safetensors, two of one name, empty, or too big."""
    files = [Path(upload) for upload in ([uploads] if isinstance(uploads, str) else uploads or [])]
    if len(files) > MAX_LORAS:
        raise UserError(f"upload at most {MAX_LORAS} style LoRAs, not {len(files)}")
    found: dict[str, Path] = {}
    for file in files:
        if not is_lora_name(file.name):
            raise UserError(f"style LoRA {file.name} is not a {SUFFIX} file")
        if file.name in found:
            raise UserError(f"two of your style LoRAs are named {file.name}: upload each once")
        check_file(file, "style LoRA")
        size = file.stat().st_size
        if size > MAX_LORA_MB * 2**20:
            raise UserError(f"style LoRA {file.name} is {math.ceil(size / 2**20)} MB; the limit is {MAX_LORA_MB} MB")
        found[file.name] = file
    return found


def check_lora(file: Path) -> None:
    """A style LoRA the page was given, checked by its header before any work (musicvid.models.single_file)."""
    check_lora_file(file, f"style LoRA {file.name}")


def keep_uploads(uploads: Mapping[str, Path], folder: Path) -> dict[str, Path]:
    """The uploads copied into the job's folder, where the render reads them (Gradio's copies age out);
    one kept from an earlier press stays as it is, and one no longer uploaded goes."""
    for old in folder.iterdir() if folder.is_dir() else ():
        if old.name not in uploads:
            old.unlink()
    if uploads:
        folder.mkdir(exist_ok=True)
    kept = {}
    for name, upload in uploads.items():
        kept[name] = folder / name
        was, now = upload.stat(), kept[name].stat() if kept[name].exists() else None
        if now is None or (now.st_size, now.st_mtime_ns) != (was.st_size, was.st_mtime_ns):
            shutil.copy2(upload, kept[name])  # its time too: a later press finds it kept
    return kept


def not_offered(name: str, offered: Mapping[str, Path]) -> str:
    """The refusal of a name the page does not offer: the names it does, never what the server holds."""
    choose = f", or choose one of: {', '.join(sorted(offered))}" if offered else " (this page offers none of its own)"
    return f"style LoRA {name!r} is not one this page offers: upload it{choose}"


def page_loras(text: str, operator: Mapping[str, Path], uploads: Mapping[str, Path]) -> Loras:
    """The LoRAs the box names, `NAME[:WEIGHT]` a line, in order, then the uploads it does not name, at
    weight 1; each read from the file the page keeps under that name. The box's length, how many and their
    weights are checked first, in the sentences every front door says (musicvid.settings.loras.check_loras)."""
    if len(text) > LORA_BOX_CHARACTERS:
        raise UserError(f"the style LoRAs' box holds {len(text):,} characters; the limit is {LORA_BOX_CHARACTERS:,}")
    named = Loras.parse(text)
    given = Loras([*named, *(Lora(name) for name in uploads if name not in {lora.source for lora in named})])
    check_loras(given)
    if clash := sorted(operator.keys() & uploads.keys()):
        raise UserError(f"your style LoRA {clash[0]} has the name of one this page offers: rename yours")
    offered = {**operator, **uploads}
    for lora in given:
        if lora.source not in offered:
            raise UserError(not_offered(lora.source, offered))
    return Loras(Lora(str(offered[lora.source]), lora.weight) for lora in given)
