"""How fast the command line answers when it has no work to do: `musicvid --help`, `musicvid render --help` and
refusals of bad arguments, each a fresh process (as a person types it), timed from its start to its exit.

    python -m benchmarks.command_line             # 10 runs of each
    python -m benchmarks.command_line --quick     # 1 run of each: checks the script still works (its own file)

Each command runs through `python -m musicvid`; one more run of it reports the exit code, its first line on
standard error and which of torch, diffusers and transformers it imported (read from sys.modules at its exit):
what was timed is what the table says ran. Writes JSON (default benchmarks/results/command-line-<host>.json;
--quick's, command-line-<host>-quick.json), which says how many runs each command had, and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vipe_core.atomic import write_text

HEAVY = ("torch", "diffusers", "transformers")
COMMANDS = {
    "--help": ["--help"],
    "render --help": ["render", "--help"],
    "render --fps 0": ["render", "song.mp3", "--fps", "0"],
    "render --size 7x7": ["render", "song.mp3", "--size", "7x7"],
    "render --bogus": ["render", "song.mp3", "--bogus"],
    "render --models nope": ["render", "song.mp3", "--models", "nope"],
    "plan --gpu-memory -1": ["plan", "song.mp3", "--gpu-memory", "-1"],
    "batch (no playlist)": ["batch", "missing.m3u", "-o", "out"],
    "score --fps 0": ["score", "work", "--fps", "0"],
}
# Runs the command line as `python -m musicvid` does, then says what it imported, on its last line
READ_BACK = (
    "import sys\nfrom musicvid.cli import main\ncode = main(sys.argv[1:])\n"
    f"print('imported:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\nsys.exit(code)"
)


def seconds(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "musicvid", *argv], cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - started


def what_ran(argv: list[str], cwd: Path) -> dict:
    """The exit code, the first line said on standard error and the heavy modules imported."""
    done = subprocess.run([sys.executable, "-c", READ_BACK, *argv], cwd=cwd, capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    imported = json.loads(lines[-1].removeprefix("imported: ").replace("'", '"'))
    return {"exit_code": done.returncode, "said": lines[0] if len(lines) > 1 else "", "imported": imported}


def measure(runs: int, cwd: Path) -> list[dict]:
    rows = []
    for name, argv in COMMANDS.items():
        seconds(argv, cwd)  # the first run fills the file system's cache
        times = [seconds(argv, cwd) for _ in range(runs)]
        rows.append({"command": name, "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)})
        rows[-1] |= what_ran(argv, cwd)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| command | median s | min s | exit | imported |", "|---|---|---|---|---|"]
    for r in rows:
        imported = ", ".join(r["imported"]) or "none of " + ", ".join(HEAVY)
        lines.append(f"| `musicvid {r['command']}` | {r['median_s']} | {r['min_s']} | {r['exit_code']} | {imported} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.command_line", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of each command, written apart")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, help="results JSON (default benchmarks/results/command-line-<host>.json)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be 1 or more, not {args.runs}")
    runs = 1 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as empty:  # (nothing there: every command is refused before it reads a file)
        rows = measure(runs, Path(empty))
    results = {"machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()}}
    results |= {"quick": args.quick, "runs_per_command": runs, "rows": rows}
    # a quick run never replaces the full run's file, which the docs quote
    name = f"command-line-{platform.node() or 'host'}{'-quick' if args.quick else ''}.json"
    out = args.out or Path(__file__).resolve().parent / "results" / name
    write_text(out, json.dumps(results, indent=2, allow_nan=False) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
