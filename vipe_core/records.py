"""The records that travel between stages, and the files that hold them.

    collect  -> lyrics/<artist>.json        ArtistLyrics (songs with raw Genius lyrics)
    filter   -> lyrics.clean.jsonl          one CleanSong per line
    label    -> canvas/<song id>.json       one LabelledSong per file (+ failed.jsonl, usage.json)
    build    -> lyric_canvas.parquet        one CanvasRow per lyric line

Every artifact is written to a temporary name and renamed into place (vipe_core.atomic.atomic_path),
so a killed stage never leaves a file that a rerun would trust. The two append-only journals
(failed cases, cached generations) are read back tolerating a torn last line.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

from vipe_core.atomic import atomic_path, write_json
from vipe_core.errors import VipeError

__all__ = [
    "ArtistLyrics",
    "CanvasRow",
    "CleanSong",
    "LabelledSong",
    "RawSong",
    "append_jsonl",
    "atomic_dir",
    "atomic_path",
    "from_dict",
    "read_json",
    "read_jsonl",
    "replace_dir",
    "write_json",
    "write_jsonl",
]

T = TypeVar("T")


@dataclass
class RawSong:
    """A song as collected from Genius, in the artist's popularity order (`rank` 1 = most popular)."""

    song_id: str
    title: str
    artist: str
    lyrics: str
    rank: int = 0
    url: str = ""
    language: str | None = None


@dataclass
class ArtistLyrics:
    artist: str
    artist_id: str
    songs: list[RawSong] = field(default_factory=list)


@dataclass
class CleanSong:
    """A song that passed the filters: the lines to be elaborated, in order."""

    song_id: str
    title: str
    artist: str
    lines: list[str]


@dataclass
class LabelledSong:
    """A song with one teacher elaboration per line (same length, same order)."""

    song_id: str
    title: str
    artist: str
    lines: list[str]
    elaborations: list[str]
    teacher: str = ""


@dataclass
class CanvasRow:
    """One LyricCanvas row. `elaboration` is None for a line kept only as context for its neighbours."""

    song_id: str
    line_index: int
    lyric: str
    elaboration: str | None
    title: str
    artist: str
    split: str = "train"


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build a record from a dict, ignoring keys the record does not have (newer files, extra columns)."""
    if not isinstance(data, dict):
        raise TypeError(f"expected an object, got {type(data).__name__}")
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VipeError(f"{what} {path} does not exist.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise VipeError(f"{what} {path} is not valid JSON ({e}).") from None


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    """Write dataclasses or dicts, one JSON object a line, atomically; returns the count."""
    count = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for record in records:
            data = asdict(record) if hasattr(record, "__dataclass_fields__") else record
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
            count += 1
    return count


def read_jsonl(path: str | os.PathLike, *, journal: bool = False) -> Iterator[dict[str, Any]]:
    """Objects of a JSONL file. A `journal` (append-only file) may end in a torn line: it is skipped."""
    path = Path(path)
    if not path.exists():
        if journal:
            return
        raise VipeError(f"{path} does not exist.")
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            if journal and number == len(lines):
                return  # a run was killed while appending
            raise VipeError(f"{path} line {number} is not valid JSON.") from None


def append_jsonl(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Append one line to a journal and flush it to disk (first cutting off a line torn by a kill)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab+") as f:
        if f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                f.seek(0)
                f.truncate(f.read().rfind(b"\n") + 1)
        f.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


@contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder beside `path`; on success it replaces `path` (a checkpoint, say)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        yield tmp
        replace_dir(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replace_dir(new: Path, path: Path) -> None:
    """Put the finished folder `new` in the place of `path` (the old one is removed after the swap)."""
    old = path.with_name(f".{path.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        os.replace(path, old)
    os.replace(new, path)
    shutil.rmtree(old, ignore_errors=True)
