"""Replay recorded hearings through the lyric rules: what a change to musicvid/lyrics does to many songs' lyric
scenes, in seconds and without Whisper.

A hearing is what musicvid.lyrics.transcribe.hear gives for one song (Whisper's segments over the whole song with
their words, and Silero's voice) beside the song's truth. Everything after it is rules: `sung_lines`, then
`scenes_from_lines`. So a hearing recorded once (seconds to minutes a song) replays through any version of the
rules, this one or a commit's (--base), and the songs whose result differs are the change's effect:
- a generated song (tests/fixtures/fresh_songs.py) is judged as benchmarks/lyrics.py judges recognized lyrics:
  every line sung starts a lyric scene within 0.5 s, and no lyric scene starts where nobody sings (`passed`);
- a JamendoLyrics song as benchmarks/jamendo.py judges recognized lyrics: the annotated lines a lyric scene
  starts within 1 s of, holding at least half their words (`found`), and where each lyric scene starts.

A hearing is only as good as the rules before `sung_lines` (hear's loops and voices heard again): a change to those
needs the songs heard again (benchmarks/lyrics.py, benchmarks/jamendo.py).

    python -m benchmarks.replay record DIR [--backend faster-whisper] [--whisper tiny.en|base]
        [--seeds 41 42] [--kinds intro gaps ...] [--jamendo ../shared/songs/jamendolyrics]
    python -m benchmarks.replay replay DIR [--base COMMIT]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcribe import sung_lines
from musicvid.lyrics.transcript import Transcript
from tests.fixtures.fresh_songs import KINDS, fresh_song, judged_timing, lyric_scenes, timing_passed
from tests.fixtures.jamendo import SONGS, found_lines
from vipe_core.atomic import write_text

ROOT = Path(__file__).resolve().parents[1]
PROG = "python -m benchmarks.replay"


def hearing(name: str, model: str, duration: float, heard: tuple, truth: dict) -> dict:
    """One song's hearing as JSON: `heard` is hear's (language, voice, segments); `truth` holds the generated
    song's `sung` (start, end, text) or the annotated `lines` (start, text)."""
    language, voice, segments = heard
    lines = Transcript(segments, language, model).to_json()
    return {"song": name, "duration": duration, "voice": asdict(voice), "heard": lines, **truth}


def judged(record: dict) -> dict:
    """A hearing replayed through the rules, and judged by its truth."""
    voice = Voice(**{**record["voice"], "stretches": [tuple(s) for s in record["voice"]["stretches"]]})
    heard = Transcript.from_json(record["heard"], record["song"]).lines
    lines = sung_lines(heard, voice, record["duration"])
    if "sung" in record:
        row = judged_timing(lines, record["duration"], [tuple(s) for s in record["sung"]])
        return {"song": record["song"], **row, "passed": timing_passed(row)}
    scenes = lyric_scenes(lines, record["duration"])
    heard_lines = [(scene.start, scene.text) for scene in scenes]
    found = found_lines(record["lines"], heard_lines)
    return {
        "song": record["song"],
        "lines": len(record["lines"]),
        "found": found,
        "starts": [round(s.start, 2) for s in scenes],
    }


def replayed(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(folder.glob("*.json")):
        try:
            rows.append(judged(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, KeyError, TypeError, UserError) as error:  # (JSONDecodeError is a ValueError)
            raise SystemExit(f"{PROG}: {path} is no hearing this records ({type(error).__name__}: {error})") from None
    return rows


def summary(rows: list[dict]) -> str:
    generated = [row for row in rows if "passed" in row]
    jamendo = [row for row in rows if "found" in row]
    parts = []
    if generated:
        within = sum(row["within"] for row in generated), sum(row["lines"] for row in generated)
        parts.append(f"generated {sum(row['passed'] for row in generated)}/{len(generated)} passed")
        parts.append(f"lines within 0.5 s {within[0]}/{within[1]}")
    if jamendo:
        found = sum(row["found"] for row in jamendo), sum(row["lines"] for row in jamendo)
        parts.append(f"JamendoLyrics lines found {found[0]}/{found[1]}")
    return ", ".join(parts) or "no hearings"


def at_commit(folder: Path, commit: str) -> list[dict]:
    """The hearings replayed through the rules of `commit`: its musicvid and vipe_core, with this benchmark and
    the test fixtures that judge (so that both sides are judged alike)."""
    with tempfile.TemporaryDirectory() as tree:
        archived = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "musicvid", "vipe_core"], capture_output=True
        )
        if archived.returncode:
            said = archived.stderr.decode("utf-8", "replace").strip().splitlines() or ["git failed"]
            raise SystemExit(f"{PROG}: no rules of {commit} to replay through: {said[0]}")
        archive = archived.stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # after the tree: the run's own folder comes first
        command = [sys.executable, "-m", "benchmarks.replay", "replay", str(folder.resolve()), "--json"]
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:  # (rules too old for this benchmark, say: their last line says why)
        said = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise SystemExit(f"{PROG}: the rules of {commit} could not replay the hearings: {said[-1]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def changed(rows: list[dict], base: list[dict]) -> list[str]:
    """The songs whose rows differ between the base's and these, one line each: the result, and each sung line's
    error that changed (a generated song), or the scene starts only the base's (-) or only these (+)."""
    before = {row["song"]: row for row in base}
    lines = []
    for row in rows:
        if (old := before.get(row["song"], {})) == row:
            continue
        if "passed" in row:  # a line's error, by the line
            was = old.get("errors", [None] * len(row["errors"]))
            moved = [f"line {n + 1} {a} -> {b}" for n, (a, b) in enumerate(zip(was, row["errors"])) if a != b]
            lines.append(f"{row['song']}: passed {old.get('passed')} -> {row['passed']}; {', '.join(moved)}")
            continue
        gone = [t for t in old.get("starts", []) if t not in row["starts"]]
        new = [t for t in row["starts"] if t not in old.get("starts", [])]
        lines.append(f"{row['song']}: found {old.get('found')} -> {row['found']}; starts -{gone} +{new}")
    return lines


def record(args) -> None:
    """Each song heard once, its hearing written to DIR as NAME.json (audio made or read, never kept)."""
    from musicvid.core.audio import load_audio
    from musicvid.lyrics.transcribe import hear
    from tests.fixtures.jamendo import read_songs
    from tests.fixtures.whisper_ct2 import load_tiny_en, load_whisper_base

    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        load = load_whisper_base if args.whisper == "base" else load_tiny_en
        asr = load(args.backend, folder)
        model = f"{args.backend}:{args.whisper}"
        songs = [fresh_song(kind, seed, folder) for kind in args.kinds for seed in args.seeds]
        for song in songs:
            audio = load_audio(song.make(folder))
            made = hearing(song.name, model, audio.info.duration, hear(asr, audio.samples, True), {"sung": song.sung})
            write_text(args.dir / f"{song.name}.json", json.dumps(made) + "\n")
            print(song.name, flush=True)
        for real in read_songs(args.jamendo) if args.jamendo else []:
            audio = load_audio(real.path)
            made = hearing(real.name, model, audio.info.duration, hear(asr, audio.samples, True), {"lines": real.lines})
            write_text(args.dir / f"{real.name}.json", json.dumps(made) + "\n")
            print(real.name, flush=True)


def replay(args) -> None:
    rows = replayed(args.dir)
    base = at_commit(args.dir, args.base) if args.base else None  # (a commit that is none: said before any row)
    for row in rows:
        print(json.dumps(row), flush=True)
    if args.json:
        return
    print(f"this tree: {summary(rows)}")
    if base is not None:
        print(f"{args.base}: {summary(base)}")
        print("\n".join(changed(rows, base)) or "no song's result differs")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("record", help="hear songs once; write their hearings to DIR")
    made.add_argument("dir", type=Path)
    made.add_argument("--backend", choices=("faster-whisper", "openai-whisper"), default="faster-whisper")
    made.add_argument("--whisper", choices=("tiny.en", "base"), default="tiny.en")
    made.add_argument("--seeds", type=int, nargs="*", default=[])
    made.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    made.add_argument("--jamendo", type=Path, nargs="?", const=SONGS, help="and the JamendoLyrics songs of FOLDER")
    again = commands.add_parser("replay", help="replay DIR's hearings through the rules; judge each song")
    again.add_argument("dir", type=Path)
    again.add_argument("--base", help="a commit whose rules replay them too: the songs whose result differs")
    again.add_argument("--json", action="store_true", help="the rows alone")
    args = parser.parse_args(argv)
    if args.command == "record" and args.jamendo and args.whisper != "base":
        parser.error("--jamendo needs --whisper base: its songs are French, Spanish and German")
    if args.command == "record" and not (args.seeds or args.jamendo):
        parser.error("give --seeds (generated songs), --jamendo, or both: nothing to hear")
    if args.command == "replay" and not args.dir.is_dir():
        parser.error(f"{args.dir} is no folder of hearings (record makes one)")
    record(args) if args.command == "record" else replay(args)


if __name__ == "__main__":
    main()
