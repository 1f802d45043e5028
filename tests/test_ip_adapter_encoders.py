"""Which image encoder an IP-Adapter is loaded with: image_encoder/ beside it, but for h94/IP-Adapter's SDXL vit-h
adapters (sdxl_models/ip-adapter*_sdxl_vit-h), the most used SDXL ones, the ViT-H of its models/ folder, as h94's
card says to load them. Round 11: the one beside (bigG) was taken, and such an adapter was refused as reading
"another model's encoder", from h94's own layout, a hub name or a copy of it."""

import pytest
import torch
from safetensors.torch import save

from musicvid.core.errors import UserError
from musicvid.models.drawing import check_reference_adapter, load_reference_adapter
from musicvid.models.lora_files import image_encoder_of
from musicvid.models.tiny import local_diffusion, random_ip_adapter
from musicvid.settings.presets import IP_ADAPTER_XL, TINY_XL
from tests.standins.hub import write_folder, write_repo
from tests.standins.ip_adapter import IMAGE_ENCODER_SIZES, IP_ADAPTER_REPO, ip_adapter_files
from tests.standins.sd import tiny_unet

VIT_H = "sdxl_models/ip-adapter_sdxl_vit-h.safetensors"


def h94_files() -> dict[str, bytes]:
    """The stand-in h94/IP-Adapter, and an SDXL adapter reading the ViT-H's (models/image_encoder's) embeddings."""
    adapter = random_ip_adapter(tiny_unet(TINY_XL), IMAGE_ENCODER_SIZES["projection_dim"], seed=3)
    flat = {f"{part}.{key}": value.half() for part, weights in adapter.items() for key, value in weights.items()}
    return {**ip_adapter_files(), VIT_H: save(flat)}


@pytest.fixture(scope="module")
def h94(tmp_path_factory):
    return write_folder(tmp_path_factory.mktemp("h94"), h94_files())


def test_a_vit_h_sdxl_adapter_takes_the_vit_h_of_h94s_layout_and_the_others_their_own(h94):
    assert image_encoder_of(h94 / VIT_H, "x") == h94 / "models" / "image_encoder"
    sdxl = h94 / IP_ADAPTER_XL.removeprefix(IP_ADAPTER_REPO + "/")
    assert image_encoder_of(sdxl, "x") == h94 / "sdxl_models" / "image_encoder"
    check_reference_adapter(str(h94 / VIT_H), TINY_XL, "sdxl")
    check_reference_adapter(str(sdxl), TINY_XL, "sdxl")


def test_an_adapter_whose_widths_no_encoder_of_its_layout_makes_is_still_refused(h94, tmp_path):
    (alone := tmp_path / "sdxl_models").mkdir()
    (alone / "vit-h.safetensors").write_bytes((h94 / VIT_H).read_bytes())
    (alone / "image_encoder").symlink_to(h94 / "sdxl_models" / "image_encoder")
    with pytest.raises(UserError, match="reads image embeddings 16 wide .image_proj.proj.weight., where the image"):
        check_reference_adapter(str(alone / "vit-h.safetensors"), TINY_XL, "sdxl")


def test_a_vit_h_sdxl_adapter_loads_with_the_vit_h_as_a_file_and_by_its_hub_name(h94, tmp_path, monkeypatch):
    import huggingface_hub.constants

    write_repo(tmp_path / "hub", IP_ADAPTER_REPO, h94_files())
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    for name in (str(h94 / VIT_H), f"{IP_ADAPTER_REPO}/{VIT_H}"):
        pipe = local_diffusion(TINY_XL)
        load_reference_adapter(pipe, name)
        assert pipe.image_encoder.config.projection_dim == IMAGE_ENCODER_SIZES["projection_dim"]
        assert pipe.image_encoder.dtype == torch.float32 == pipe.unet.dtype
