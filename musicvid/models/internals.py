"""The one place musicvid reaches into a library's private names, where no public API does the job. Each is a
small function naming the private it touches, why no public call serves, and the version it was checked
against; everywhere else the libraries' public APIs alone are used (tests/test_internals.py fails on a
private anywhere but here). A library upgrade checks this module first."""

from __future__ import annotations

import torch


def dispatch_mode_base() -> type:
    """torch's `TorchDispatchMode`, the base class of a mode that sees every aten operation (musicvid.models.
    activations counts the tensors a pass makes with one). It lives in the private module
    `torch.utils._python_dispatch` only: torch documents it there (the __torch_dispatch__ notes) and has no
    public path to it; `torch.overrides.TorchFunctionMode`, public, sees Python calls, not the tensors each
    operation makes. Checked against torch 2.14.1."""
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


def has_offload_hooks(module: torch.nn.Module) -> bool:
    """Whether accelerate's hooks (diffusers' model or sequential CPU offloading) are on `module` or any
    module in it. accelerate marks a hooked module by its private `_hf_hook` attribute alone, and neither it
    nor diffusers has a public call that says so (diffusers' own checks read `_hf_hook` too); the hooks
    come off with the public `DiffusionPipeline.remove_all_hooks()`. Checked against accelerate 1.15.0 and
    diffusers 0.42.1."""
    return any(hasattr(part, "_hf_hook") for part in module.modules())
