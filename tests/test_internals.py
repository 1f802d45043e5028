"""Library internals: what a library does not document is used in musicvid.models.internals alone, which names each
use, why and the version checked; any other use, wherever it is written, is found by its pattern (library_uses).
And a kept-loaded pipeline that one render offloaded serves the next own, which did not ask for it, unhooked on its
device."""

import ast
import builtins
import importlib
import importlib.util
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import torch

from musicvid.models.internals import has_offload_hooks
from musicvid.models.timing import Timings
from musicvid.models.tiny import local_diffusion
from musicvid.models.tiny_video import tiny_ltx_video
from musicvid.pictures import switches
from musicvid.pictures.clips import video_pipeline_for
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture
from musicvid.pictures.switches import compute_device, pipeline_for
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("musicvid", "ui", "vipe_core", "benchmarks")
PROJECT = (*SCANNED, "tests")
INTERNALS = ROOT / "musicvid" / "models" / "internals.py"

# Libraries documented by their READMEs: these of their modules are documented (a package: what it exports), no
# other module of theirs is. openai-whisper's README shows load_model, transcribe, load_audio, pad_or_trim,
# log_mel_spectrogram, detect_language and decode; faster-whisper's, what the package exports (WhisperModel, whose
# docstrings it sends its reader to); Demucs', demucs.separate.main and (the api.md of its docs) demucs.api.
DOCUMENTED_MODULES = {
    "whisper": {"whisper"},
    "faster_whisper": {"faster_whisper"},
    "demucs": {"demucs", "demucs.api", "demucs.separate"},
}
# Modules of libraries with a documentation site that the site does not cover, with the names in them it does
UNDOCUMENTED_MODULES = {
    "diffusers.utils.torch_utils": {"randn_tensor"},  # diffusers' Utilities page
    "transformers.utils": {"logging"},  # its Logging page (the Internal Helpers pages document the library's code)
    "transformers.convert_slow_tokenizer": set(),
    "gradio.utils": set(),
}
# The exceptions, each documented: names with an underscore that a library documents as public...
DOCUMENTED_PRIVATES = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}  # namedtuple's
# ...a library's methods its documentation has a subclass override...
DOCUMENTED_OVERRIDES = {
    "ArgumentParser.error",  # argparse: "If you override this in a subclass, it should not return."
    "LCMScheduler.step",  # diffusers' schedulers: step(model_output, timestep, sample) is what a pipeline calls
    "Module.forward",  # torch.nn.Module: "Should be overridden by all subclasses."
}
# ...and the hooks Python's documentation has a program set ("can be overridden")
DOCUMENTED_HOOKS = {"sys.excepthook", "sys.unraisablehook"}
# Calls that name an attribute by a string, and where in their arguments
NAMED_ATTRIBUTES = {"getattr": 1, "setattr": 1, "hasattr": 1, "delattr": 1, "attrgetter": 0, "methodcaller": 0}
RUN_TIME = "a class given at run time"


def private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__") and name not in DOCUMENTED_PRIVATES


def is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


@dataclass(frozen=True)
class Scope:
    """What a module's names stand for: its imports (each as a dotted path: `import a.b` binds a, `from a import b
    as c` c), the functions it defines, those of them that make and return a function, and its classes."""

    imports: dict[str, str]
    functions: set[str]
    factories: set[str]
    classes: set[str]

    @classmethod
    def of(cls, tree: ast.Module) -> "Scope":
        imports, functions, factories = {}, set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imports |= {alias.asname or alias.name.split(".")[0]: alias.name.split(".")[0] for alias in node.names}
                imports |= {alias.asname: alias.name for alias in node.names if alias.asname}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imports |= {alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.add(node.name)
                inner = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                returned = [n.value for n in node.body if isinstance(n, ast.Return)]
                if any(isinstance(v, ast.Lambda) or isinstance(v, ast.Name) and v.id in inner for v in returned):
                    factories.add(node.name)
        classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        return cls(imports, functions, factories, classes)


def dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The dotted path an expression names through an imported name (whisper.timing.find_alignment), else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([bound[node.id], *reversed(parts)]) if isinstance(node, ast.Name) and node.id in bound else None


@cache
def is_module(path: str) -> bool:
    """Whether `path` names a module (not a name a package exports under a module's name: whisper.transcribe)."""
    package, _, name = path.rpartition(".")
    attribute = getattr(importlib.import_module(package), name, None)
    return inspect.ismodule(attribute) if attribute is not None else importlib.util.find_spec(path) is not None


def path_use(path: str) -> str | None:
    """What a library's dotted path (diffusers.utils.torch_utils.unwrap_module) reaches that is undocumented."""
    parts = path.split(".")
    if parts[0] in PROJECT:
        return None
    if hidden := [part for part in parts if private(part)]:
        return f"private {hidden[0]}"
    if parts[0] in DOCUMENTED_MODULES:
        module = parts[0]
        for part in parts[1:]:
            if not is_module(f"{module}.{part}"):
                break
            module += f".{part}"
        return None if module in DOCUMENTED_MODULES[parts[0]] else f"undocumented {module}"
    for module, documented in UNDOCUMENTED_MODULES.items():
        if path == module or (path.startswith(f"{module}.") and parts[len(module.split("."))] not in documented):
            return f"undocumented {module}"
    return None


def patches(value: ast.expr, scope: Scope) -> bool:
    """Whether `value`, put in an attribute of another object, puts a function in a method's place: a lambda, a
    function the module defines, one bound or partly applied (MethodType, partial), or a wrapper of what was
    there (what a function of the module that makes functions makes)."""
    if isinstance(value, ast.Name):
        return value.id in scope.functions
    if not isinstance(value, ast.Call):
        return isinstance(value, ast.Lambda)
    called = (dotted(value.func, scope.imports) or ast.unparse(value.func)).rpartition(".")[2]
    return called in ("partial", "MethodType") or called in scope.factories


def base_class(base: ast.expr, scope: Scope) -> type | str | None:
    """A class's base: "project" where it is the project's, else the library's class, or None where it is given
    at run time (a variable, a call; a library class musicvid.models.internals gives is the library's)."""
    base = base.value if isinstance(base, ast.Subscript) else base  # (a generic's class)
    call = isinstance(base, ast.Call)
    path = dotted(base.func if call else base, scope.imports)
    if call and path and path.startswith("musicvid.models.internals."):
        return getattr(importlib.import_module("musicvid.models.internals"), path.rpartition(".")[2])()
    if call:
        return None
    if isinstance(base, ast.Name) and base.id in scope.classes or path and path.split(".")[0] in PROJECT:
        return "project"
    if isinstance(base, ast.Name) and base.id in vars(builtins) and base.id not in scope.imports:
        return vars(builtins)[base.id]
    return getattr(importlib.import_module(path.rpartition(".")[0]), path.rpartition(".")[2]) if path else None


def class_uses(node: ast.ClassDef, scope: Scope) -> Iterator[str]:
    """A subclass of a library's class that overrides a method of it (one its documentation does not have a
    subclass override) or reads a private it inherits; any method of a subclass of a class given at run time."""
    bases = [base for base in (base_class(b, scope) for b in node.bases) if base != "project"]
    if not bases:
        return
    methods = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    own = methods | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    for method in sorted(name for name in methods if not name.endswith("__")):
        for base in bases:
            if base is None:
                yield f"overrides {method} of {RUN_TIME}"
            elif hasattr(base, method) and f"{base.__name__}.{method}" not in DOCUMENTED_OVERRIDES:
                yield f"overrides {base.__name__}.{method}"
    for read in ast.walk(node):
        if isinstance(read, ast.Attribute) and is_self(read.value) and private(read.attr) and read.attr not in own:
            yield f"private {read.attr}"


def call_uses(call: ast.Call, scope: Scope) -> Iterator[str]:
    """A private keyword of a call, a private named by a string, an attribute set by its name to a function."""
    yield from (f"private keyword {k.arg}" for k in call.keywords if k.arg and private(k.arg))
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if name not in NAMED_ATTRIBUTES or len(call.args) <= NAMED_ATTRIBUTES[name]:
        return
    named = call.args[NAMED_ATTRIBUTES[name]]
    if isinstance(named, ast.Constant) and isinstance(named.value, str):
        yield from (f"private {part}" for part in named.value.split(".") if private(part))
        if name == "setattr" and len(call.args) == 3 and not is_self(call.args[0]) and patches(call.args[2], scope):
            yield f"patches {ast.unparse(call.args[0])}.{named.value}"


def assigned(targets: list[ast.expr]) -> Iterator[ast.Attribute]:
    """The attributes an assignment or a del sets (through tuples and lists), not those read in a subscript."""
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from assigned(target.elts)
        elif isinstance(target, ast.Starred):
            yield from assigned([target.value])
        elif isinstance(target, ast.Attribute) and not is_self(target.value):
            yield target


def node_uses(node: ast.AST, scope: Scope) -> Iterator[str]:
    """What one node of a module uses that its library does not document (a line of library_uses)."""
    if isinstance(node, ast.Import):
        yield from filter(None, (path_use(alias.name) for alias in node.names))
    elif isinstance(node, ast.ImportFrom) and node.level == 0:
        yield from filter(None, (path_use(f"{node.module}.{alias.name}") for alias in node.names))
    elif isinstance(node, ast.Attribute):
        if private(node.attr) and not is_self(node.value):
            yield f"private {node.attr}"
        yield from filter(None, [path_use(dotted(node, scope.imports) or "")])
    elif isinstance(node, ast.Call):
        yield from call_uses(node, scope)
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if patches(node.value, scope):
            patched = (ast.unparse(target) for target in assigned(targets))
            yield from (f"patches {name}" for name in patched if name not in DOCUMENTED_HOOKS)
    elif isinstance(node, ast.Delete):
        yield from (f"deletes {ast.unparse(target)}" for target in assigned(node.targets))
    elif isinstance(node, ast.ClassDef):
        yield from class_uses(node, scope)


def library_uses(source: str) -> list[str]:
    """Each use in a module's `source` of what a library does not document, as "line: what": (a) an import of, or
    a path through, a library's private module or name (`_x`) or a module its documentation does not cover
    (DOCUMENTED_MODULES, UNDOCUMENTED_MODULES); (b) a private attribute (`._x`) of anything but the object's own
    class (self, cls), or one it inherits from a library's class, a private named by a string (getattr, hasattr,
    attrgetter...) or a private keyword of a call; (c) an object's method patched (a function, or a wrapper of
    what was there, put in an attribute of another object; an attribute deleted) or a library class's method
    overridden by a subclass; (d) but the exceptions documented above."""
    tree = ast.parse(source)
    scope = Scope.of(tree)
    found = {(node.lineno, use) for node in ast.walk(tree) for use in node_uses(node, scope)}
    return [f"{line}: {use}" for line, use in sorted(found)]


def test_no_library_is_used_past_its_documentation_outside_internals():
    found = [
        f"{path.relative_to(ROOT)}:{use}"
        for package in SCANNED
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != INTERNALS
        for use in library_uses(path.read_text())
    ]
    assert not found, "a library used past its documentation outside musicvid/models/internals.py:\n" + "\n".join(found)


CAUGHT = {
    "model.decoder._forward_hooks.clear()": "private _forward_hooks",
    "import torch\ntorch._dynamo.reset()": "private _dynamo",
    "from torch.utils._python_dispatch import TorchDispatchMode": "private _python_dispatch",
    "import whisper\nheads = whisper._ALIGNMENT_HEADS": "private _ALIGNMENT_HEADS",
    "found = hasattr(module, '_hf_hook')": "private _hf_hook",
    "from operator import attrgetter\nunet = attrgetter('unet._orig_mod')(pipe)": "private _orig_mod",
    "found = cached_file(name, 'vocab.json', _raise_exceptions_for_missing_entries=False)": "private keyword",
    "from diffusers.utils.torch_utils import unwrap_module": "undocumented diffusers.utils.torch_utils",
    "from diffusers.utils import torch_utils": "undocumented diffusers.utils.torch_utils",
    "import diffusers\ndiffusers.utils.torch_utils.is_compiled_module(unet)": "undocumented diffusers.utils.torch_utils",
    "import whisper\nframes = whisper.audio.N_FRAMES": "undocumented whisper.audio",
    "import whisper.timing": "undocumented whisper.timing",
    "from faster_whisper.vad import get_speech_timestamps": "undocumented faster_whisper.vad",
    "from demucs.apply import apply_model": "undocumented demucs.apply",
    "def keeping(register):\n    def kept(*args):\n        return register(*args)\n    return kept\n"
    "model.register_forward_hook = keeping(model.register_forward_hook)": "patches model.register_forward_hook",
    "import types\npipe.prepare_ip_adapter_image_embeds = types.MethodType(f, pipe)": "patches pipe.prepare_ip",
    "def prepare(*args):\n    pass\npipe.prepare_ip_adapter_image_embeds = prepare": "patches pipe.prepare_ip",
    "setattr(unet, 'forward', lambda *args: None)": "patches unet.forward",
    "del module.register_forward_hook": "deletes module.register_forward_hook",
    "from diffusers import StableDiffusionPipeline\nclass Mine(StableDiffusionPipeline):\n"
    "    def prepare_ip_adapter_image_embeds(self, *args):\n        pass": "overrides StableDiffusionPipeline.prepare_ip",
    "def per_picture(kind):\n    class Mine(kind):\n        def prepare_ip_adapter_image_embeds(self, *args):\n"
    "            pass\n    return Mine": f"overrides prepare_ip_adapter_image_embeds of {RUN_TIME}",
    "from diffusers import LCMScheduler\nclass Mine(LCMScheduler):\n    def step(self, *args):\n"
    "        return self._step_index": "private _step_index",
}
PUBLIC = """
import argparse
import sys
import torch
import whisper
from diffusers import DPMSolverMultistepScheduler, LCMScheduler
from diffusers.utils.torch_utils import randn_tensor
from faster_whisper import WhisperModel
from transformers.utils import logging


class Job(dict[str, int]):
    def __init__(self, point):
        self._point = point._replace(x=1)

    def _kept(self):
        return self._point


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise SystemExit(2)


class Sampler(LCMScheduler):
    def step(self, *args, **kwargs):
        self._noise = randn_tensor((1,))
        return super().step(*args, **kwargs)


def load(pipe, name):
    model = whisper.load_model(name)
    pipe.unet = torch.compile(pipe.unet)
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
    words = whisper.transcribe(model, "song.wav", word_timestamps=True)
    logging.set_verbosity_error()
    sys.unraisablehook = lambda lost: None
    return WhisperModel(name).transcribe("song.wav"), words, getattr(pipe, "unet", None), type(pipe).__name__
"""


@pytest.mark.parametrize("source", CAUGHT, ids=list(CAUGHT.values()))
def test_a_new_use_past_a_librarys_documentation_is_caught(source):
    assert any(CAUGHT[source] in use for use in library_uses(source)), library_uses(source)


def test_documented_uses_pass():
    assert library_uses(PUBLIC) == []


def modules(pipe) -> dict[str, torch.nn.Module]:
    return {name: m for name, m in pipe.components.items() if isinstance(m, torch.nn.Module)}


def pictures(pipe, settings: RenderSettings) -> np.ndarray:
    scenes = [
        Scene(index=i, kind="lyric", start=float(i), end=i + 1.0, text="", prompt=prompt, seed=10 + i)
        for i, prompt in enumerate(["a red sky over the city", "blue water under a bridge"])
    ]
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    own = pipeline_for(pipe, settings)
    group = [Picture(path=None, key="", scene=0, target=1, t=t) for t in (0.0, 0.5)]
    return draw_group(own, SceneInputs(own, board, [0, 1], settings), group, settings, Timings())


def test_a_render_that_asks_for_no_offloading_gets_a_kept_pipeline_back_unhooked(monkeypatch):
    # offloading "from" the CPU: accelerate's hooks as on CUDA, moving the weights between the CPU and itself
    monkeypatch.setattr(switches, "OFFLOADED_FROM", frozenset({"cpu"}))
    plain = RenderSettings(size=(64, 64), steps=2)
    kept = local_diffusion()
    first = pictures(kept, RenderSettings(size=(64, 64), steps=2, low_vram=True))  # model offload, slicing
    assert all(has_offload_hooks(m) for m in modules(kept).values())  # the first render ran offloaded
    assert kept.vae.use_slicing
    second = pictures(kept, plain)
    for name, module in modules(kept).items():
        assert not has_offload_hooks(module), name
        assert {p.device.type for p in module.parameters()} == {"cpu"}, name
    assert compute_device(kept).type == "cpu"
    assert not kept.vae.use_slicing and not kept.vae.use_tiling
    assert not any("Sliced" in type(p).__name__ for p in kept.unet.attn_processors.values())
    assert np.array_equal(second, pictures(local_diffusion(), plain))  # as a fresh pipeline draws them
    # offloading moves the weights and changes no picture (the first render's sliced attention rounds otherwise)
    assert np.abs(first.astype(int) - second).max() <= 1


def test_sequential_offloading_comes_off_with_its_weights_back(monkeypatch):
    monkeypatch.setattr(switches, "OFFLOADED_FROM", frozenset({"cpu"}))
    kept, fresh = local_diffusion(), local_diffusion()
    pipeline_for(kept, RenderSettings(), ("sequential-offload",))
    assert {p.device.type for p in kept.unet.parameters()} == {"meta"}  # each layer's weights wait in the hook
    pipeline_for(kept, RenderSettings())
    assert not any(has_offload_hooks(m) for m in modules(kept).values())
    assert {p.device.type for m in modules(kept).values() for p in m.parameters()} == {"cpu"}
    for name, module in modules(kept).items():
        assert all(
            torch.equal(a, b) for a, b in zip(module.state_dict().values(), modules(fresh)[name].state_dict().values())
        )


def test_a_video_render_without_offloading_gets_the_kept_video_pipeline_unhooked(monkeypatch):
    monkeypatch.setattr(switches, "OFFLOADED_FROM", frozenset({"cpu"}))
    kept = tiny_ltx_video()
    video_pipeline_for(kept, RenderSettings(low_vram=True))
    assert has_offload_hooks(kept.transformer) and kept.vae.use_tiling
    video_pipeline_for(kept, RenderSettings())
    assert not any(has_offload_hooks(m) for m in modules(kept).values()) and not kept.vae.use_tiling
    assert {p.device.type for m in modules(kept).values() for p in m.parameters()} == {"cpu"}
