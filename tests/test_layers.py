"""The shape of the code: packages import downwards only (benchmarks -> tests -> ui -> musicvid -> vipe_core: the
benchmarks use the tests' fixtures, the app never reaches into the tests; only a benchmark's own test imports it),
and inside musicvid its layers do, in the order data flows (LAYERS); no module imports one that imports it back
(imports inside functions and those for annotations alone, under TYPE_CHECKING, count too: they only hide a
circle); a few modules stay at musicvid's top; and no module or function grows past what one reads in a sitting,
the tests and the benchmarks included."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("benchmarks", "tests", "ui", "musicvid", "vipe_core")  # each may import those after it only
# the tests of benchmark scripts themselves, which import them
BENCHMARK_TESTS = (
    "tests.test_against_whole",
    "tests.test_benchmark_rows",
    "tests.test_benchmarks",
    "tests.test_device_benchmark",
    "tests.test_device_budget",
    "tests.test_jamendo_gate",
    "tests.test_kit",
    "tests.test_lyric_matrix",
    "tests.test_ncnn_weights",
    "tests.test_published_upscaler",  # (benchmarks.restored's measures)
    "tests.test_replay",
    "tests.test_side_by_side",
)
# musicvid's subpackages and top-level modules, in the order data flows: each may import those before it only
LAYERS = (
    "core",  # files, ffmpeg, audio, the work directory and what its runs wrote
    "settings",  # every setting, defined once
    "models",  # loading, sizes, the registry
    "memory",  # the memory plan
    "lyrics",
    "run",  # what the stages of one call share (the lyrics file as read among it)
    "storyboard",
    "pictures",
    "delivery",
    "prepare",  # every check once, before any work: a call's first step
    "review",  # the score report, contact sheet and run report
    "pipeline",
    "batch",
    "plan_command",
    "cli",
    "__main__",
)
MAX_TOP_LEVEL_MODULES = 8
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 80


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules `path` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in known}
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, known) - {name} for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_imports_one_that_imports_it_back():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_packages_import_downwards_only():
    upward = [
        (name, target)
        for name, targets in import_graph().items()
        for target in targets
        if PACKAGES.index(target.split(".")[0]) < PACKAGES.index(name.split(".")[0])
        and not (name in BENCHMARK_TESTS and target.split(".")[0] == "benchmarks")
    ]
    assert upward == []


def layer(module: str) -> int:
    """The place of a musicvid module's layer in LAYERS (musicvid's __init__ is beneath them all)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 else -1


def test_musicvids_layers_import_downwards_only():
    musicvid = {name: targets for name, targets in import_graph().items() if name.split(".")[0] == "musicvid"}
    upward = [
        (name, target)
        for name, targets in musicvid.items()
        for target in targets
        if target.startswith("musicvid.") and layer(target) > layer(name)
    ]
    assert upward == []


def test_every_module_of_musicvid_is_in_a_layer_and_few_stay_at_the_top():
    top = [path.name for path in (ROOT / "musicvid").glob("*.py")]
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    for name in modules():
        if name.startswith("musicvid."):
            layer(name)  # (raises for a module outside LAYERS)


def test_no_module_or_function_is_too_long_to_read_in_one_sitting():
    too_long = []
    for name, path in modules().items():
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {length} lines")
    assert too_long == []
