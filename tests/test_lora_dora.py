"""A DoRA saved by kohya's or LyCORIS's scripts (each layer's magnitudes as `dora_scale`) is refused before any work:
diffusers' LoRA loaders leave the magnitudes out with a log line alone, so round 12's DoRA drew pictures identical to
the same LoRA without them, without a word."""

import pytest
import torch
from safetensors.torch import load, save

from musicvid.core.errors import UserError
from musicvid.models.lora_files import check_lora
from tests.helpers import make_tone, quick
from tests.standins.loras import kohya_lora
from tests.test_model_checks import refused_before_the_work


def with_magnitudes(lora: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """`lora` as a DoRA: each layer's magnitude (out × 1, beside its down matrix), as kohya's sd-scripts save one."""
    magnitudes = {
        key.replace("lora_down.weight", "dora_scale"): torch.ones(lora[key.replace("lora_down", "lora_up")].shape[0], 1)
        for key in lora
        if key.endswith("lora_down.weight")
    }
    return lora | {key: value.half() for key, value in magnitudes.items()}


def test_a_dora_is_refused_before_any_work_as_safetensors_and_as_an_older_bin(capsys, tmp_path):
    plain = load(kohya_lora())
    (tmp_path / "plain.safetensors").write_bytes(save(plain))
    check_lora(tmp_path / "plain.safetensors", "--lora plain", "sd")
    dora = tmp_path / "dora.safetensors"
    dora.write_bytes(save(with_magnitudes(plain)))
    said = r"is a DoRA \(lora_\w+\.dora_scale\): diffusers would leave out its magnitudes and draw it as a plain LoRA"
    with pytest.raises(UserError, match=said):
        check_lora(dora, "--lora dora.safetensors", "sd")
    torch.save(with_magnitudes(plain), older := tmp_path / "pytorch_lora_weights.bin")
    with pytest.raises(UserError, match=said):
        check_lora(older, "--lora pytorch_lora_weights.bin", "sd")
    song = make_tone(tmp_path / "song.wav", 2)
    refused_before_the_work(capsys, tmp_path, quick(song, "--lora", dora), "is a DoRA", "plain LoRA")
