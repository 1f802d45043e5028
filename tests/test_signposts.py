"""Signposts that tell the truth: every module, function, class or file that a docstring or a comment of the code
names (musicvid.pictures.draw.draw_pictures, docs/frames.md, core/files.py), and every one the docs name in their
code spans (`storyboard.make.storyboard_in`), is there. Names are read from the code's own definitions (nothing is
imported), so a move or a rename that leaves a signpost behind fails here."""

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("musicvid", "vipe_core", "ui", "benchmarks", "tests")
DOTTED = re.compile(r"\b(?:musicvid|vipe_core)(?:\.\w+)+")
NOT_MODULES = {"musicvid.commands"}  # the entry points' group that commands add themselves by (pyproject.toml)
# a file of the repository: from its root, or inside musicvid (`core/files.py`)
ROOTS = "docs|tests|benchmarks|assets|musicvid|ui|vipe_core|core|settings|models|memory|lyrics|storyboard|pictures|"
ROOTS += "delivery|review|batch"
FILE = re.compile(rf"(?<![\w./-])((?:{ROOTS})/(?:[\w-]+/)*[\w-]+\.(?:py|md|json|toml|txt|lrc))\b")
# a module of musicvid named from inside it (`storyboard.board.MAX_SCENES`), and a file by its name alone (in the
# folder of the one citing it, or of a file the same text names with its folder)
LAYERED = re.compile(r"(?<![\w.])((?:core|models|memory|lyrics|storyboard|pictures|delivery|review|batch)(?:\.\w+)+)")
BARE = re.compile(r"(?<![\w/.-])([\w-]+\.py)\b")
SPAN = re.compile(r"`([A-Za-z_][\w.]*)`")
FILE_SUFFIXES = {"json", "jsonl", "md", "srt", "ass", "lrc", "txt", "png", "mp4", "py"}


def sources() -> list[Path]:
    return [p for package in CODE for p in sorted((ROOT / package).rglob("*.py")) if "standins" not in p.parts]


@cache
def defined(module: Path) -> dict[str, set[str]]:
    """A module's names: "" -> its top-level names; a class's name -> its members (methods, fields, attributes)."""
    tree = ast.parse(module.read_text())
    names: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        for name, body in named(node):
            names[""].add(name)
            if body is not None:
                names[name] = {member for child in body for member, _ in named(child)}
    return names


def named(node: ast.AST) -> list[tuple[str, list | None]]:
    """What a statement defines at its level: a function, a class (with its body), a name assigned or imported."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(node.name, None)]
    if isinstance(node, ast.ClassDef):
        return [(node.name, node.body)]
    if isinstance(node, ast.Assign):
        return [(t.id, None) for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, None)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [((a.asname or a.name).split(".")[0], None) for a in node.names]
    if isinstance(node, (ast.If, ast.Try)):
        return [n for child in node.body for n in named(child)]
    return []


def module_file(dotted: str) -> Path | None:
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolves(dotted: str) -> bool:
    """Whether `dotted` names a module, or a name (a class's member too) defined in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = module_file(".".join(parts[:cut]))
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        names = defined(module)
        if rest[0] not in names[""]:
            return False
        return len(rest) == 1 or (len(rest) == 2 and rest[1] in names.get(rest[0], ()))
    return False


def file_exists(named_path: str) -> bool:
    return (ROOT / named_path).exists() or (ROOT / "musicvid" / named_path).exists()


def words_of_code(path: Path) -> list[tuple[int, str]]:
    """The docstrings and comments of a source file, with their lines."""
    text = path.read_text()
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring and node.body:
                found.append((node.body[0].lineno, docstring))
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def wrong_names(where: str, text: str, folder: Path | None = None) -> list[str]:
    """The names `text` cites that are not there; `folder`: where a file named by its name alone is looked for."""
    dotted = [name for name in DOTTED.findall(text) if name not in NOT_MODULES]
    wrong = [name for name in dotted if not resolves(name)]
    wrong += [name for name in FILE.findall(text) if not file_exists(name)]
    if folder is not None:
        inside = [name for name in LAYERED.findall(text) if name.rsplit(".", 1)[1] not in FILE_SUFFIXES]
        wrong += [name for name in inside if not resolves(f"musicvid.{name}")]
        folders = [folder, *(ROOT / Path(named).parent for named in FILE.findall(text))]
        wrong += [name for name in BARE.findall(text) if not any((f / name).exists() for f in folders)]
    return [f"{where}: {name}" for name in wrong]


def test_every_name_a_docstring_or_comment_cites_is_in_the_code():
    wrong = []
    for path in sources():
        for line, text in words_of_code(path):
            wrong += wrong_names(f"{path.relative_to(ROOT)}:{line}", text, path.parent)
    assert wrong == []


def test_every_module_and_name_the_docs_cite_is_in_the_code():
    layers = {p.stem for p in (ROOT / "musicvid").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    wrong = []
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        wrong += wrong_names(doc.name, text)
        spans = [s for s in SPAN.findall(text) if "." in s and s.split(".")[0] in layers - {"cli"}]
        spans = [s for s in spans if s.rsplit(".", 1)[1] not in FILE_SUFFIXES]
        wrong += [f"{doc.name}: {span}" for span in spans if not resolves(f"musicvid.{span}")]
    assert wrong == []


def test_a_wrong_signpost_is_found():
    assert wrong_names("x", "see musicvid.pictures.draw.draw_pictures and docs/frames.md") == []
    said = "musicvid.pictures.render, musicvid.pictures.draw.nothing, core/gone.py, render.py, grouping.plan"
    assert wrong_names("x", said, ROOT / "musicvid" / "pictures") == [
        "x: musicvid.pictures.render",
        "x: musicvid.pictures.draw.nothing",
        "x: core/gone.py",
        "x: render.py",
    ]


def test_no_doc_or_module_keeps_a_merge_conflict():
    """Both sides of a merge left in a file (docs/architecture.md once kept two versions of four rows)."""
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")), *sources()]
    marked = [str(p.relative_to(ROOT)) for p in files if re.search(r"^(<{7}|>{7})( |$)", p.read_text(), re.M)]
    assert marked == []


def test_the_architecture_table_names_every_module_of_each_layer():
    """docs/architecture.md's "Who owns what" lists each layer's modules: one added to a layer is added there (the
    table once left out 22)."""
    rows = re.findall(r"^\| `(\w+)/` \| (.*?) \|", (ROOT / "docs" / "architecture.md").read_text(), re.M)
    layers = sorted(p.name for p in (ROOT / "musicvid").iterdir() if (p / "__init__.py").is_file())
    assert sorted(layer for layer, _ in rows) == layers
    for layer, listed in rows:
        modules = {p.stem for p in (ROOT / "musicvid" / layer).glob("*.py")} - {"__init__"}
        assert set(SPAN.findall(listed)) == modules, layer
