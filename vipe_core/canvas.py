"""Stage 4, build: the LyricCanvas table, split into train and validation *by song*.

Rows are (song_id, line_index, lyric, elaboration, title, artist, split), one per lyric line, in a
parquet file. They come from the teacher's labels (canvas/*.json), from the authors' published
elaborations joined with lyrics you collected and filtered yourself, or both. A line without an
elaboration is kept with elaboration = null: it is no training example, but it is still context
for the lines after it.

Training and evaluation read the table back through `read_canvas` and `examples`, which format
each line's context with vipe_core.context.lyric_context, the function inference uses too.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from vipe_core.atomic import records_in
from vipe_core.context import lyric_context
from vipe_core.errors import VipeError, not_there
from vipe_core.guards import check_output_kind, refuse_foreign, refuse_overlap
from vipe_core.records import (
    USAGE_FILE,
    CanvasRow,
    atomic_path,
    labelled_song,
    line_refusal,
    read_clean_songs,
    refuse_special,
)

COLUMNS = ["song_id", "line_index", "lyric", "elaboration", "title", "artist", "split"]
# The key `build` puts in its parquet files' metadata: a file at --out without it is a person's, never replaced.
BUILD_MARK = (b"vipe.build", b"LyricCanvas")


def rows_from_canvas(canvas_dir: str | os.PathLike) -> list[CanvasRow]:
    """The rows of every labelled song in a `vipe label` output folder."""
    folder = Path(canvas_dir)
    if not folder.is_dir():
        raise VipeError(f"{folder} is not a folder of labelled songs (run `vipe label` to make one).")
    rows: list[CanvasRow] = []
    files: dict[str, Path] = {}  # song_id -> the file that labelled it
    for file in records_in(folder, "*.json"):
        if file.name == USAGE_FILE:
            continue  # every other file is a song: one not read as such would be left out of training unsaid
        song = labelled_song(file)
        if song.song_id in files:
            raise VipeError(f"{file} and {files[song.song_id]} both label song_id {song.song_id!r}; keep one.")
        files[song.song_id] = file
        rows += [
            CanvasRow(song.song_id, i, lyric, elaboration, song.title, song.artist)
            for i, (lyric, elaboration) in enumerate(zip(song.lines, song.elaborations))
        ]
    return rows


def _read_table(path: str | os.PathLike) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise VipeError(f"{path} {not_there(path)}.")
    refuse_special(path, "the table")
    suffix = "".join(path.suffixes[-2:]).lower()
    try:
        if suffix.endswith(".parquet"):
            return pd.read_parquet(path)
        if suffix.endswith((".jsonl", ".jsonl.gz")):
            return pd.read_json(path, lines=True)
        if suffix.endswith((".tsv", ".tsv.gz", ".csv", ".csv.gz")):
            with warnings.catch_warnings():  # (a row of more cells than columns: pandas drops them, and says so)
                warnings.simplefilter("error", pd.errors.ParserWarning)
                # as text: a blank song_id made the column's numbers floats ("1000.0", which joined nothing), and
                # a row of more cells made the first ones an index
                return pd.read_csv(path, sep="\t" if ".tsv" in suffix else ",", dtype=str, index_col=False)
    except pd.errors.ParserWarning:
        raise VipeError(
            f"{path} has a row of more cells than its header has columns: quote a cell that holds the separator."
        ) from None
    except (ValueError, OSError) as e:
        raise VipeError(f"{path} could not be read as a table ({e}).") from None
    raise VipeError(f"{path} should be .csv, .tsv, .jsonl or .parquet.")


def _norm(text) -> str:
    return " ".join(re.findall(r"\w+", str(text).casefold()))


def _line_index(value, published, number: int) -> int:
    """A row's 0-based line_index; VipeError naming the row for a blank, a word or a fraction."""
    try:
        index = float(value)
    except (TypeError, ValueError):
        index = math.nan
    if not (index.is_integer() and index >= 0):
        raise VipeError(f"{published} row {number} has line_index {value!r}, not a whole number from 0.")
    return int(index)


def rows_from_published(
    published: str | os.PathLike, lyrics_jsonl: str | os.PathLike, columns: dict[str, str] | None = None
) -> list[CanvasRow]:
    """Join published elaborations (no lyrics) with your own filtered lyrics.

    The published table needs an `elaboration` column and either `song_id` + `line_index`
    (0-based) or the `lyric` text (with `title` and `artist` when it has them). `columns` maps
    these names to the table's own, e.g. {"elaboration": "prompt"}.
    """
    table = _read_table(published).rename(columns={theirs: ours for ours, theirs in (columns or {}).items()})
    if "elaboration" not in table.columns:
        raise VipeError(f"{published} has no 'elaboration' column (map one with --column elaboration=NAME).")
    songs = read_clean_songs(lyrics_jsonl)
    by_position = {"song_id", "line_index"} <= set(table.columns)
    if not by_position and "lyric" not in table.columns:
        raise VipeError(f"{published} needs song_id and line_index columns, or a lyric column, to join on.")
    with_song = not by_position and {"title", "artist"} <= set(table.columns)
    lookup: dict[tuple, str] = {}
    for number, record in enumerate(table.to_dict("records"), 1):
        if pd.isna(record["elaboration"]):
            continue
        if by_position:
            if pd.isna(record["song_id"]):
                raise VipeError(f"{published} row {number} has no song_id.")
            key = (str(record["song_id"]), _line_index(record["line_index"], published, number))
        else:
            key = ((_norm(record["title"]), _norm(record["artist"])) if with_song else ()) + (_norm(record["lyric"]),)
        lookup.setdefault(key, str(record["elaboration"]))
    rows: list[CanvasRow] = []
    for song in songs:
        found = []
        for i, line in enumerate(song.lines):
            if by_position:
                key = (song.song_id, i)
            else:
                key = ((_norm(song.title), _norm(song.artist)) if with_song else ()) + (_norm(line),)
            found.append(lookup.get(key))
        if any(e is not None for e in found):
            rows += [
                CanvasRow(song.song_id, i, line, e, song.title, song.artist)
                for i, (line, e) in enumerate(zip(song.lines, found))
            ]
    return rows


def assign_splits(rows: list[CanvasRow], validation_fraction: float = 0.1, seed: int = 0) -> None:
    """Hold out `validation_fraction` of the *songs* (at least one when there are two or more)."""
    songs = sorted({r.song_id for r in rows}, key=lambda s: hashlib.sha1(f"{seed}:{s}".encode()).hexdigest())
    count = round(validation_fraction * len(songs))
    if validation_fraction > 0 and len(songs) >= 2:
        count = min(max(count, 1), len(songs) - 1)
    held_out = set(songs[:count])
    for row in rows:
        row.split = "validation" if row.song_id in held_out else "train"


def check_splits(rows: list[CanvasRow]) -> None:
    """VipeError for a table `vipe train` would refuse: no labelled line to train on, or none held out (one song
    cannot be split)."""
    labelled = {r.split for r in rows if r.elaboration is not None and r.elaboration.strip()}
    for split in ("train", "validation"):
        if split not in labelled:
            songs = len({r.song_id for r in rows})
            raise VipeError(
                f"the {split} split would hold no labelled line ({songs} song{'s' if songs != 1 else ''} in all, "
                f"split by song), and `vipe train` refuses such a table; label more songs."
            )


def write_marked(frame: pd.DataFrame, path: Path) -> None:
    """`frame` as parquet, with BUILD_MARK in its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), BUILD_MARK[0]: BUILD_MARK[1]})
    pq.write_table(table, path)


def built_by_vipe(path: str | os.PathLike) -> bool:
    """Whether `path` is a plain parquet file that `build` wrote (BUILD_MARK in its metadata, or, from a build before
    the mark, exactly the LyricCanvas columns); only its footer is read, and nothing but a plain file is opened (a
    FIFO would block)."""
    import pyarrow.parquet as pq

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        schema = pq.read_schema(path)
    except Exception:  # noqa: BLE001 - pyarrow raises several kinds for a file that is not parquet
        return False
    return (schema.metadata or {}).get(BUILD_MARK[0]) == BUILD_MARK[1] or schema.names == COLUMNS


@dataclass
class BuildSummary:
    songs: int
    rows: int
    examples: int
    train_songs: int
    validation_songs: int


def run_build(
    out: str | os.PathLike,
    *,
    canvas_dir: str | os.PathLike | None = None,
    published: str | os.PathLike | None = None,
    lyrics: str | os.PathLike | None = None,
    columns: dict[str, str] | None = None,
    validation_fraction: float = 0.1,
    seed: int = 0,
) -> BuildSummary:
    if not 0 < validation_fraction < 1:  # (0 too: train picks its best checkpoint by the held-out songs' loss)
        raise VipeError(
            f"--validation-fraction must be above 0 and below 1, not {validation_fraction:g}: `vipe train` needs "
            "validation lines, which are the held-out songs' lines."
        )
    check_output_kind(out, folder=False)
    refuse_overlap(
        [("--out", out)],
        inputs=[("the published elaborations", published), ("the lyrics file", lyrics)],
        scanned=[("the canvas folder", canvas_dir)],
    )
    refuse_foreign(Path(out), built_by_vipe, "a LyricCanvas table")  # (a link there too, as filter's --out)
    rows = rows_from_canvas(canvas_dir) if canvas_dir else []
    if published:
        if not lyrics:
            raise VipeError("--published needs --lyrics, the lyrics.clean.jsonl to join the elaborations with.")
        labelled = {r.song_id for r in rows}  # the teacher's own labels win over published ones
        rows += [r for r in rows_from_published(published, lyrics, columns) if r.song_id not in labelled]
    if not rows:
        raise VipeError("there is nothing to build: no labelled song was found.")
    assign_splits(rows, validation_fraction, seed)
    check_splits(rows)
    frame = pd.DataFrame([asdict(r) for r in rows], columns=COLUMNS).astype({"line_index": "int32"})
    with atomic_path(out, suffix=".parquet") as tmp:
        write_marked(frame, tmp)
    by_split = frame.groupby("split")["song_id"].nunique()
    return BuildSummary(
        songs=frame["song_id"].nunique(),
        rows=len(frame),
        examples=int(frame["elaboration"].map(_taught).sum()),
        train_songs=int(by_split.get("train", 0)),
        validation_songs=int(by_split.get("validation", 0)),
    )


# ---------------------------------------------------------------------------------------------
# Reading it back (train, evaluate)


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _taught(elaboration) -> bool:
    """Whether a line's elaboration makes an example: there, and not blank."""
    return not _missing(elaboration) and bool(str(elaboration).strip())


def read_canvas(path: str | os.PathLike) -> pd.DataFrame:
    path = Path(path)
    if path.is_dir():
        raise VipeError(f"the LyricCanvas file {path} is a folder; give the parquet file `vipe build` wrote.")
    if not path.exists():
        raise VipeError(f"the LyricCanvas file {path} {not_there(path)} (run `vipe build` to make one).")
    refuse_special(path, "the LyricCanvas file")
    try:
        frame = pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a file that is not parquet
        raise VipeError(f"{path} is not a parquet file ({type(e).__name__}).") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise VipeError(f"{path} is not a LyricCanvas table: it lacks {', '.join(missing)}.")
    for column in ("song_id", "lyric", "split", "elaboration"):
        blank_allowed = column == "elaboration"  # a line kept only as context
        if not frame[column].map(lambda v, blank=blank_allowed: isinstance(v, str) or (blank and _missing(v))).all():
            raise VipeError(f"{path} is not a LyricCanvas table: its {column} column holds values that are not text.")
    for number, lyric in enumerate(frame["lyric"], 1):  # a table not from `build`, or from an older one
        why = line_refusal(lyric)
        if why:
            raise VipeError(f"{path} is not a LyricCanvas table: the lyric of its row {number} {why}.")
    if not pd.api.types.is_integer_dtype(frame["line_index"]):
        raise VipeError(f"{path} is not a LyricCanvas table: its line_index column is not whole numbers.")
    check_songs_whole(frame, path)
    return frame


def check_songs_whole(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """VipeError for a table that holds a song's line twice (two tables concatenated: each context would read
    the line beside its copy) or a song in both splits (validation on lines the model learned the song from);
    `build` makes neither: its songs are unique and split whole."""
    repeated = frame[frame.duplicated(["song_id", "line_index"])]
    if len(repeated):
        song_id, line_index = repeated.iloc[0][["song_id", "line_index"]]
        raise VipeError(f"{path} holds line_index {line_index} of song_id {song_id!r} more than once; keep one row.")
    splits = frame.groupby("song_id")["split"].nunique()
    if (splits > 1).any():
        raise VipeError(
            f"{path} puts song_id {splits[splits > 1].index[0]!r} in more than one split; a song is trained on or held out "
            "whole (`vipe build` splits by song)."
        )


def examples(frame: pd.DataFrame, split: str, context_size: int) -> list[dict]:
    """One example per labelled line of `split`: its context (the inference formatter's), elaboration and ids."""
    result = []
    for song_id, song in frame[frame["split"] == split].groupby("song_id", sort=True):
        song = song.sort_values("line_index")
        lines = song["lyric"].tolist()
        for position, row in enumerate(song.itertuples(index=False)):
            if not _taught(row.elaboration):
                continue
            result.append(
                {
                    "song_id": song_id,
                    "line_index": int(row.line_index),
                    "lyric": row.lyric,
                    "context": lyric_context(lines, position, context_size),
                    "elaboration": str(row.elaboration).strip(),
                }
            )
    return result
