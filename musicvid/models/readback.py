"""What a loaded model is, read back from its modules rather than from what was asked: the dtype and device
its weights are in, and their size. The run report (timings.json) and the benchmarks say what ran from this."""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from musicvid.models.internals import ctranslate2_whisper

GB = 1e9


def torch_modules(model: Any) -> dict[str, torch.nn.Module]:
    """The torch modules of a loaded model by name: a pipeline's components, or the module a wrapper holds
    (Whisper's and ViPE's, spandrel's descriptor's)."""
    if isinstance(model, torch.nn.Module):
        return {"model": model}
    components = getattr(model, "components", None)
    if isinstance(components, dict):  # a diffusers pipeline
        return {name: module for name, module in components.items() if isinstance(module, torch.nn.Module)}
    inner = getattr(model, "model", None)
    return torch_modules(inner) if inner is not None else {}


def module_dtype(module: torch.nn.Module) -> torch.dtype | None:
    """The dtype most of a module's floating-point weights are in."""
    counts = Counter()
    for tensor in [*module.parameters(), *module.buffers()]:
        if tensor.is_floating_point():
            counts[tensor.dtype] += tensor.numel()
    return counts.most_common(1)[0][0] if counts else None


def module_device(module: torch.nn.Module) -> torch.device | None:
    return next((p.device for p in module.parameters()), None)


def weights_gb(module: torch.nn.Module) -> float:
    return sum(t.numel() * t.element_size() for t in [*module.parameters(), *module.buffers()]) / GB


def describe_model(model: Any) -> dict[str, Any]:
    """dtype, device, size of weights and, for a pipeline, each module's dtype. The dtype is the main
    module's: a pipeline's denoiser (UNet or transformer), else its largest module. A CTranslate2 model
    (faster-whisper) is read from its own compute type and device."""
    if model is None:
        return {"dtype": None, "device": None, "weights_gb": 0.0}
    ctranslate2 = ctranslate2_whisper(getattr(model, "model", None))
    if ctranslate2 is not None:
        return {"dtype": ctranslate2.compute_type, "device": ctranslate2.device, "weights_gb": None}
    modules = torch_modules(model)
    if not modules:
        return {"dtype": None, "device": None, "weights_gb": 0.0}
    sizes = {name: weights_gb(module) for name, module in modules.items()}
    main = next((n for n in ("unet", "transformer") if n in modules), max(sizes, key=sizes.get))
    described = {
        "dtype": dtype_text(module_dtype(modules[main])),
        "device": str(module_device(modules[main])),
        "weights_gb": round(sum(sizes.values()), 4),
    }
    if len(modules) > 1:
        described["modules"] = {name: dtype_text(module_dtype(module)) for name, module in modules.items()}
    return described


def dtype_text(dtype: torch.dtype | None) -> str | None:
    return None if dtype is None else str(dtype).removeprefix("torch.")
