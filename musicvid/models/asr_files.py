"""The Whisper named with --asr-model, checked as the models are chosen, before any work: it loads only once the song
is decoded and Demucs has separated its vocals. openai-whisper takes a size by name (whisper.available_models()) or a
checkpoint file it saved (a torch archive, whole by its zip's directory, whose pickle names its dims and
model_state_dict); faster-whisper a size, a hub name (owner/name), or a CTranslate2 model folder, whose model.bin is
read to its end by its header and each variable's (nothing but their sizes), whose config.json is a JSON object, and
which holds its tokenizer.json (faster-whisper would fetch another Whisper's from the hub). Anything else is refused
in one sentence saying what an ASR model of the backend must be. The memory plan reads a CTranslate2 Whisper's sizes
from the same header (ctranslate2_dims). Only a .pt's dims are read with torch (checkpoint_dims)."""

from __future__ import annotations

import pickletools
import re
import struct
import zipfile
from pathlib import Path
from typing import BinaryIO

from musicvid.core.errors import UserError
from musicvid.models.local_names import check_leads_somewhere, is_hub_name
from musicvid.models.published import whisper_dims
from musicvid.models.single_file import check_not_pointer
from musicvid.models.weights_files import json_object, pickled_state
from musicvid.settings.presets import TINY

# What an ASR model of each backend is, in words
ASR_MODELS = {
    "openai-whisper": "a model size (tiny, base, small, medium, large-v2, large-v3, turbo; .en for English alone) or "
    "a checkpoint file openai-whisper saved (.pt)",
    "faster-whisper": "a model size (tiny, base, small, medium, large-v2, large-v3, turbo, distil-large-v3, …), a hub "
    "name (owner/name) or a CTranslate2 model folder (model.bin, config.json, tokenizer.json)",
}
# The converter's option that copies the tokenizer into a CTranslate2 Whisper's folder
COPY_TOKENIZER = (
    "ct2-transformers-converter --model MODEL --output_dir DIR --copy_files tokenizer.json preprocessor_config.json"
)
# The mel bins faster-whisper computes where a folder's preprocessor_config.json says nothing (its feature_size)
MELS = 80
MELS_VARIABLE = "encoder/conv1/weight"  # (out channels, mel bins, kernel): the mel bins the model was trained on
MEL_BINS, AUDIO_POSITIONS = (80, 128), 1500  # what openai-whisper computes of a 30 s window, what it feeds in
MOST_PARAMETERS = 3_000_000_000  # large-v3's 1.55 billion, twice
HALVES = ("encoder", "decoder")  # a CTranslate2 Whisper's variables' first names
# The CTranslate2 model.bin layout its converter writes (ctranslate2.specs.model_spec's _serialize): the version
# whose header and variables are read here
CTRANSLATE2_VERSION = 6
WHISPER_SPEC = "WhisperSpec"  # the name a Whisper's model.bin gives its kind
MOST_VERSION = 20  # a model.bin whose first number is larger is none: a later version is read as it loads
# What an openai-whisper checkpoint holds: its sizes and its weights (whisper.load_model reads both)
WHISPER_KEYS = {"dims", "model_state_dict"}
START = "<|startoftranscript|>"  # the token Whisper's tokenizer starts each transcript with


def check_asr_model(backend: str, name: str) -> None:
    """Refuse, in one sentence, an --asr-model `name` that is no model of `backend` (module doc)."""
    named = f"--asr-model {name}"
    must = f"with --asr {backend}, an ASR model is {ASR_MODELS[backend]}"
    path = Path(name).expanduser()
    if name == TINY:
        return
    if path.is_dir() and backend == "openai-whisper":
        raise UserError(f"{named} is a folder (a CTranslate2 one is faster-whisper's: --asr faster-whisper): {must}")
    if path.is_dir():
        check_ctranslate2_folder(path, named, must)
    elif path.exists() and backend == "faster-whisper":
        raise UserError(f"{named} is a single file: {must}")
    elif path.exists():
        check_whisper_checkpoint(path, named, must)
    else:
        check_leads_somewhere(named, name)
        if not is_hub_name(name):
            raise UserError(f"{named}: there is no such file or folder")
        if backend == "openai-whisper" and whisper_dims(name) is None:
            raise UserError(f"{named} is no openai-whisper model size, nor a file here: {must}")
        if backend == "faster-whisper" and "/" not in name and name not in faster_whisper_sizes():
            raise UserError(f"{named} is no faster-whisper model size, nor a folder here: {must}")


def refuse_offline(backend: str, name: str) -> None:
    """Refuse, before any work, a model size or hub name not downloaded where HF_HUB_OFFLINE keeps the run from
    downloading (its load would fail after Demucs; openai-whisper's would try its own server regardless): for a run
    Whisper hears the song in (musicvid.prepare; a plan reads its published sizes alone)."""
    from huggingface_hub import is_offline_mode

    named = f"--asr-model {name}"
    if name == TINY or Path(name).expanduser().exists() or not is_offline_mode():
        return
    if backend == "openai-whisper":
        if whisper_dims(name) is None:  # (no size of its: check_asr_model said so, or a model built here)
            return
        from musicvid.models.internals import whisper_download  # (imports torch: offline runs alone)

        there = whisper_download(name).is_file()
    else:
        import faster_whisper

        try:
            there = bool(faster_whisper.download_model(name, local_files_only=True))
        except Exception:  # (huggingface_hub's: not in the cache, in its own error types)
            there = False
    if not there:
        raise UserError(f"{named}: {name} is not downloaded, and HF_HUB_OFFLINE keeps this run from downloading it")


def faster_whisper_sizes() -> list[str]:
    import faster_whisper

    return faster_whisper.available_models()


def check_whisper_checkpoint(path: Path, named: str, must: str) -> None:
    """An openai-whisper checkpoint: a torch archive (a zip holding its pickle, data.pkl), whole to its central
    directory at its end, whose pickle names the dims and model_state_dict whisper.load_model reads, and each of the
    dims (its ops read, nothing in it run, no weight read); what they hold is read as it loads."""
    try:
        with zipfile.ZipFile(path) as archive:
            pickle = next((entry for entry in archive.namelist() if entry.endswith("/data.pkl")), None)
            named_in = pickled_strings(archive.read(pickle)) if pickle else set()
    except (OSError, zipfile.BadZipFile):
        pickle = None
    if pickle is None:
        raise UserError(f"{named} is no openai-whisper checkpoint (no whole torch archive): {must}")
    if not WHISPER_KEYS <= named_in:
        raise UserError(
            f"{named} is a torch archive but no openai-whisper checkpoint (no {' and '.join(sorted(WHISPER_KEYS))}, "
            f"as openai-whisper's own .pt files hold): {must}"
        )
    if lacking := sorted(set(whisper_dims("tiny")) - named_in):  # (whisper.ModelDimensions' fields, each needed)
        raise UserError(
            f"{named} is an openai-whisper checkpoint whose dims lack {', '.join(lacking)}: the sizes its model is "
            "built with (a damaged or hand-made file?)"
        )
    checkpoint_dims(path, named)


def checkpoint_dims(path: Path, named: str) -> dict[str, int]:
    """The dims of the openai-whisper checkpoint at `path` (weights_files.pickled_state: no weight read, no code
    run), each a size a Whisper can be built with (check_dims)."""
    held = pickled_state(path, named, "openai-whisper's own .pt files hold their dims and tensors alone")
    dims = held.get("dims") if isinstance(held, dict) else None
    fields = whisper_dims("tiny")
    if not isinstance(dims, dict) or not dims.keys() >= fields.keys():
        raise UserError(f"{named} holds no dims of an openai-whisper checkpoint: the sizes its model is built with")
    check_dims({key: dims[key] for key in fields}, named)
    return {key: dims[key] for key in fields}


def check_dims(dims: dict, named: str, held: str = "dims") -> None:
    """Refuse dims no Whisper is built with, before it is built (10⁹ layers fill the memory; 0 heads divide by
    nothing): each a whole number from 1, the mel bins openai-whisper computes (80 or 128), the 1500 positions of
    its 30 s windows, each width a multiple of its heads, and MOST_PARAMETERS at most."""
    said = lambda key, why: UserError(f"{named}: its {held}' {key} is {dims[key]!r}{why}")  # noqa: E731
    for key, value in dims.items():
        if type(value) is not int or value < 1:
            raise said(key, ", not a size a model has")
    if dims["n_mels"] not in MEL_BINS:
        raise said("n_mels", f"; openai-whisper computes {' or '.join(map(str, MEL_BINS))} mel bins")
    if dims["n_audio_ctx"] != AUDIO_POSITIONS:
        raise said("n_audio_ctx", f"; openai-whisper hears 30 s windows, of {AUDIO_POSITIONS} positions")
    for half in ("audio", "text"):
        if dims[f"n_{half}_state"] % dims[f"n_{half}_head"]:
            raise said(f"n_{half}_state", f", which its n_{half}_head, {dims[f'n_{half}_head']}, does not divide")
    audio, text = dims["n_audio_state"], dims["n_text_state"]
    count = audio * (3 * dims["n_mels"] + 3 * audio) + 12 * dims["n_audio_layer"] * audio**2  # (convolutions, blocks)
    count += text * (dims["n_vocab"] + dims["n_text_ctx"]) + 16 * dims["n_text_layer"] * text**2  # (embeddings, blocks)
    if count > MOST_PARAMETERS:
        shown = f"{count / 1e9:,.1f} billion" if count < 10**18 else "over a billion billion"  # (a float holds it)
        raise UserError(
            f"{named}: its {held} describe a Whisper of {shown} parameters; large-v3 has 1.55 billion, and musicvid "
            f"takes none over {MOST_PARAMETERS / 1e9:.0f} billion"
        )


def pickled_strings(data: bytes) -> set[str]:
    """The strings a pickle holds (its dictionaries' keys among them), read op by op: nothing in it is run; none
    where it is damaged."""
    try:
        return {argument for _, argument, _ in pickletools.genops(data) if isinstance(argument, str)}
    except ValueError:
        return set()


def check_ctranslate2_folder(folder: Path, named: str, must: str) -> None:
    """A CTranslate2 Whisper folder: its model.bin whole, its config.json (where there) a JSON object, its
    tokenizer.json there, and a preprocessor_config.json giving the mel bins of a model not of MELS (large-v3's 128:
    faster-whisper reads them there alone, and computes MELS for the model to refuse)."""
    model = folder / "model.bin"
    if not model.is_file():
        raise UserError(f"{named} holds no model.bin: {must}")
    if not (folder / "tokenizer.json").is_file():
        raise UserError(
            f"{named} holds no tokenizer.json, without which faster-whisper would fetch another Whisper's from the "
            f"hub: convert the model with it ({COPY_TOKENIZER})"
        )
    if (folder / "config.json").exists():
        json_object(folder / "config.json", named)
    check_whisper_tokenizer(folder, named)
    check_not_pointer(model, f"{named}: its model.bin")
    with model.open("rb") as opened:
        version, spec = struct.unpack("<I", opened.read(4).ljust(4, b"\0"))[0], opened.read(64)
    if not 1 <= version <= MOST_VERSION:  # (no version CTranslate2 wrote or will soon: a web page, another format)
        raise UserError(f"{named}: its model.bin is no CTranslate2 model (its first bytes are no version of one)")
    kind = spec[2 : 2 + int.from_bytes(spec[:2], "little")].rstrip(b"\0").decode("utf-8", "replace")  # its spec's name
    if version == CTRANSLATE2_VERSION and kind != WHISPER_SPEC:
        raise UserError(f"{named} is a CTranslate2 {kind or 'model'}, not a Whisper: {must}")
    shapes: dict[str, tuple[int, ...]] = {}
    scalars: dict[str, int] = {}
    with model.open("rb") as opened:
        cut = cut_short(opened, model.stat().st_size, shapes, scalars)
    if cut:
        raise UserError(f"{named}: its model.bin is cut short ({cut})")
    mels = shapes.get(MELS_VARIABLE, (0, MELS))[1]
    said = folder / "preprocessor_config.json"
    says = json_object(said, named).get("feature_size", MELS) if said.is_file() else MELS
    if mels != says and said.is_file() and MELS_VARIABLE in shapes:
        raise UserError(
            f"{named}: its preprocessor_config.json's feature_size is {says}, where its model.bin reads {mels} mel bins"
        )
    if dims := header_dims(shapes, scalars):  # (its sizes as Whisper's: 0 heads divided by nothing as it was sized)
        check_dims(dims, named, "model.bin's sizes")
    if mels != says:
        raise UserError(
            f"{named} is a Whisper of {mels} mel bins (as large-v3's), and holds no preprocessor_config.json saying so, "
            f"without which faster-whisper computes {MELS}: convert the model with it ({COPY_TOKENIZER})"
        )


def check_whisper_tokenizer(folder: Path, named: str) -> None:
    """A CTranslate2 Whisper's tokenizer: its tokenizer.json Whisper's, holding the token a transcript starts with
    (GPT-2's failed in faster-whisper's own words), and its vocabulary file not empty."""
    for name in ("vocabulary.txt", "vocabulary.json"):
        if (folder / name).is_file() and (folder / name).stat().st_size == 0:
            raise UserError(f"{named}: its {name} is empty (a download or a copy cut short?)")
    read = json_object(folder / "tokenizer.json", named)
    model = read.get("model") if isinstance(read.get("model"), dict) else {}
    vocabulary = model.get("vocab") if isinstance(model.get("vocab"), dict) else {}
    added = {token.get("content") for token in read.get("added_tokens") or [] if isinstance(token, dict)}
    if START not in added and START not in vocabulary:
        raise UserError(
            f"{named}: its tokenizer.json is not a Whisper's: it has no {START}, which starts every transcript"
        )


def cut_short(opened: BinaryIO, size: int, shapes: dict[str, tuple[int, ...]], scalars: dict[str, int]) -> str | None:
    """Where a CTranslate2 model.bin of the version read here ends before its header and variables say it does, in
    words; None where it is whole (or of another version: read as it loads). Each variable's shape into `shapes`, and
    the value of each whole number held alone (a shape of none: num_heads) into `scalars`."""

    def read(length: int) -> bytes:
        if len(data := opened.read(length)) < length:
            raise EOFError
        return data

    def take(form: str):
        return struct.unpack(form, read(struct.calcsize(form)))[0]

    def string() -> str:
        return read(take("H")).rstrip(b"\0").decode("utf-8", "replace")

    name = "its header"
    try:
        if take("I") != CTRANSLATE2_VERSION:
            return None
        string(), take("I")  # the spec's name and revision
        for number in range(take("I")):
            name = f"its variable {number + 1}'s name"  # (a name cut short is not said as a name)
            variable = string()
            name = f"its variable {variable}"
            shapes[variable] = tuple(take("i") for _ in range(take("B")))
            take("B")  # the data type
            length = take("I")
            if not shapes[variable] and length <= 4:  # (the spec's int8, int16 and int32 settings)
                scalars[variable] = int.from_bytes(read(length), "little", signed=True)
            else:
                opened.seek(length, 1)
            if opened.tell() > size:
                raise EOFError
        for number in range(take("I")):
            name = f"its alias {number + 1}"  # (what is said where its name is cut short)
            name = f"its alias {string()}"
            string()
        if opened.tell() > size:
            raise EOFError
    except EOFError:
        return f"{name} runs past its end, at {size:,} bytes"
    return None


def ctranslate2_dims(name: str) -> dict | None:
    """The dims (as openai-whisper's ModelDimensions names them) of the CTranslate2 Whisper in folder `name`, read
    from its model.bin's header: the shapes of its convolution, embeddings, position encodings and layers, and its
    heads' counts; None where `name` is no such folder, or its model.bin is of another version or says too little."""
    model = Path(name).expanduser() / "model.bin"
    shapes: dict[str, tuple[int, ...]] = {}
    scalars: dict[str, int] = {}
    try:
        with model.open("rb") as opened:
            if cut_short(opened, model.stat().st_size, shapes, scalars):
                return None
    except OSError:
        return None
    return header_dims(shapes, scalars)


def header_dims(shapes: dict[str, tuple[int, ...]], scalars: dict[str, int]) -> dict | None:
    """The dims a CTranslate2 Whisper's header gives (`cut_short`'s shapes and scalars); None where it lacks one."""
    layers = {half: len({v.split("/")[1] for v in shapes if re.match(f"{half}/layer_[0-9]+/", v)}) for half in HALVES}
    try:
        (state, mels, _), (vocabulary, width) = shapes[MELS_VARIABLE], shapes["decoder/embeddings/weight"]
        audio, text = (shapes[f"{half}/position_encodings/encodings"][0] for half in HALVES)
        heads = [scalars[f"{half}/num_heads"] for half in HALVES]
    except (KeyError, ValueError):
        return None
    return dict(
        n_mels=mels, n_audio_ctx=audio, n_audio_state=state, n_audio_head=heads[0], n_audio_layer=layers["encoder"],
        n_vocab=vocabulary, n_text_ctx=text, n_text_state=width, n_text_head=heads[1], n_text_layer=layers["decoder"],
    )  # fmt: skip
