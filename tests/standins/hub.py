"""The Hugging Face cache the stand-ins are written into, and the file formats their weights take."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes


def write_repo(hub: Path, repo_id: str, files: dict[str, bytes]) -> Path:
    """One repository as huggingface_hub caches it: blobs by hash, a snapshot of links, refs/main."""
    folder = hub / f"models--{repo_id.replace('/', '--')}"
    revision = hashlib.sha1(repo_id.encode()).hexdigest()
    snapshot = folder / "snapshots" / revision
    for name, data in files.items():
        blob = folder / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path(*[".."] * (len(Path(name).parts) + 1), "blobs", blob.name))
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(revision)
    return snapshot


def write_folder(folder: Path, files: dict[str, bytes]) -> Path:
    """A repository's files as a folder of its layout (a copy of it on this machine, not the cache's)."""
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def as_json(data: dict) -> bytes:
    return json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"


def pickled(state: dict[str, torch.Tensor]) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def weights(
    state: dict[str, torch.Tensor], stem: str, *, bin_stem: str | None = None, fp16: bool = True, bins: bool = True
) -> dict:
    """A module's weights under the names the SD repository uses: safetensors and (with `bins`) pickle, fp32
    and (with `fp16`) fp16."""
    state = {k: v.contiguous() for k, v in state.items()}
    half = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    bin_stem = bin_stem or stem
    files = {f"{stem}.safetensors": safetensors_bytes(state)} | ({f"{bin_stem}.bin": pickled(state)} if bins else {})
    if fp16:
        files[f"{stem}.fp16.safetensors"] = safetensors_bytes(half)
        files |= {f"{bin_stem}.fp16.bin": pickled(half)} if bins else {}
    return files


def stored(state: dict[str, torch.Tensor], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Weights as a repository stores them: the floating-point tensors in `dtype`, the others (counters) as they are."""
    return {name: (t.to(dtype) if t.is_floating_point() else t).contiguous() for name, t in state.items()}


def sharded(state: dict[str, torch.Tensor], stem: str, index: str, shards: int) -> dict[str, bytes]:
    """Weights in `shards` safetensors files named as transformers and diffusers shard them
    (`stem`-00001-of-0000N.safetensors), with the index of which file holds each tensor."""
    names = sorted(state)
    files, weight_map = {}, {}
    for number in range(shards):
        shard = f"{stem}-{number + 1:05d}-of-{shards:05d}.safetensors"
        part = {name: state[name].contiguous() for name in names[number::shards]}
        files[shard] = safetensors_bytes(part)
        weight_map |= dict.fromkeys(part, shard)
    total = sum(tensor.numel() * tensor.element_size() for tensor in state.values())
    return files | {index: as_json({"metadata": {"total_size": total}, "weight_map": weight_map})}


def snapshot(hub: Path, repo_id: str) -> Path:
    """The snapshot folder of `repo_id` in the cache `hub`: the repository's files as the app finds them."""
    return next((hub / f"models--{repo_id.replace('/', '--')}" / "snapshots").iterdir())
