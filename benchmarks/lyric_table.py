"""The docs' lyric tables (docs/lyrics.md), made from the lyric matrix's results (benchmarks/lyrics.py:
benchmarks/results/lyrics-x<sharpness>.json for tiny.en, lyrics-base.json for Whisper base), so that what the docs
say is what was measured."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from tests.fixtures.fresh_songs import KINDS
from vipe_core.atomic import write_text

BEGIN, END = "<!-- lyric matrix: python -m benchmarks.lyrics --table -->", "<!-- end of the lyric matrix -->"


def results(out_dir: Path) -> dict[str, list[dict]]:
    """Every results file's rows, by the column they are shown in: tiny.en by sharpness, ascending, then base."""
    found = {}
    for path in out_dir.glob("lyrics-x*.json"):
        record = json.loads(path.read_text())
        found[float(record["sharpness"])] = record["rows"]
    columns = {f"tiny.en ×{sharpness:g}": rows for sharpness, rows in sorted(found.items())}
    base = out_dir / "lyrics-base.json"
    return columns | ({"base": json.loads(base.read_text())["rows"]} if base.exists() else {})


def generated_cell(rows: list[dict]) -> str:
    lines, within = sum(r["lines"] for r in rows), sum(r["within"] for r in rows)
    errors = [abs(e) for r in rows for e in r["errors"] if e is not None]
    unsung = sum(len(r["unsung_scenes"]) for r in rows)
    cell = f"{within}/{lines}" + (f", ≤ {max(errors):.2f} s" if errors else "")
    moved = sum(r.get("moved_words", 0) for r in rows)  # (results from before it was counted have none)
    cell += (f", {unsung} unsung" if unsung else "") + (f", {moved} moved" if moved else "")
    return cell + (f"; stable-ts {peer_cell([r['peer'] for r in rows])}" if all("peer" in r for r in rows) else "")


def peer_cell(peers: list[dict]) -> str:
    """stable-ts's timing of the same known lines (benchmarks.lyrics --peer): lines within, of all, and its largest
    start error."""
    errors = [abs(e) for peer in peers for e in peer["errors"] if e is not None]
    cell = f"{sum(peer['within'] for peer in peers)}/{sum(len(peer['errors']) for peer in peers)}"
    return cell + (f", ≤ {max(errors):.2f} s" if errors else "")


def sung_cell(row: dict) -> str:
    if row["mode"] == "recognized":
        share = f" ({row['kept'] / row['heard']:.0%})" if row["heard"] else ", nothing heard: not measured"
        return f"{row['kept']} of {row['heard']}{share}"
    return f"{row['near_heard']}/{row['lines']} near, {row['in_singing']}/{row['placed']} in"


def order(key: tuple) -> tuple:
    """Generated songs by their kinds' order (tests.fixtures.fresh_songs.KINDS), the rest by name; recognized
    before known."""
    source, name, backend, mode = key
    return (source, KINDS.index(name) if name in KINDS else 0, name, backend, mode != "recognized")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def tables(found: dict[str, list[dict]]) -> str:
    """The three tables: generated songs by kind (every seed together), sung and instrumental recordings;
    a column per model: tiny.en at each sharpness of its logits (×1: tiny.en itself), and Whisper base."""
    scales = list(found)
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for column, rows in found.items():
        for row in rows:
            name = row["kind"] if row["source"] == "generated" else row["song"]
            cells[(row["source"], name, row["backend"], row["mode"])][column].append(row)
    shown: dict[str, list[list[str]]] = defaultdict(list)
    for (source, name, backend, mode), by_scale in sorted(cells.items(), key=lambda item: order(item[0])):
        values = [by_scale.get(s) for s in found]
        if source == "generated":
            shown[source].append([name, backend, mode, *(generated_cell(v) if v else "–" for v in values)])
        elif source == "sung":
            shown[source].append([name, backend, mode, *(sung_cell(v[0]) if v else "–" for v in values)])
        else:
            shown[source].append([name, backend, *(f"{v[0]['invented_per_minute']:g}" if v else "–" for v in values)])
    generated, sung, instrumental = (shown[source] for source in ("generated", "sung", "instrumental"))
    return "\n\n".join(
        [
            "Generated songs (lines starting within 0.5 s of where they are sung, of all lines, every seed; the "
            "largest start error; lyric scenes where nobody sings; recognized scenes that open with the last word of "
            "the line before, moved, where counted; known lines, beside stable-ts's timing of them, where measured):\n\n"
            + table(["kind", "backend", "lyrics", *scales], generated),
            "Muldjord's recordings (recognized: segments kept of those heard with no gate; known: lines placed "
            "within 1 s of where they were heard, and in the singing):\n\n"
            + table(["song", "backend", "lyrics", *scales], sung),
            "Instrumentals (invented words a minute; Sectoid's, and others given with --instrumentals):\n\n"
            + table(["song", "backend", *scales], instrumental),
        ]
    )


def docs_problem(docs: Path) -> str | None:
    """Why the tables cannot be written into `docs`, in a sentence; None where they can."""
    try:
        page = docs.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"--docs {docs} cannot be read ({getattr(error, 'strerror', None) or type(error).__name__})"
    if BEGIN not in page or END not in page.split(BEGIN, 1)[1]:
        return f"--docs {docs} has no lyric matrix markers ({BEGIN} ... {END}) to write the tables between"
    return None


def write_tables(found: dict[str, list[dict]], docs: Path | None = None) -> str:
    """The tables from the results `found` (results()); written into `docs` between its markers, where given."""
    text = tables(found)
    if docs is not None:
        head, rest = docs.read_text(encoding="utf-8").split(BEGIN, 1)
        write_text(docs, f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}")
    return text
