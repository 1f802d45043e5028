"""Model files the checks before any work let through, and the render then failed on after the storyboard (round 11's
checkpoints): an IP-Adapter saved as h94/IP-Adapter publishes its adapters, a .bin holding a dict of two dicts (no
family was read from it); an SDXL folder whose model_index.json gives text_encoder_2 as [null, null], which diffusers
loads and the first prompt fails on; a Z-Image LoKr in LyCORIS's own module names, which diffusers renames for FLUX.2
klein alone; a LoRA of SDXL's refiner (kohya's lora_te2_, as SDXL's), given to SDXL; an SDXL folder whose
text_encoder_2 is a CLIPTextModel, without SDXL's projection; a Wan folder without the image encoder its transformer
reads; an older .bin LoRA of another family."""

import json
import shutil

import pytest
import torch
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.models.lora_files import check_adapter, check_lora, check_lycoris, text_width
from musicvid.models.pipeline_files import check_picture_model, check_video_model_files
from musicvid.settings.presets import TINY_XL, WAN_FLF2V
from tests.helpers import make_tone, quick
from tests.standins.hub import snapshot
from tests.test_model_checks import refused_before_the_work
from tests.test_model_files_before_work import KOHYA, written


def adapter_bin(path, text_width: int, image_width: int = 16):
    """An IP-Adapter laid out as h94's .bin files: {"image_proj": {...}, "ip_adapter": {...}} (what diffusers reads)."""
    image_proj = {"proj.weight": torch.zeros(4 * text_width, image_width), "norm.weight": torch.zeros(text_width)}
    ip_adapter = {f"1.{k}_ip.weight": torch.zeros(320, text_width) for k in ("to_k", "to_v")}  # (a UNet's first)
    torch.save({"image_proj": image_proj, "ip_adapter": ip_adapter}, path)
    return path


def test_an_ip_adapter_bin_of_another_family_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    Image.new("RGB", (32, 32), "red").save(reference := tmp_path / "ref.png")
    (tmp_path / "image_encoder").mkdir()  # (beside it, as h94 keeps it: the family is refused first)
    adapter = adapter_bin(tmp_path / "ip-adapter_sdxl.bin", 2048)
    argv = quick(song, "--reference", reference, "--ip-adapter", adapter)
    refused_before_the_work(capsys, tmp_path, argv, "ip-adapter_sdxl.bin: an IP-Adapter of SDXL, not of Stable")


def test_an_ip_adapter_bin_is_read_as_its_safetensors_twin(tmp_path):
    check_adapter(adapter_bin(tmp_path / "sd.bin", 768), "--ip-adapter sd.bin", "sd")
    with pytest.raises(UserError, match="an IP-Adapter of Stable Diffusion 1.x, not of SDXL"):
        check_adapter(tmp_path / "sd.bin", "--ip-adapter sd.bin", "sdxl")
    torch.save({"lora_unet_down_blocks_1.lora_down.weight": torch.zeros(1, 768)}, lora := tmp_path / "lora.bin")
    with pytest.raises(UserError, match="lora.bin is not an IP-Adapter"):
        check_adapter(lora, "--ip-adapter lora.bin", "sd")
    torch.save({"image_proj": {"proj": [1, 2]}}, listed := tmp_path / "listed.bin")
    with pytest.raises(UserError, match="holds no state dict of tensors"):
        check_adapter(listed, "--ip-adapter listed.bin", "sd")


@pytest.mark.parametrize("entry", [[None, None], None])
def test_an_sdxl_folder_without_its_second_text_encoder_is_refused_before_any_work(capsys, tmp_path, entry):
    from musicvid.models.tiny import local_diffusion

    local_diffusion(TINY_XL).save_pretrained(folder := tmp_path / "xl")
    index = json.loads((folder / "model_index.json").read_text())
    index.update(text_encoder_2=entry, tokenizer_2=entry)
    (folder / "model_index.json").write_text(json.dumps({k: v for k, v in index.items() if v is not None}))
    said = "its model_index.json gives no text_encoder_2, which StableDiffusionXLPipeline draws with"
    with pytest.raises(UserError, match=said):
        check_picture_model(str(folder), "sdxl")
    song = make_tone(tmp_path / "song.wav", 2)
    capsys.readouterr()  # (the save's progress bars)
    refused_before_the_work(capsys, tmp_path, quick(song, "--diffusion", folder), said)


def test_a_lokr_in_lycoris_names_is_refused_for_z_image_and_taken_for_klein():
    lycoris = {"lycoris_layers_0_attention_to_q.lokr_w1": [2, 2], "lycoris_layers_0_attention_to_q.lokr_w2": [8, 8]}
    with pytest.raises(UserError, match="^--lora z is a LoKr in LyCORIS's own module names .lycoris_...., which"):
        check_lycoris(lycoris, "--lora z", "zimage")
    check_lycoris(lycoris, "--lora z", "klein")
    check_lycoris(
        {
            k.replace("lycoris_layers_0_attention_to_q", "diffusion_model.layers.0.attention.to_q"): v
            for k, v in lycoris.items()
        },
        "--lora z",
        "zimage",
    )
    with pytest.raises(UserError, match="which diffusers loads only into FLUX.2 klein: give a LoRA"):
        check_lycoris(lycoris, "--lora z", "sd")


def test_a_lora_of_sdxls_refiner_is_refused_for_sdxl_by_the_width_its_text_reads(tmp_path):
    te2 = "lora_te2_text_model_encoder_layers_0_self_attn_{}_proj.lora_down.weight"
    refiner = {KOHYA.format("input_blocks_4_1"): (4, 1280), **{te2.format(p): (4, 1280) for p in "qkv"}}
    refiner[te2.format("out")] = (4, 1280)
    written(lora := tmp_path / "refiner.safetensors", refiner)
    with pytest.raises(UserError, match="^--lora r: a LoRA of SDXL's refiner, not of SDXL$"):
        check_lora(lora, "--lora r", "sdxl")
    written(lora, {**refiner, KOHYA.format("input_blocks_4_1"): (4, 2048)})  # (SDXL's: its text 2048 wide)
    check_lora(lora, "--lora r", "sdxl")


def test_an_sdxl_folder_whose_second_text_encoder_lacks_its_projection_is_refused(tmp_path):
    from transformers import CLIPTextModel

    from musicvid.models.tiny import local_diffusion

    pipe = local_diffusion(TINY_XL)
    pipe.save_pretrained(folder := tmp_path / "xl")
    shutil.rmtree(folder / "text_encoder_2")
    CLIPTextModel(pipe.text_encoder_2.config).save_pretrained(folder / "text_encoder_2")  # (no text_projection)
    index = json.loads((folder / "model_index.json").read_text())
    (folder / "model_index.json").write_text(json.dumps({**index, "text_encoder_2": ["transformers", "CLIPTextModel"]}))
    said = "xl's text_encoder_2 is a CLIPTextModel, where StableDiffusionXLPipeline draws with a CLIPTextModelWith"
    with pytest.raises(UserError, match=said):
        check_picture_model(str(folder), "sdxl")


def test_a_wan_folder_without_the_image_encoder_its_transformer_reads_is_refused(standin_hub, tmp_path):
    """Wan 2.1's transformer reads the first frame's image embeddings (image_dim); Wan 2.2's reads none, and its
    folders go without an image encoder."""
    folder = shutil.copytree(snapshot(standin_hub, WAN_FLF2V), tmp_path / "wan")
    index = json.loads((folder / "model_index.json").read_text())
    (folder / "model_index.json").write_text(json.dumps({**index, "image_encoder": [None, None]}))
    with pytest.raises(UserError, match="its model_index.json gives no image_encoder, which WanImageToVideoPipeline"):
        check_video_model_files(str(folder))
    config = json.loads((folder / "transformer" / "config.json").read_text())
    (folder / "transformer" / "config.json").write_text(json.dumps({**config, "image_dim": None}))
    check_video_model_files(str(folder))


def test_an_older_bin_lora_of_another_family_is_refused_as_its_safetensors_twin_is(tmp_path):
    """diffusers' older pytorch_lora_weights.bin (its attention processors' names): one of SD 1.x given to SDXL was
    judged only as it loaded, after the storyboard (round 11)."""
    layer = "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn2.processor.to_k_lora"
    torch.save(
        {f"{layer}.down.weight": torch.zeros(4, 768), f"{layer}.up.weight": torch.zeros(640, 4)},
        lora := tmp_path / "pytorch_lora_weights.bin",
    )
    with pytest.raises(UserError, match="^--lora l: a LoRA of Stable Diffusion 1.x, not of SDXL$"):
        check_lora(lora, "--lora l", "sdxl")
    check_lora(lora, "--lora l", "sd")


def test_an_adapter_reading_other_text_than_the_picture_models_unet_is_refused_whatever_its_width(tmp_path):
    """Widths no family is known by (the tiny presets' 32 and 80, or a fine-tune's own) went through, and the load
    failed after the storyboard in torch's words: they are laid against the UNet's own cross_attention_dim."""
    from musicvid.models.tiny import local_diffusion

    local_diffusion(TINY_XL).save_pretrained(folder := tmp_path / "xl")
    assert text_width(str(folder)) == 80 and text_width(str(tmp_path / "none")) is None
    said = "reads text 32 wide, where the picture model's UNet reads 80: {} of another model"
    with pytest.raises(UserError, match=said.format("an IP-Adapter")):
        check_adapter(adapter_bin(tmp_path / "ip.bin", 32), "--ip-adapter ip.bin", "sdxl", text_width(str(folder)))
    written(lora := tmp_path / "lora.safetensors", {KOHYA.format("input_blocks_4_1"): (4, 32)})
    with pytest.raises(UserError, match=said.format("a LoRA")):
        check_lora(lora, "--lora l", "sdxl", 80)
    check_lora(lora, "--lora l", "sdxl", 32)
    check_adapter(tmp_path / "ip.bin", "--ip-adapter ip.bin", "sdxl", 32)
