"""Files a person hands the app, checked before use, and the temporaries a killed run left behind
(written by vipe_core.atomic.atomic_path)."""

from __future__ import annotations

import codecs
import glob
import hashlib
import json
import math
import os
import re
import stat
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from musicvid.core.errors import UserError
from musicvid.core.paths import file_version, is_folder, names_open_file, nearest_existing, printable, resolved, shown
from vipe_core.atomic import TEMPORARY_MARK, new_temporary, temporary_of

# What `-o` may name: the containers ffmpeg writes H.264 with AAC into (by the name's suffix).
VIDEO_SUFFIXES = (".mp4", ".m4v", ".mov", ".mkv")
# A picture a person gives (a pinned keyframe) is read whole: a PNG of a few KB can declare 30000x30000
# pixels. 40 megapixels (8000x5000, a large camera's photo) take 120 MB decoded; the header says the size.
MAX_PICTURE_PIXELS = 40_000_000
# The longest song taken (--max-seconds at most): an hour is 36,000 frames at 10 fps, and 230 MB of samples
MAX_SONG_SECONDS = 60 * 60
# What a URL starts with (http://, https://, file:///, s3://): a name that is one is no path on this machine.
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# A text a person types (a title, an artist, a style) is a line: the longest song and album titles in use run to a few
# hundred characters. Each is read with every prompt (ViPE, the text encoders): a page's 10 MB title held the one
# render slot for 25 s. (musicvid.settings.schema bounds the settings by it, the storyboard its title and artist.)
MAX_TEXT_CHARS = 1_000
# Every number read from a person's file (a lyrics file's times, a storyboard's or a transcript's numbers) is read by
# file_number, bounded before it is converted: Python reads a 400-digit integer but cannot make it a float
# (OverflowError), and refuses one of 5,000 digits (ValueError). No time, seed or count a person writes is past 2^53,
# the largest integer a float holds exactly (I-JSON, RFC 7493), nor takes more than 32 characters to write.
MAX_FILE_NUMBER = 2**53
MAX_NUMBER_CHARS = 32
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")  # JSON's numbers; a lyrics file's are of them


@lru_cache(maxsize=64)
def _sha256(path: Path, version: tuple[int, ...]) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """A file's SHA-256, once per version (file_version) in a process: a song is hashed to find its work directory
    before it is decoded, and a LoRA is 10–200 MB."""
    path = Path(path)
    return _sha256(path.resolve(), file_version(path.stat()))


# What a model folder's loaders read (transformers, diffusers, CTranslate2, sentencepiece, tiktoken): configs,
# weights, vocabularies, templates. A README, a notebook's picture or an evaluation's journal beside them is no part
# of the model.
MODEL_FILE_SUFFIXES = frozenset(
    {".json", ".safetensors", ".bin", ".txt", ".model", ".pt", ".pth", ".ckpt", ".msgpack", ".h5", ".onnx", ".jinja"}
    | {".tiktoken", ".yaml"}
)


def weights_identity(name: str) -> str:
    """A model as the work directory's caches know it: a hub name by its name; a file or folder on this machine by
    the hash of what it holds (each file read once per version), so that one saved again under its name (`vipe
    train` into the same --out, a fine-tuned folder saved over) is another model. Of a folder, only what its loaders
    read (model_files): a file put beside the weights leaves the model as it was."""
    path = Path(name).expanduser()
    if path.is_file():
        return f"file {file_sha256(path)[:20]}"
    if not path.is_dir():
        return name
    digest = hashlib.sha256()
    for file in model_files(path):
        digest.update(f"{file.relative_to(path).as_posix()}\0{file_sha256(file)}\n".encode())
    return f"folder {digest.hexdigest()[:20]}"


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder its loaders read, sorted: those of MODEL_FILE_SUFFIXES at its top, and in the
    parts a diffusers pipeline's model_index.json names (unet/, vae/, ...); none hidden (.cache/, .git/)."""
    named: Any = {}
    if (index := folder / "model_index.json").is_file():
        try:
            named = json.loads(index.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError):
            pass  # (its loader says why, as it loads)
    keys = named if isinstance(named, dict) else {}
    # its parts are folders beside it: "_class_name" is none, nor a key that names a path
    parts = [folder] + [folder / key for key in keys if Path(key).name == key and not key.startswith(("_", "."))]
    files = [
        file
        for part in parts
        if part.is_dir()
        for file in part.iterdir()
        if file.suffix.lower() in MODEL_FILE_SUFFIXES and not file.name.startswith(".") and file.is_file()
    ]
    return sorted(files)


def writer_gone(pid: int) -> bool:
    """Whether no process `pid` runs here (a killed run's temporary, no longer written)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False


def remove_temporaries(path: str | os.PathLike) -> None:
    """What a killed run left of its writes to `path`: our temporaries of that name (vipe_core.atomic)
    whose writer no longer runs. Nothing else beside it is touched: `.o.mp4.bak`, vim's `.o.srt.swp`."""
    path = Path(path)
    if path.parent.is_dir():
        for leftover in path.parent.glob(f"{glob.escape(TEMPORARY_MARK)}*"):
            made = temporary_of(leftover)
            if made and made[1] == path.name and writer_gone(made[0]) and leftover.is_file():
                leftover.unlink(missing_ok=True)


def remove_all_temporaries(folder: str | os.PathLike) -> None:
    """Every temporary of ours a killed run left in a work directory this run holds (no other run writes
    there); a person's own files there stay."""
    folder = Path(folder)
    if folder.is_dir():
        for leftover in folder.glob(f"{glob.escape(TEMPORARY_MARK)}*"):
            if temporary_of(leftover) and leftover.is_file():
                leftover.unlink(missing_ok=True)


def check_not_stream(path: Path, what: str) -> None:
    """Refuse a name of one of this process's open files (/dev/stdin, /proc/self/fd/N): even redirected from a
    file, it is another file, or none, in another process (ffmpeg's, a batch's worker), and another row's song."""
    if names_open_file(path):
        raise UserError(f"{path} is a stream this process was given (standard input?); name the {what} itself")


def check_file(path: Path, what: str) -> None:
    """Refuse, in one sentence, a path that is not a readable, non-empty regular file. Checked before
    it is opened: a FIFO or a device would block the read or never end it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:  # (a broken link shows in ls: "not found" would read as a typo)
        name = printable(os.fspath(path))
        if path.is_symlink():
            raise UserError(f"{what} {name} is a broken link, to {printable(os.readlink(path))}") from None
        raise UserError(f"{what} not found: {name}") from None
    except OSError as e:
        raise UserError(f"cannot read {shown(path)}: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{path} is a directory, not a file ({what} wanted)")
    if not stat.S_ISREG(mode):
        raise UserError(f"{path} is not a regular file (a pipe or a device?); give the {what} itself")
    check_not_stream(path, what)
    try:
        with path.open("rb") as f:
            empty = not f.read(1)
    except OSError as e:
        raise UserError(f"cannot read {shown(path)}: {e.strerror}") from None
    if empty:
        raise UserError(f"{path} is empty (0 bytes)")


def is_url(text: str) -> bool:
    return URL.match(text) is not None


def check_output(path: Path, what: str = "output") -> None:
    """Refuse, before any work, an output that could not be written at the end of it (or whose name or folder the
    system refuses: musicvid.core.paths.probe)."""
    if is_folder(path, what):
        raise UserError(f"{what} {path} is a directory: give a file name, e.g. {path / 'video.mp4'}")
    existing = nearest_existing(path, what)
    if existing is None:  # (a relative path where the current folder is gone)
        return
    if not is_folder(existing, what):
        raise UserError(f"{what} {path} cannot be written: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{what} {path} cannot be written: the folder {existing} is read-only")


def check_creatable(path: Path, what: str = "output") -> None:
    """Refuse an output whose temporary cannot be made where it goes (os.access passes /proc as root, where no
    file can be made): one is made as the write makes it (vipe_core.atomic), and removed."""
    existing = nearest_existing(path, what)
    if existing is None or not existing.is_dir():  # (check_output says why)
        return
    try:
        new_temporary(path, folder=existing).unlink()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UserError(f"{what} {path} cannot be written: no file can be made in {existing} ({reason})") from None


def check_video_name(path: Path, what: str = "-o") -> None:
    """Refuse an output name that is not a video container the encoder writes (`-o v.srt`)."""
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise UserError(f"{what} {path} must name a video file ending in {', '.join(VIDEO_SUFFIXES)}")


def file_identity(path: Path) -> tuple | Path:
    """What names one file whatever its name: its device and inode where it exists (hard links share
    them), else its resolved path."""
    try:
        status = path.stat()
    except OSError:
        return resolved(path)
    return status.st_dev, status.st_ino


def same_file(a: Path, b: Path) -> bool:
    """Whether two names are one file: the same resolved path, or (links) the same inode."""
    if resolved(a) == resolved(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_not_inputs(outputs: list[Path], inputs: dict[str, Path]) -> None:
    """Refuse, before any work, a run that would write any of its outputs over one of its inputs
    (`inputs`: what each is -> its path)."""
    for output in outputs:
        for what, source in inputs.items():
            if same_file(output, source):
                raise UserError(f"{output} is the {what}: the run would write over it; give -o another name")


def check_picture(path: Path, what: str = "picture") -> tuple[int, int]:
    """A picture's width × height; refused if it is not an image, if its header declares more than
    MAX_PICTURE_PIXELS (checked before it is decoded), or if it does not decode whole (a truncated PNG is
    named now, not after the storyboard's work)."""
    from PIL import Image

    check_file(path, what)
    too_big = f"more than the {MAX_PICTURE_PIXELS // 1_000_000} megapixels a picture may have; scale it down first"
    with warnings.catch_warnings():  # Pillow's warning of a big picture: refused below, in our words
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            image = Image.open(path)  # reads the header only
        except Image.DecompressionBombError:  # Pillow's own limit, far above ours
            raise UserError(f"{what} {path} has {too_big}") from None
        except (OSError, SyntaxError, ValueError):
            raise UserError(f"{what} {path} is not an image (PNG, JPEG, WebP, ...)") from None
        with image:
            width, height = image.size
            if width * height > MAX_PICTURE_PIXELS:
                raise UserError(f"{what} {path} is {width}x{height} pixels, {too_big}")
            try:
                image.load()
            except (OSError, SyntaxError, ValueError) as error:
                raise UserError(f"{what} {path} does not decode whole: {error}") from None
    return width, height


def as_written(value: Any, most: int = 60) -> str:
    """A JSON document's value as it writes it (true, "12"; not True, '12'), cut to `most` characters, printable."""
    text = json.dumps(value, ensure_ascii=False)
    return printable(text if len(text) <= most else text[: most - 1] + "…")


def invalid(document: str, where: str, reason: str) -> UserError:
    """A field of a JSON document a person gave that breaks a rule: the document, the field, the reason."""
    return UserError(f"{document}: {where} {reason}")


def json_number(value: Any, document: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise invalid(document, where, f"must be a number, got {as_written(value)}")
    return float(value)


def json_string(value: Any, document: str, where: str) -> str:
    if not isinstance(value, str):
        raise invalid(document, where, f"must be a string, got {as_written(value)}")
    return value


def json_share(value: Any, document: str, where: str) -> float | None:
    """A confidence or probability: absent, or a number from 0 to 1."""
    if value is not None and not 0 <= json_number(value, document, where) <= 1:
        raise invalid(document, where, f"must be from 0 to 1, got {as_written(value)}")
    return value


# The kinds of value check_json knows, by name; one whose name ends in "?" may also be null (a share always may).
JSON_KINDS = {"number": json_number, "string": json_string, "share": json_share}


@dataclass(frozen=True)
class JsonFields:
    """An object of a JSON document as check_json checks it: each field's shape (a kind of JSON_KINDS, JsonFields, or
    a one-item list: the shape of each item), an absent field read as null; `required`, each refused where absent;
    `refused`, why a value that is not an object is refused (None: it is passed over, for its reader to refuse or
    read in its own words), unless `nullable` and null."""

    shapes: Mapping[str, Any]
    required: tuple[str, ...] = ()
    refused: str | None = "must be an object"
    nullable: bool = False


def check_json(document_value: Any, shape: JsonFields, document: str) -> None:
    """A JSON document a person gave, against its `shape`, in one pass before its reader builds on it: the first
    field that breaks its shape is named, with the reason (json_shape)."""
    json_shape(document_value, shape, document, "")


def json_shape(value: Any, shape: Any, document: str, where: str) -> None:
    """`value`, the part of a document at `where`, against its `shape` (a kind of JSON_KINDS, JsonFields, or a
    one-item list). A list's shape is checked on a list alone: what else is there, its reader reads."""
    if isinstance(shape, JsonFields):
        if not isinstance(value, dict):
            if shape.refused and not (shape.nullable and value is None):
                raise invalid(document, where, shape.refused)
            return
        at = f"{where}." if where else ""
        for key in shape.required:
            if key not in value:
                raise invalid(document, f"{at}{key}", "is missing")
        for key, inner in shape.shapes.items():
            json_shape(value.get(key), inner, document, f"{at}{key}")
    elif isinstance(shape, list):
        for i, item in enumerate(value if isinstance(value, list) else []):
            json_shape(item, shape[0], document, f"{where}[{i}]")
    elif value is not None or not shape.endswith("?"):
        JSON_KINDS[shape.removesuffix("?")](value, document, where)


def file_number(text: str, where: str, low: float = -MAX_FILE_NUMBER, high: float = MAX_FILE_NUMBER) -> int | float:
    """The number written `text` at `where` in a person's file, from `low` to `high`, or one sentence saying why not."""
    shown = text if len(text) <= 20 else f"{text[:12]}… ({len(text):,} characters)"
    if len(text) > MAX_NUMBER_CHARS:
        raise UserError(
            f"{where}: the number {shown} is longer than any this file holds ({MAX_NUMBER_CHARS} characters)"
        )
    if not NUMBER.fullmatch(text):
        raise UserError(f"{where}: {repr(text) if len(text) <= 20 else shown} is not a number")  # (' 500': its space)
    value = int(text) if text.lstrip("-").isdigit() else float(text)
    if not (math.isfinite(value) and low <= value <= high):
        raise UserError(f"{where}: {shown} is out of range (from {low:,.16g} to {high:,.16g})")
    return value


def read_text(path: Path, what: str) -> str:
    """A text file a person gave, checked first (check_file), as `decoded_text` reads it."""
    check_file(path, what)
    return decoded_text(path, what)


def decoded_text(path: Path, what: str) -> str:
    """A text file check_file passed, as UTF-8, read past the byte-order mark that editors write (Notepad before
    2019, PowerShell 5), or as UTF-16 after its own mark (Notepad's "Unicode"), or one sentence saying why not."""
    data = path.read_bytes()
    if data[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):  # (its mark begins as UTF-16's: read as one, NULs)
        raise UserError(f"{what} {path} is UTF-32 text, which musicvid does not read: save it as UTF-8")
    if len(data) > 3 and data[:2] not in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) and 0 in data[:2]:
        raise UserError(f"{what} {path} holds NUL bytes: it is UTF-16 without its mark (or binary): save it as UTF-8")
    utf16 = data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    try:
        return data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{what} {path} is not {'UTF-16' if utf16 else 'UTF-8'} text") from None


def parse_json(text: str, what: str) -> Any:
    """JSON a person gave us, its every number read by file_number, or one sentence saying why it is not usable."""

    def number(token: str) -> int | float:  # (named by the line of its first appearance)
        return file_number(token, f"{what} line {text.count(chr(10), 0, max(0, text.find(token))) + 1}")

    def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:  # a key given twice: one of its edits would be ignored
        found = dict(pairs)
        if len(found) < len(pairs):
            seen: set[str] = set()
            twice = next(key for key, _ in pairs if key in seen or seen.add(key))
            raise UserError(f"{what} gives the key {twice!r} twice in one object: keep the one meant")
        return found

    try:
        parsed = json.loads(text, parse_int=number, parse_float=number, parse_constant=number, object_pairs_hook=once)
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")  # a lone surrogate ("\ud800") is no character
    except json.JSONDecodeError as e:
        raise UserError(f"{what} is not valid JSON: {e}") from None
    except RecursionError:
        raise UserError(f"{what} is nested too deeply to be a storyboard or transcript") from None
    except UnicodeEncodeError as e:
        raise UserError(f"{what} holds {e.object[e.start : e.end]!r}, half of a UTF-16 pair: no character") from None
    return parsed
