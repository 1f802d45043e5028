"""What a benchmark ran, for its results file: the machine, and each model as read back from its modules
(musicvid.models.readback: dtype, device, size of the weights, each module's dtype) rather than as the
benchmark meant to build it. A render's models are read back by its registry into its Timings."""

from __future__ import annotations

import os
import platform
from typing import Any

import torch

from musicvid.models.readback import describe_model


def device_name(device: torch.device) -> str:
    """The device in words: the GPU's name, or the CPU with its cores and torch's threads."""
    if device.type == "cuda":
        return f"CUDA {torch.cuda.get_device_name(device)}"
    return f"CPU ({os.cpu_count()} cores, {torch.get_num_threads()} threads)"


def machine(device: torch.device) -> dict[str, str]:
    return {"host": platform.node(), "device": device_name(device), "torch": torch.__version__}


def models_ran(**models: Any) -> dict[str, dict[str, Any]]:
    """Each model by its role, as read back from its modules."""
    return {role: describe_model(model) for role, model in models.items()}
