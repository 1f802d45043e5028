"""benchmarks.kit: the packages a lent GPU's machine lacks, in parts that each fit one call of the device tool."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import tarfile

import pytest

from benchmarks import kit


def test_every_pack_goes_into_one_part_and_no_part_is_over_the_limit():
    rng = random.Random(5)
    for _ in range(200):
        limit = rng.randint(10, 100)
        sizes = {f"p{i}": rng.randint(1, limit) for i in range(rng.randint(1, 12))}
        grouped = kit.parts(sizes, limit)
        assert sorted(itertools.chain(*grouped)) == sorted(sizes)
        assert all(sum(sizes[name] for name in part) <= limit for part in grouped)
        # first fit: a part is opened only where the pack fits in none before it
        for index, part in enumerate(grouped[1:], 1):
            first = part[0]
            assert all(sum(sizes[n] for n in earlier) + sizes[first] > limit for earlier in grouped[:index])


def test_the_largest_packs_go_first_and_the_small_fill_the_room_left():
    sizes = {"ffmpeg": 48, "ctranslate2": 24, "av": 24, "diffusers": 2, "whisper": 1}
    assert kit.parts(sizes, 55) == [["ffmpeg", "diffusers", "whisper"], ["av", "ctranslate2"]]


def test_a_pack_larger_than_a_call_carries_is_refused():
    with pytest.raises(SystemExit, match="ffmpeg: larger packed than a call carries"):
        kit.parts({"ffmpeg": 70 * 2**20, "av": 1}, 60 * 2**20)


def test_every_package_the_kit_packs_is_pinned_by_the_lock():
    versions = kit.pinned((kit.ROOT / "requirements.lock").read_text())
    assert {kit.canonical(name) for name in kit.MISSING} <= set(versions)
    assert versions["imageio-ffmpeg"] and versions[kit.canonical("More_Itertools")]


def test_each_call_unpacks_its_part_and_the_last_runs_the_benchmark_once_the_earlier_parts_are_there(tmp_path):
    lines = kit.calls(2, ".kit").splitlines()
    told = [line.split(":", 1)[0] for line in lines]
    assert told == ["call 1 (carry .kit/1, timeout_s 120)", "call 2 (carry .kit/2, timeout_s 600)"]
    for n, name in ((1, "diffusers"), (2, "av")):  # a part as the kit packs it
        (tmp_path / ".kit" / str(n) / name).mkdir(parents=True)
        (tmp_path / ".kit" / str(n) / name / "__init__.py").write_text(f"part = {n}\n")
        with tarfile.open(tmp_path / ".kit" / str(n) / f"{name}.tar.xz", "w:xz") as packed:
            packed.add(tmp_path / ".kit" / str(n) / name, arcname=name)
    stubs = tmp_path / "bin"  # python3, but the benchmark itself only says how it was called
    stubs.mkdir()
    (stubs / "python3").write_text(
        f'#!/bin/sh\nif [ "$2" = benchmarks.device ]; then echo "ran $*"; exit 0; fi\nexec {sys.executable} "$@"\n'
    )
    (stubs / "python3").chmod(0o755)

    def call(n: int) -> subprocess.CompletedProcess:
        environment = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "OUT": str(tmp_path / "out")}
        command = lines[n - 1].split(": ", 1)[1]
        return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=environment, capture_output=True, text=True)

    alone = call(2)  # on a machine given back between the calls: said, and nothing run
    assert alone.returncode == 3 and "part 1 is not on this machine" in alone.stdout and "ran" not in alone.stdout
    assert not (tmp_path / ".site" / "av").exists()
    assert call(1).returncode == 0 and (tmp_path / ".site" / "diffusers" / "__init__.py").is_file()
    last = call(2)
    assert last.returncode == 0 and (tmp_path / ".site" / "av" / "__init__.py").read_text() == "part = 2\n"
    assert last.stdout.strip() == (
        f"ran -m benchmarks.device --song .site/song/song-180s.mp3 --out {tmp_path / 'out'}/gpu.json"
        f" --compile-artifacts {tmp_path / 'out'}/compile-cache.bin"
    )


def test_the_kit_is_made_in_a_new_folder_only(tmp_path, capsys):
    (tmp_path / "kept.txt").write_text("a person's file\n")
    with pytest.raises(SystemExit) as refused:
        kit.main(["--out", str(tmp_path)])
    assert refused.value.code == 2 and "exists: the kit is made in a new folder" in capsys.readouterr().err
    assert (tmp_path / "kept.txt").read_text() == "a person's file\n"


@pytest.mark.parametrize("where", ["{tmp}/kit", "benchmarks/kit-parts"])
def test_the_kit_goes_into_a_folder_of_the_tree_that_git_ignores_as_a_call_carries_one(tmp_path, capsys, where):
    out = where.format(tmp=tmp_path)
    with pytest.raises(SystemExit) as refused:
        kit.main(["--out", out if out.startswith("/") else str(kit.ROOT / out)])
    assert refused.value.code == 2 and "a call carries a folder of the working tree that git ignores" in (
        capsys.readouterr().err
    )
    assert not (kit.ROOT / "benchmarks" / "kit-parts").exists() and not (tmp_path / "kit").exists()
