"""IP-Adapter Plus (and full face) read the image encoder's hidden states, not its projected embedding; FaceID reads a
face's InsightFace embedding, which musicvid does not make. Round 12: a Plus adapter passed every check, then failed
at the first keyframe (the projected embedding fed to its resampler); a FaceID one too."""

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import save

from musicvid.core.errors import UserError
from musicvid.models.drawing import check_reference_adapter, load_reference_adapter
from musicvid.models.internals import reads_hidden_states
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.models.timing import Timings
from musicvid.models.tiny import local_diffusion, random_ip_adapter
from musicvid.pictures.conditioning import SceneInputs, embed_picture, no_picture
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import IP_ADAPTER, PRESETS, SD15, TINY
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.standins.hub import write_folder
from tests.standins.ip_adapter import FULL_FACE, IMAGE_ENCODER_SIZES, IP_ADAPTER_REPO, PLUS, ip_adapter_files
from tests.standins.sd import tiny_unet

PLAIN = IP_ADAPTER.removeprefix(IP_ADAPTER_REPO + "/")
TOKENS = (224 // 14) ** 2 + 1  # the stand-in ViT's patches and its class token


@pytest.fixture(scope="module")
def h94(tmp_path_factory):
    return write_folder(tmp_path_factory.mktemp("h94"), ip_adapter_files())


def picture(path, colour):
    Image.fromarray(np.full((64, 96, 3), colour, np.uint8)).save(path)
    return str(path)


def inputs_of(pipe, tmp_path, settings) -> SceneInputs:
    scenes = [
        Scene(0, "lyric", 0.0, 1.0, prompt="a", seed=1, reference=picture(tmp_path / "a.png", (200, 40, 40))),
        Scene(1, "lyric", 1.0, 2.0, prompt="b", seed=2),
        Scene(2, "lyric", 2.0, 3.0, prompt="c", seed=3, picture=picture(tmp_path / "pin.png", (20, 90, 200))),
    ]
    return SceneInputs(pipe, Storyboard(audio=SongAudio(3.0), scenes=scenes), [0, 1, 2], settings)


@pytest.mark.parametrize("adapter, guidance", [(PLUS, 7.5), (PLUS, 1.0), (FULL_FACE, 7.5)])
def test_plus_and_full_face_draw_from_the_hidden_states_their_no_picture_the_zero_pixels(
    h94, tmp_path, adapter, guidance
):
    check_reference_adapter(str(h94 / adapter), TINY, "sd")
    pipe = local_diffusion(TINY)
    load_reference_adapter(pipe, str(h94 / adapter))
    assert reads_hidden_states(pipe)
    settings = resolve_render_settings(PRESETS["tiny"], {"guidance": guidance})
    own = pipeline_for(pipe, settings)
    inputs = inputs_of(own, tmp_path, settings)  # (the pinned scene inverted under its "no picture")
    width = IMAGE_ENCODER_SIZES["hidden_size"]
    assert inputs.image[0].shape == inputs.no_image.shape == (TOKENS, width)
    zero = torch.zeros(1, 3, 224, 224)
    assert torch.allclose(inputs.no_image, pipe.image_encoder(zero, output_hidden_states=True).hidden_states[-2][0])
    assert torch.equal(inputs.image[1], inputs.no_image) and not torch.allclose(inputs.image[0], inputs.no_image)
    group = [Picture(None, "", 0, 1, t) for t in (0.0, 0.5)]
    together = draw_group(own, inputs, group, settings, Timings())
    alone = np.concatenate([draw_group(own, inputs, [p], settings, Timings()) for p in group])
    assert together.shape == (2, settings.height, settings.width, 3)
    assert np.abs(together.astype(int) - alone).max() <= 1


def test_a_plain_adapter_still_reads_the_projected_embedding_its_no_picture_zeros(h94):
    pipe = local_diffusion(TINY)
    load_reference_adapter(pipe, str(h94 / PLAIN))
    assert not reads_hidden_states(pipe)
    assert torch.equal(no_picture(pipe), torch.zeros(IMAGE_ENCODER_SIZES["projection_dim"]))


def test_a_face_id_adapter_is_refused_before_any_work(h94):
    unet = tiny_unet(TINY)
    width = unet.config.cross_attention_dim
    face = {"proj.0.weight": torch.randn(64, 512), "proj.2.weight": torch.randn(4 * width, 64)}
    face |= {"norm.weight": torch.ones(width), "norm.bias": torch.zeros(width)}
    tensors = {"image_proj": face, "ip_adapter": random_ip_adapter(unet, 16)["ip_adapter"]}
    path = h94 / "models" / "ip-adapter-faceid_sd15.safetensors"
    path.write_bytes(save({f"{part}.{k}": v.half() for part, kv in tensors.items() for k, v in kv.items()}))
    with pytest.raises(UserError, match=r"is an IP-Adapter FaceID: it reads a face's InsightFace embedding"):
        check_reference_adapter(str(path), TINY, "sd")


def test_the_tiny_adapter_beside_a_named_picture_model_reads_pictures_its_encoder_takes(standin_hub, tmp_path):
    """`--models tiny --diffusion <SD 1.5 by hub name> --reference`: the named pipeline's processor crops to its
    real encoder's 224 pixels (round 12: "Input image size (224*224) doesn't match model (32*32)" at a keyframe)."""
    pipe = load_diffusion(SD15, torch.device("cpu"), Precision.resolve("float32", torch.device("cpu")))
    load_reference_adapter(pipe, TINY)
    embedded = embed_picture(pipe, Path(picture(tmp_path / "a.png", (200, 40, 40))))
    assert embedded.shape == (pipe.image_encoder.config.projection_dim,) and embedded.abs().sum() > 0


@pytest.mark.parametrize("adapter", [PLUS, FULL_FACE])
def test_a_plus_adapter_by_hub_name_draws_in_bfloat16_every_module_keeping_its_dtype(standin_hub, tmp_path, adapter):
    """h94's Plus (and full-face) file by its hub name in the stand-in cache, beside SD 1.5 by its hub name, in half
    precision: the adapter, its encoder and the pipeline's every floating tensor stay bfloat16 on the CPU through a
    drawn group."""
    name = f"{IP_ADAPTER_REPO}/{adapter}"
    check_reference_adapter(name, SD15, "sd")
    precision = Precision.resolve("bfloat16", torch.device("cpu"))
    pipe = load_diffusion(SD15, torch.device("cpu"), precision)
    load_reference_adapter(pipe, name)
    assert reads_hidden_states(pipe)
    settings = resolve_render_settings(PRESETS["tiny"], {"size": (64, 64), "steps": 2})
    own = pipeline_for(pipe, settings)
    drawn = draw_group(own, inputs_of(own, tmp_path, settings), [Picture(None, "", 0, 1, 0.5)], settings, Timings())
    assert drawn.shape == (1, 64, 64, 3) and drawn.std() > 0
    for part, module in pipe.components.items():
        floating = (
            [t for t in module.state_dict().values() if t.is_floating_point()] if hasattr(module, "state_dict") else []
        )
        dtypes = {(t.dtype, t.device.type) for t in floating}
        wanted = precision.vae(False) if part == "vae" else torch.bfloat16
        assert dtypes <= {(wanted, "cpu")}, (part, dtypes)
