"""The Demucs that ``--separate-vocals`` loads, as its repository holds it:

- ``adefossez/HTDemucs`` (what demucs 4.1 loads for ``htdemucs``; its tools/export_hf.py writes it):
  htdemucs.yaml (the bag: ``models: ['955717e8']``), 955717e8.safetensors with the model's class, args
  and kwargs as JSON in the safetensors metadata (fractions as ``{"_type": "fraction", ...}``; 533
  float16 tensors), a 955717e8.json sidecar with the same and the training record, README.md."""

from __future__ import annotations

import json

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny import DEMUCS_SOURCES
from tests.standins.hub import as_json

HTDEMUCS = "adefossez/HTDemucs"
HTDEMUCS_SIGNATURE = "955717e8"


# The kwargs the published 955717e8 carries in its metadata (args: []); the stand-in cuts only sizes, which
# keeps the published state dict's 533 keys (42M weights there, 335k here).
HTDEMUCS_KWARGS = {
    "sources": DEMUCS_SOURCES,
    "audio_channels": 2,
    "samplerate": 44100,
    "segment": {"_type": "fraction", "numerator": 39, "denominator": 5},
    "channels": 48,
    "channels_time": None,
    "growth": 2,
    "nfft": 4096,
    "wiener_iters": 0,
    "end_iters": 0,
    "wiener_residual": False,
    "cac": True,
    "depth": 4,
    "rewrite": True,
    "multi_freqs": [],
    "multi_freqs_depth": 3,
    "freq_emb": 0.2,
    "emb_scale": 10,
    "emb_smooth": True,
    "kernel_size": 8,
    "stride": 4,
    "time_stride": 2,
    "context": 1,
    "context_enc": 0,
    "norm_starts": 4,
    "norm_groups": 4,
    "dconv_mode": 3,
    "dconv_depth": 2,
    "dconv_comp": 8,
    "dconv_init": 0.001,
    "bottom_channels": 512,
    "t_layers": 5,
    "t_hidden_scale": 4.0,
    "t_heads": 8,
    "t_dropout": 0.02,
    "t_layer_scale": True,
    "t_gelu": True,
    "t_emb": "sin",
    "t_max_positions": 10000,
    "t_max_period": 10000.0,
    "t_weight_pos_embed": 1.0,
    "t_sparse_self_attn": False,
    "t_sparse_cross_attn": False,
    "t_cross_first": False,
    "rescale": 0.1,
}
HTDEMUCS_TINY_SIZES = {"channels": 8, "bottom_channels": 16, "t_heads": 2, "dconv_comp": 4, "t_hidden_scale": 2.0}


def htdemucs_files() -> dict[str, bytes]:
    from demucs.hf import _decode_json  # the loader's own reading of the fraction
    from demucs.htdemucs import HTDemucs

    kwargs = {**HTDEMUCS_KWARGS, **HTDEMUCS_TINY_SIZES}
    torch.manual_seed(3)
    model = HTDemucs(**_decode_json(kwargs))
    metadata = {"klass": "demucs.htdemucs.HTDemucs", "args": "[]", "kwargs": json.dumps(kwargs)}
    sig = HTDEMUCS_SIGNATURE
    state = {k: v.half().contiguous() for k, v in model.state_dict().items()}  # published in float16
    return {
        "htdemucs.yaml": f"models: ['{sig}']\n".encode(),
        f"{sig}.safetensors": safetensors_bytes(state, metadata),
        f"{sig}.json": as_json({**metadata, "training_args": {}, "metrics": {}}),
        "README.md": b"---\nlicense: mit\ntags:\n- demucs\n---\n# htdemucs (stand-in)\n",
    }
