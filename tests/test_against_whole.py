"""A lever's pictures against the same storyboard's drawn whole (benchmarks/against_whole.py): what the keyframe
scores cannot tell of a lever that changes only the frames between."""

import json
import math

import numpy as np
import pytest
import torch
from PIL import Image

from benchmarks import quality as quality_benchmark
from benchmarks.against_whole import against_whole, compared
from musicvid.models.scorer import load_scorer
from musicvid.settings.presets import TINY


@pytest.fixture(scope="module")
def scorer():
    return load_scorer(TINY, torch.device("cpu"))


def pictures(folder, arrays):
    folder.mkdir(parents=True)
    for number, array in enumerate(arrays, start=1):
        Image.fromarray(array).save(folder / f"{number:06d}.png")


def test_psnr_is_of_the_mean_squared_difference_and_the_worst_picture_is_its_own(tmp_path, scorer):
    rng = np.random.default_rng(3)
    whole = [rng.integers(20, 236, (48, 64, 3), dtype=np.uint8) for _ in range(3)]
    shifted = [whole[0], whole[1] + np.uint8(4), whole[2] + np.uint8(10)]  # (no wrap: 20 to 245)
    pictures(tmp_path / "a", whole)
    pictures(tmp_path / "b", shifted)
    figures = compared(tmp_path / "a", tmp_path / "b", scorer)
    assert figures["pictures"] == 3
    mse = (0 + 16 + 100) / 3
    assert figures["psnr_db"] == pytest.approx(10 * math.log10(255**2 / mse), abs=0.01)
    assert figures["worst_psnr_db"] == pytest.approx(10 * math.log10(255**2 / 100), abs=0.01)
    assert figures["lowest_clip_image"] <= figures["clip_image"] <= 1.0 + 1e-4
    # the same pixels: no PSNR (not infinity, which JSON cannot hold), and each picture its own twin
    same = compared(tmp_path / "a", tmp_path / "a", scorer)
    assert same["psnr_db"] is None and same["worst_psnr_db"] is None
    assert same["lowest_clip_image"] == pytest.approx(1.0, abs=1e-4)
    json.dumps(same, allow_nan=False)


def test_pictures_of_other_names_or_sizes_are_said_not_comparable(tmp_path, scorer):
    picture = np.full((32, 32, 3), 90, np.uint8)
    pictures(tmp_path / "a" / "frames", [picture, picture])
    pictures(tmp_path / "b" / "frames", [picture])  # (another rate: fewer frames)
    pictures(tmp_path / "c" / "frames", [np.full((40, 32, 3), 90, np.uint8)] * 2)
    assert "other pictures" in against_whole(tmp_path / "a", tmp_path / "b", scorer)["between"]["not_comparable"]
    assert "32x40" in against_whole(tmp_path / "a", tmp_path / "c", scorer)["between"]["not_comparable"]
    assert against_whole(tmp_path / "a", tmp_path / "a", scorer)["keyframes"] == {"pictures": 0}  # (none drawn)


@pytest.mark.slow
def test_deep_share_keeps_every_keyframe_and_moves_only_the_frames_between(tmp_path, capsys):
    out = tmp_path / "quality.json"
    variants = ["deep-share-2=--deep-share 2", "other rate=--fps 2"]
    assert quality_benchmark.main(["--quick", "--out", str(out), *(f"--variant={v}" for v in variants)]) == 0
    rows = json.loads(out.read_text())["variants"]
    assert "against_whole" not in rows["csa"]  # (the pictures drawn whole themselves)
    shared = rows["deep-share-2"]["against_whole"]
    assert shared["keyframes"]["pictures"] == 2 and shared["keyframes"]["psnr_db"] is None
    # its keyframe scores are csa's, so they cannot tell the lever apart: the frames between do
    assert rows["deep-share-2"]["summary"]["lyric"] == rows["csa"]["summary"]["lyric"]
    between = shared["between"]
    assert between["pictures"] == 9 and between["psnr_db"] is not None and 30 < between["psnr_db"] < 90
    assert "not_comparable" in rows["other rate"]["against_whole"]["between"]
    printed = capsys.readouterr().out
    assert "Against csa's pictures, drawn whole" in printed and "| deep-share-2: between | 9 |" in printed
