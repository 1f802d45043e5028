"""The packages a benchmark needs that a lent GPU's machine lacks, packed to travel with the working tree. That
machine has no package index; its image holds torch, transformers and numpy but not diffusers, Whisper, librosa or
ffmpeg; and the device tool carries at most 64 MiB a call, the working tree included.

    python -m benchmarks.kit            # here, where pip reaches PyPI: .kit/1, .kit/2, ... and .kit/calls.txt

Each distribution of MISSING, at requirements.lock's version, is installed as CPython 3.12 on manylinux x86-64
installs it (pip --target; openai-whisper, which PyPI has as source alone, is built into a wheel first) and packed
whole as NAME.tar.xz, beside the headline's song sung by espeak-ng (song.tar.xz: the machine has no espeak-ng).
The packs go into parts, largest first, each into the first part it fits:

    size(part) <= limit = 64 MiB - size(working tree) - MARGIN

A call carries one part and unpacks it into .site, which stays on the machine while it is warm (the next call
follows at once); the last call runs the benchmark. calls.txt has each call's command.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARRIED = 64 * 2**20  # the device tool's limit a call: the working tree and the carried paths
MARGIN = 2**20  # files the tree may gain between packing and the last call

# What `python -m benchmarks.device` imports that the image lacks (its package list, KINDS.md of the device tool
# on 2026-11-17), as a dry run in the image's versions (Python 3.12, torch 2.11, transformers 5.17) showed
MISSING = (
    "diffusers",
    "openai-whisper",
    "more-itertools",  # openai-whisper's
    "faster-whisper",  # Silero, for both Whisper backends
    "ctranslate2",  # faster-whisper imports it, and PyAV, whatever it is asked for
    "av",
    "librosa",
    "audioread",
    "decorator",
    "pooch",
    "platformdirs",
    "soxr",
    "soundfile",
    "cffi",  # soundfile's
    "pycparser",
    "imageio-ffmpeg",  # the ffmpeg the MP4s are made with
    "mutagen",
    "spandrel",
    "wcwidth",
    "ftfy",
    "py3langid",  # the language the lyrics are written in
)
TARGET = ["--python-version", "3.12", "--implementation", "cp", "--only-binary=:all:"] + [
    f"--platform={tag}_x86_64" for tag in ("manylinux_2_28", "manylinux_2_27", "manylinux_2_17", "manylinux2014")
]


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(lock: str) -> dict[str, str]:
    """requirements.lock's versions by canonical name: `name==version ; markers` lines."""
    found = re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", lock, re.MULTILINE)
    return {canonical(match[1]): match[2] for match in found}


def parts(sizes: dict[str, int], limit: int) -> list[list[str]]:
    """First fit, largest first: each pack into the first part with room, a new part where none has.
    Every part's sum(sizes) <= limit; a pack over the limit is refused (no part could carry it)."""
    too_big = [name for name, size in sizes.items() if size > limit]
    if too_big:
        raise SystemExit(f"{', '.join(too_big)}: larger packed than a call carries ({limit / 2**20:.1f} MiB)")
    filled: list[list[str]] = []
    room: list[int] = []
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        index = next((i for i, left in enumerate(room) if sizes[name] <= left), len(filled))
        if index == len(filled):
            filled.append([])
            room.append(limit)
        filled[index].append(name)
        room[index] -= sizes[name]
    return filled


def tree_size(root: Path) -> int:
    """Bytes the device tool sends of the working tree: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    paths = (root / name for name in listed.decode().split("\0") if name)
    return sum(path.stat().st_size for path in paths if path.is_file())


def install(name: str, version: str, work: Path) -> Path:
    """The distribution as pip --target lays it out for the machine's Python, in a folder of its own."""
    wheels = work / "wheels" / name
    pip = [sys.executable, "-m", "pip", "-q"]
    if name == "openai-whisper":
        subprocess.run([*pip, "wheel", "--no-deps", "-w", wheels, f"{name}=={version}"], check=True)
    else:
        subprocess.run([*pip, "download", "--no-deps", *TARGET, "-d", wheels, f"{name}=={version}"], check=True)
    site = work / "site" / name
    wheel = [str(path) for path in wheels.glob("*.whl")]
    subprocess.run([*pip, "install", "--no-deps", "--no-compile", *TARGET, "--target", site, *wheel], check=True)
    return site


def pack(site: Path, to: Path) -> int:
    """The folder's contents as an xz tarball; its size."""
    with tarfile.open(to, "w:xz", preset=9) as tar:
        for path in sorted(site.iterdir()):
            tar.add(path, arcname=path.name)
    return to.stat().st_size


def sung(work: Path) -> Path:
    """The headline's song, sung by espeak-ng here (the machine has none: a song of no voice would leave Whisper's
    cost out), in a folder of its own: song/song-180s.mp3 and its timed lyrics beside it."""
    from benchmarks.device import SONG_SECONDS
    from benchmarks.whole_song import sung_song

    site = work / "site" / "song"
    (site / "song").mkdir(parents=True)
    song, _, voice = sung_song(site / "song", SONG_SECONDS)
    if voice != "espeak-ng":
        raise SystemExit(f"the headline's song is sung by espeak-ng, and it has {voice}: install espeak-ng")
    for path in song.parent.iterdir():  # what it was made of (the band's and each line's WAV) is left out
        if path not in (song, song.with_suffix(".lrc")):
            path.unlink()
    return site


def calls(count: int, out: str) -> str:
    """Each call's command: unpack its part into .site and mark it there; the last checks that the earlier parts are
    still there (a machine idle 30 s is given back, bare) and runs the benchmark on the song sung here."""
    # Python's tar (an xz binary may be missing there), whose data filter keeps ffmpeg's executable bit
    unpack = 'for f in {out}/{n}/*.tar.xz; do python3 -m tarfile --filter data -e "$f" .site || exit 1; done'
    from benchmarks.device import SONG_SECONDS

    earlier = " && ".join(
        f'{{ test -e .site/.part-{n} || {{ echo "part {n} is not on this machine: it was given back after an idle 30 s;'
        f' run calls 1 to {count} again, each at once after the one before"; exit 3; }}; }}'
        for n in range(1, count)
    )
    run = (
        "export PYTHONPATH=$PWD/.site:$PWD PYTHONUNBUFFERED=1 && python3 -m benchmarks.device"
        f" --song .site/song/song-{SONG_SECONDS:g}s.mp3 --out $OUT/gpu.json"  # as synthesize_song names it
        " --compile-artifacts $OUT/compile-cache.bin"  # (what a compiled row compiled comes back, for a later lease)
    )
    # the last call's limit, 10 minutes, holds the benchmark's budget (480 s), its start and a song's overrun
    lines = [
        f"call {n} (carry {out}/{n}, timeout_s {600 if n == count else 120}): "
        + (f"{earlier} && " if n == count and earlier else "")
        + f"{unpack.format(out=out, n=n)} && touch .site/.part-{n}"
        for n in range(1, count + 1)
    ]
    return "\n".join(lines) + f" && {run}\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".kit", help="a new folder (default .kit)")
    args = parser.parse_args(argv)
    if args.out.exists():
        parser.error(f"{args.out} exists: the kit is made in a new folder")
    out = args.out.resolve()
    ignored = subprocess.run(["git", "check-ignore", "-q", out / "1"], cwd=ROOT, check=False).returncode == 0
    if not (out.is_relative_to(ROOT) and ignored):
        parser.error(f"{args.out}: a call carries a folder of the working tree that git ignores (as .kit)")
    versions = pinned((ROOT / "requirements.lock").read_text())
    unpinned = [name for name in MISSING if canonical(name) not in versions]
    if unpinned:
        parser.error(f"requirements.lock pins no version of {', '.join(unpinned)}")
    limit = CARRIED - tree_size(ROOT) - MARGIN
    with tempfile.TemporaryDirectory(prefix=".kit-", dir=args.out.parent) as temporary:
        work = Path(temporary)
        (work / "kit").mkdir()
        sizes = {}
        for name in MISSING:
            sizes[name] = pack(install(name, versions[canonical(name)], work), work / "kit" / f"{name}.tar.xz")
            print(f"{name} {versions[canonical(name)]}: {sizes[name] / 2**20:.1f} MiB packed", flush=True)
        sizes["song"] = pack(sung(work), work / "kit" / "song.tar.xz")
        grouped = parts(sizes, limit)
        for number, names in enumerate(grouped, 1):
            (work / "kit" / str(number)).mkdir()
            for name in names:
                (work / "kit" / f"{name}.tar.xz").rename(work / "kit" / str(number) / f"{name}.tar.xz")
        (work / "kit" / "calls.txt").write_text(calls(len(grouped), str(out.relative_to(ROOT))))
        (work / "kit").rename(args.out)
    for number, names in enumerate(grouped, 1):
        print(f"part {number}: {sum(sizes[n] for n in names) / 2**20:.1f} MiB ({', '.join(names)})")
    print((args.out / "calls.txt").read_text(), end="")


if __name__ == "__main__":
    main()
