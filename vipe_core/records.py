"""The records that travel between stages, and the files that hold them.

    collect  -> lyrics/<artist>.json        ArtistLyrics (songs with raw Genius lyrics)
    filter   -> lyrics.clean.jsonl          one CleanSong per line
    label    -> canvas/<song id>.json       one LabelledSong per file (+ failed.jsonl, USAGE_FILE)
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
import unicodedata
from contextlib import contextmanager, suppress
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

from vipe_core.atomic import UMASK, atomic_path, write_json
from vipe_core.errors import VipeError, not_there

__all__ = [
    "COPY_MARKER",
    "ArtistLyrics",
    "CanvasRow",
    "CleanSong",
    "LabelledSong",
    "RawSong",
    "append_jsonl",
    "atomic_dir",
    "atomic_path",
    "from_dict",
    "is_marked",
    "mark_copy",
    "read_clean_songs",
    "read_json",
    "read_jsonl",
    "read_text",
    "remove_copy",
    "replace_dir",
    "write_json",
    "write_jsonl",
]

T = TypeVar("T")
USAGE_FILE = "usage.json"  # the label folder's token and cost tally, beside its labelled songs


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


# The JSON a field of a record takes, by its annotation; a file with anything else is refused on reading.
_KINDS = {
    "str": ((str,), "text"),
    "str | None": ((str, type(None)), "text or null"),
    "int": ((int,), "a whole number"),
    "float": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "dict": ((dict,), "an object"),
    "list[str]": ((list,), "a list of texts"),
    "list[dict]": ((list,), "a list of objects"),
    "list[RawSong]": ((list,), "a list of songs"),
}
_ITEM_KINDS = {"list[str]": str, "list[dict]": dict}


def _json_kind(value: Any) -> str:
    names = {type(None): "null", bool: "true/false", str: "text", int: "a number", float: "a number", list: "a list"}
    return names.get(type(value), "an object")


def _misfit(value: Any, annotation: str) -> str:
    """What `value` is, for a refusal: its JSON kind, or for a list the first entry of another kind than its items'."""
    item, wrong = _ITEM_KINDS.get(annotation), None
    if item is not None and isinstance(value, list):
        wrong = next((n for n, v in enumerate(value) if not isinstance(v, item)), None)
    return _json_kind(value) if wrong is None else f"a list whose entry {wrong + 1} is {_json_kind(value[wrong])}"


def _fits(value: Any, annotation: str) -> bool:
    types, _ = _KINDS[annotation]
    if isinstance(value, bool) and bool not in types:
        return False  # JSON true is no number
    item = _ITEM_KINDS.get(annotation)
    return isinstance(value, types) and (item is None or all(isinstance(v, item) for v in value))


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build a record from a dict, ignoring keys the record does not have (newer files, extra columns).

    Raises TypeError, with a message naming the field, for a dict that lacks a required field or holds
    a value of another JSON type than the field's (a null lyrics, a numeric song_id, a string rank)."""
    if not isinstance(data, dict):
        raise TypeError(f"expected an object, got {_json_kind(data)}")
    known = fields(cls)  # type: ignore[arg-type]
    missing = [f.name for f in known if f.name not in data and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise TypeError(f"it lacks {', '.join(missing)}")
    for f in known:
        if f.name in data and f.type in _KINDS and not _fits(data[f.name], f.type):
            raise TypeError(f"its {f.name} should be {_KINDS[f.type][1]}, not {_misfit(data[f.name], f.type)}")
    return cls(**{f.name: data[f.name] for f in known if f.name in data})


def record_from(cls: type[T], data: Any, refusal: str) -> T:
    """`from_dict`, its TypeError told as a VipeError: `refusal` ("FILE line N is not a song ..."), then why."""
    try:
        return from_dict(cls, data)
    except TypeError as e:
        raise VipeError(f"{refusal} ({e}).") from None


def refuse_special(path: str | os.PathLike, what: str) -> None:
    """VipeError naming `what` where `path` is there but is neither a file nor a folder: a FIFO is waited on for a
    writer, a device read without end."""
    if os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path)):
        raise VipeError(f"{what} {path} is not a regular file (a pipe or a device): give a file.")


def read_text(path: str | os.PathLike, what: str = "the file") -> str:
    """The UTF-8 text of a file, less a byte-order mark (Windows' editors write one); VipeError naming `what` when it
    is missing, a folder, no regular file (a FIFO would be waited on for a writer), unreadable or not UTF-8."""
    try:
        refuse_special(path, what)
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise VipeError(f"{what} {path} {not_there(path)}.") from None
    except IsADirectoryError:
        raise VipeError(f"{what} {path} is a folder, not a file.") from None
    except UnicodeDecodeError:
        raise VipeError(f"{what} {path} is not UTF-8 text.") from None
    except OSError as e:
        raise VipeError(f"{what} {path} could not be read ({e.strerror or e}).") from None


def parsed_json(text: str) -> Any:
    """`text` as JSON; a ValueError (a JSONDecodeError among them) saying why it is no JSON Python holds: nested
    past the interpreter's recursion limit, or a number of more digits than int() reads (4,300)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    except json.JSONDecodeError:
        raise
    except ValueError:
        raise ValueError("a number in it has more digits than can be read") from None


def read_json(path: str | os.PathLike, what: str = "the file") -> Any:
    text = read_text(path, what)
    try:
        return parsed_json(text)
    except ValueError as e:
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


def _numbered_jsonl(path: Path, journal: bool, what: str) -> Iterator[tuple[int, Any]]:
    if journal and not path.exists():
        return
    lines = read_text(path, what).splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, parsed_json(line)
        except ValueError as e:
            if journal and number == len(lines):
                return  # a run was killed while appending
            raise VipeError(f"{path} line {number} is not valid JSON ({e}).") from None


def read_jsonl(path: str | os.PathLike, *, journal: bool = False, what: str = "the file") -> Iterator[dict[str, Any]]:
    """Objects of a JSONL file. A `journal` (append-only file) may be missing, or end in a torn line: it is skipped."""
    for _, data in _numbered_jsonl(Path(path), journal, what):
        yield data


# The longest lyric line taken, in characters: many times a line `vipe filter` keeps (20 words by default), and
# short of a request that costs what a whole song's should.
MAX_LINE_CHARACTERS = 1000


def line_refusal(line: str) -> str | None:
    """Why `line` is no lyric line, or None: it is blank (`vipe filter` drops blank lines: no picture to draw), holds
    a line break (the teacher, who numbers the lines it is sent, would answer for more lines than it was asked), is
    longer than MAX_LINE_CHARACTERS, or holds a control character but a tab."""
    if not line.strip():
        return "is blank; leave blank lines out"
    if "".join(line.splitlines()) != line:
        return "holds a line break; give each lyric line as an entry of its own"
    if len(line) > MAX_LINE_CHARACTERS:
        return f"is {len(line)} characters long, over the {MAX_LINE_CHARACTERS} a lyric line may be"
    if control := next((c for c in line if unicodedata.category(c) == "Cc" and c != "\t"), None):
        return f"holds a control character (U+{ord(control):04X}), which no lyric holds"  # (NUL went to the teacher)
    return None


def lines_refusal(song: CleanSong | LabelledSong) -> str | None:
    """Why a song's lines are no lyric lines (line_refusal, naming the first), or None."""
    for index, line in enumerate(song.lines, 1):
        why = line_refusal(line)
        if why:
            return f"its line {index} {why}"
    return None


def labelled_song(file: Path) -> LabelledSong:
    """The labelled song a `vipe label` file holds, refused (VipeError) where it holds none: another record, a
    line for each elaboration, or lines that are no lyric lines."""
    data = read_json(file, "the labelled song")
    song = record_from(LabelledSong, data, f"{file} is not a labelled song from `vipe label`")
    if len(song.lines) != len(song.elaborations):
        raise VipeError(f"{file} has {len(song.lines)} lines but {len(song.elaborations)} elaborations.")
    if why := lines_refusal(song):
        raise VipeError(f"{file}: {why}.")
    return song


def read_clean_songs(path: str | os.PathLike) -> list[CleanSong]:
    """The songs of a lyrics.clean.jsonl from `vipe filter`; VipeError for a line that is not a song, whose lines
    are no lyric lines (lines_refusal), or that repeats a song_id (two songs would share one canvas file: one
    paid for twice, the other lost)."""
    songs: list[CleanSong] = []
    seen: dict[str, int] = {}
    for number, data in _numbered_jsonl(Path(path), False, "the lyrics file"):
        song = record_from(CleanSong, data, f"{path} line {number} is not a song from `vipe filter`")
        why = lines_refusal(song)
        if why:
            raise VipeError(f"{path} line {number} (song_id {song.song_id!r}): {why}.")
        if song.song_id in seen:
            raise VipeError(f"{path} line {number} repeats song_id {song.song_id!r} of line {seen[song.song_id]}.")
        seen[song.song_id] = number
        songs.append(song)
    return songs


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


# Written first into every folder vipe makes beside a checkpoint while it saves one, and into a checkpoint before it
# is moved aside: a folder of a copy's name is removed (vipe_core.resume) only when it carries this file, holding
# that very name, so a person's folder of that name never is, nor a person's copy of a folder a kill left marked
# (`cp -a best .best.backup01`). It is taken off a folder once that folder is a checkpoint again.
COPY_MARKER = ".vipe-copy"


def mark_copy(folder: Path, name: str | None = None) -> None:
    """Mark `folder` as a copy vipe made, to be named `name` (by default its own)."""
    (folder / COPY_MARKER).write_text(name or folder.name, encoding="utf-8")  # (cut short: unmarked, so kept)


def is_marked(folder: Path) -> bool:
    """Whether `folder` carries the marker of a copy vipe made under its very name (mark_copy)."""
    try:
        return (folder / COPY_MARKER).read_text(encoding="utf-8") == folder.name
    except (OSError, UnicodeDecodeError):
        return False


def remove_copy(folder: Path) -> None:
    """Remove a copy vipe made, its marker last: a removal cut short (by a kill, or a file that cannot be
    removed) leaves the rest marked, or an empty folder, which the next run removes. A missing folder is no error."""
    with suppress(OSError):  # best effort, as rmtree's ignore_errors: the run's own error, if any, is the one told
        for entry in folder.iterdir():
            if entry.name != COPY_MARKER:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        (folder / COPY_MARKER).unlink(missing_ok=True)
        folder.rmdir()


@contextmanager
def atomic_dir(path: str | os.PathLike, marker: str) -> Iterator[Path]:
    """Yield a temporary folder beside `path`, marked as a copy (COPY_MARKER) before anything goes in; on success
    it replaces `path` (a checkpoint, say), which must be ours: see replace_dir. The folder yielded must come to
    hold `marker`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        mark_copy(tmp)
        yield tmp
        _usual_modes(tmp)
        replace_dir(tmp, path, marker)
    finally:
        remove_copy(tmp)  # (gone already when it replaced `path`)


def _usual_modes(folder: Path) -> None:
    """Give `folder` and what it holds the modes a plain mkdir and open give (the umask's): mkdtemp makes an
    owner-only folder, and writers of their own temporaries (safetensors) owner-only files, but a checkpoint is
    meant to be shared."""
    folder.chmod(0o777 & ~UMASK)
    for parent, folders, files in os.walk(folder):  # links are not followed, nor changed
        for names, mode in ((folders, 0o777), (files, 0o666)):
            for path in (Path(parent, name) for name in names):
                if not path.is_symlink():
                    path.chmod(mode & ~UMASK)


def replace_dir(new: Path, path: Path, marker: str) -> None:
    """Put the finished folder `new` (a marked copy) in the place of `path` (the old one is removed after the swap).
    A kill between the two renames leaves no `path`, the old folder in .NAME.old.XXXXXXXX and `new` beside it, both
    marked: the next `vipe train` puts last/ back from them (vipe_core.resume.recover_last). A kill just before the
    first rename or just after the second leaves the marker in `path`, which that run takes off.

    An existing `path` is replaced only when it holds the file `marker`, which only vipe writes there:
    a person's folder of the same name is refused (VipeError) and left as it is."""
    if path.exists() and not (path / marker).is_file():
        raise VipeError(f"{path} holds files vipe did not write; move them away or choose another --out.")
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))  # a fresh name: nobody's folder
    try:
        if path.exists():
            mark_copy(path, old.name)  # before it is moved aside, so that what a kill leaves there is a marked copy
            os.replace(path, old)  # onto the empty folder old
        os.replace(new, path)
        (path / COPY_MARKER).unlink(missing_ok=True)  # a checkpoint again: a person's copy of it must not read as ours
    finally:
        remove_copy(old)
