"""A picture model's folder whose weights are saved as a variant alone (save_pretrained(variant="bf16"), or fp16's
shards) loads, whatever its family, as its check before any work said it would: the check took such folders, and
their load failed after the storyboard (round 11's checkpoints: an SDXL folder of bf16 weights, Z-Image and FLUX.2
klein folders of fp16 or bf16 ones). musicvid.models.loading.pretrained tries the variant asked, the full weights,
then each variant the folder holds."""

import pytest
import torch

from musicvid.models.loading import load_diffusion, resolve_device
from musicvid.models.pipeline_files import check_picture_model
from musicvid.models.precision import Precision
from musicvid.models.weights_files import weights_variants
from musicvid.settings.presets import TINY, TINY_KLEIN


def test_the_variants_a_folder_holds_are_read_from_diffusers_and_transformers_names(tmp_path):
    names = {
        "unet": ["diffusion_pytorch_model.bf16.safetensors", "config.json"],
        "transformer": [
            *[f"diffusion_pytorch_model.fp16-0000{n}-of-00002.safetensors" for n in (1, 2)],
            "diffusion_pytorch_model.safetensors.index.fp16.json",
        ],
        "text_encoder": ["model-00001-of-00002.safetensors", "model.safetensors.index.json", "model.safetensors"],
        "vae": ["diffusion_pytorch_model.safetensors", "diffusion_pytorch_model.bin"],
    }
    for part, files in names.items():
        (tmp_path / part).mkdir()
        for name in files:
            (tmp_path / part / name).touch()
    assert weights_variants(tmp_path) == ["bf16", "fp16"]
    assert weights_variants(tmp_path / "vae") == [] and weights_variants(tmp_path / "none") == []
    (tmp_path / "model.ema.safetensors").touch()  # (a model saved alone, its files in the folder itself)
    assert weights_variants(tmp_path) == ["bf16", "ema", "fp16"]


@pytest.mark.parametrize("precision", ["float32", "float16"])  # (float16: a GPU's half precision, every module cast)
@pytest.mark.parametrize("name, variant", [(TINY, "bf16"), (TINY_KLEIN, "bf16"), (TINY_KLEIN, "fp16")])
def test_a_folder_of_variant_weights_alone_is_checked_and_loads_in_the_runs_dtype(tmp_path, name, variant, precision):
    from musicvid.models.tiny import local_diffusion
    from musicvid.models.tiny_flow import FLOW_DIFFUSION

    pipe = FLOW_DIFFUSION[name]() if name in FLOW_DIFFUSION else local_diffusion(name)
    pipe.save_pretrained(folder := tmp_path / "model", variant=variant)
    assert not list(folder.glob("*/diffusion_pytorch_model.safetensors")), "saved as the variant alone"
    family = "klein" if name == TINY_KLEIN else "sd"
    check_picture_model(str(folder), family)
    run = Precision.resolve(precision, resolve_device("cpu"))
    loaded = load_diffusion(str(folder), resolve_device("cpu"), run)
    expected = run.drawing(family)  # (SD's compute dtype; the flow families' bfloat16 where half is asked)
    for part, module in loaded.components.items():
        if isinstance(module, torch.nn.Module):
            held = {
                (t.dtype, t.device.type) for t in [*module.parameters(), *module.buffers()] if t.is_floating_point()
            }
            assert held == {(expected, "cpu")}, part
    for part in ("transformer", "unet", "vae"):
        if (module := getattr(loaded, part, None)) is not None:
            original = dict(getattr(pipe, part).named_parameters())
            for key, value in module.named_parameters():  # the variant's weights, not random ones
                torch.testing.assert_close(value.float(), original[key].to(value.dtype).float())
