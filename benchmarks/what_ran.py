"""What a benchmark ran, for its results file: the machine (and the versions that decide which kernels run: CUDA,
cuDNN, torch, diffusers, transformers; the GPU's clocks), and each model as read back from its modules
(musicvid.models.readback: dtype, device, size of the weights, each module's dtype) rather than as the
benchmark meant to build it. A render's models are read back by its registry into its Timings."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib.metadata import version
from typing import Any

import torch

from musicvid.core.errors import UserError
from musicvid.models.readback import describe_model


def device_name(device: torch.device) -> str:
    """The device in words: the GPU's name, or the CPU with its cores and torch's threads."""
    if device.type == "cuda":
        return f"CUDA {torch.cuda.get_device_name(device)}"
    return f"CPU ({os.cpu_count()} cores, {torch.get_num_threads()} threads)"


def machine(device: torch.device) -> dict[str, str]:
    return {"host": platform.node(), "device": device_name(device), "torch": torch.__version__}


def versions() -> dict[str, Any]:
    """What decides the kernels a GPU runs, besides the code: the libraries, --compile's torch.compile backend (an
    inherited MUSICVID_COMPILE_BACKEND=eager compiles nothing), inductor's and the allocator's settings from the
    environment, and whether float32 matrix products and convolutions may take TF32."""
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    settings = {k: v for k, v in os.environ.items() if k.startswith("TORCHINDUCTOR_") or k == "PYTORCH_CUDA_ALLOC_CONF"}
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(cudnn) if cudnn else None,
        "diffusers": version("diffusers"),
        "transformers": version("transformers"),
        "compile_backend": compile_backend_named(),
        "environment": dict(sorted(settings.items())),
        "allow_tf32": {"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn": torch.backends.cudnn.allow_tf32},
    }


def compile_backend_named() -> str:
    """--compile's backend as musicvid reads it, or why it would refuse it."""
    from musicvid.pictures.switches import compile_backend  # (diffusers' import: only when a run is recorded)

    try:
        return compile_backend()
    except UserError as error:
        return str(error)


CLOCKS = "clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu,driver_version"


def gpu_clocks() -> dict[str, str] | str:
    """The GPU's clocks (MHz), power (W) and temperature now, as nvidia-smi reads them (a GPU held below its
    clocks draws slower: read at the start and the end of a run)."""
    smi = shutil.which("nvidia-smi")
    if smi is None or not torch.cuda.is_available():
        return "no nvidia-smi here"
    index = str(torch.cuda.current_device())
    query = [smi, f"--query-gpu={CLOCKS}", "--format=csv,noheader,nounits", "-i", index]
    try:
        read = subprocess.run(query, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:  # the clocks are beside the rows, never worth the rows themselves
        return "nvidia-smi did not answer within 30 s"
    if read.returncode != 0:
        return f"nvidia-smi failed: {read.stderr.strip()[:200]}"
    return dict(zip(CLOCKS.split(","), (value.strip() for value in read.stdout.split(","))))


def models_ran(**models: Any) -> dict[str, dict[str, Any]]:
    """Each model by its role, as read back from its modules."""
    return {role: describe_model(model) for role, model in models.items()}
