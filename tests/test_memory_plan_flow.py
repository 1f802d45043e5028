"""The memory plan of the flow-matching families (Z-Image-Turbo, FLUX.2 klein 4B): their weights as published, read
back from their architectures on the meta device; their text encoder's pass apart from the transformer's, without it
on the card under model offload, in diffusers' offload order; a pipeline the plan offloads loaded on the CPU; what fits 80, 24 and 12 GB and what is refused; the tiny
presets and folders of those families planned as the hub names are; the prompts encoded PROMPT_BATCH at a time, as
the plan counts them; a klein reference picture counted as the tokens it adds."""

from __future__ import annotations

import json

import pytest
import torch
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.memory.ladder import ACTIVATION_MARGIN, RESERVE_GB
from musicvid.memory.plan import plan_memory
from musicvid.models import registry as registry_module
from musicvid.models.drawing import Drawing, load_drawing
from musicvid.models.internals import has_offload_hooks
from musicvid.models.precision import Precision
from musicvid.models.registry import ModelRegistry
from musicvid.models.tiny_flow import tiny_klein, tiny_zimage
from musicvid.pictures.flow import encode_prompts
from musicvid.pictures.switches import compute_device
from musicvid.settings.presets import KLEIN, PRESETS, PROMPT_BATCH, TINY_KLEIN, TINY_ZIMAGE, ZIMAGE
from musicvid.settings.resolve import resolve_render_settings
from tests.helpers import make_tone, run
from tests.standins.hub import write_repo
from tests.standins.klein import flux2_klein_files
from tests.standins.zimage import zimage_turbo_files

# Each family's weights in bfloat16 (GB = 10⁹ bytes): the transformer (Z-Image's 6.15B, klein's 3.88B), Qwen3-4B
# (4.02B) and the VAE (FLUX.1's, FLUX.2's: 84M)
PUBLISHED_GB = {
    "zimage": {"text_encoder": 8.05, "transformer": 12.3, "vae": 0.168},
    "klein": {"text_encoder": 8.05, "transformer": 7.75, "vae": 0.168},
}
PARTS = ["text_encoder", "transformer", "vae"]  # diffusers' model_cpu_offload_seq of both pipelines
CUDA = torch.device("cuda")


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    return make_tone(tmp_path_factory.mktemp("plan") / "song.wav", 3.0)


def plan(preset: str, budget: float, scored: bool = False, **given):
    """The plan of a render of `preset`'s pictures on a `budget` GB card."""
    models = PRESETS[preset]
    settings = resolve_render_settings(models, given)
    cuda = Precision.resolve("auto", CUDA)
    return plan_memory(models, settings, cuda, budget, "a test", transcribe=False, elaborate=False, scored=scored)


def pictures(preset: str, budget: float, scored: bool = False, **given) -> dict:
    """The pictures stage of that plan, as a dict (its JSON)."""
    return plan(preset, budget, scored, **given).stage("pictures").as_dict()


def planned(capsys, *options) -> dict:
    code, out, err = run(capsys, "plan", *options, "--json")
    assert code == 0, err
    return next(s for s in json.loads(out)["stages"] if s["stage"] == "pictures")


def weights_gb(stage: dict) -> dict[str, float]:
    return {m["part"]: m["weights_gb"] for m in stage["models"]}


# (Z-Image, the longer, in the ci tier: klein keeps the read-back in the suite)
@pytest.mark.parametrize("family", [pytest.param("zimage", marks=pytest.mark.ci), "klein"])
def test_the_published_weights_read_back_and_an_80_gb_card_keeps_them_all(capsys, song, family):
    stage = planned(capsys, song, "--models", family, "--gpu-memory", "80")
    assert [m["part"] for m in stage["models"]][:3] == PARTS
    assert {m["precision"] for m in stage["models"][:3]} == {"bfloat16"}
    assert {part: weights_gb(stage)[part] for part in PARTS} == pytest.approx(PUBLISHED_GB[family], rel=0.01)
    # resident: every pass has all three on the card, and the drawn batch decoded at once
    assert stage["offloads"] == [] and stage["batches"] == {"keyframes": 4, "morphs": 4, "vae_decode": 4}
    held = sum(weights_gb(stage).values())
    for each in stage["passes"]:
        assert each["peak_gb"] == pytest.approx(held + ACTIVATION_MARGIN * each["activations_gb"], abs=0.01)
    assert stage["peak_gb"] == max(p["peak_gb"] for p in stage["passes"])
    # the hub name given to --diffusion plans as the preset does
    assert (
        planned(capsys, song, "--diffusion", {"zimage": ZIMAGE, "klein": KLEIN}[family], "--gpu-memory", "80") == stage
    )


def test_the_plan_counts_a_reference_as_the_tokens_it_adds(capsys, song, tmp_path):
    """klein reads a reference picture in context (tests/test_klein_references.py): no adapter's weights beside it,
    as many image tokens again in its transformer's pass."""
    Image.new("RGB", (64, 64), (90, 90, 90)).save(tmp_path / "r.png")
    without = planned(capsys, song, "--models", "klein")
    looked = planned(capsys, song, "--models", "klein", "--reference", tmp_path / "r.png")
    assert [m["part"] for m in looked["models"]] == [m["part"] for m in without["models"]]
    assert looked["peak_gb"] > without["peak_gb"]


@pytest.mark.parametrize("family", [pytest.param("zimage", marks=pytest.mark.ci), "klein"])  # (Z-Image's: ci tier)
def test_a_24_gb_card_holds_both_with_vae_slicing(family):
    stage = pictures(family, 24)
    # the decode of four 1024² pictures together (1.6 GB each) is what does not fit beside the weights
    assert stage["offloads"] == ["vae-slicing"] and stage["batches"]["morphs"] == 4
    assert stage["batches"]["vae_decode"] == 1 and stage["peak_gb"] <= 24 - RESERVE_GB
    decoded_together = pictures(family, 80)["passes"][2]["peak_gb"]
    assert decoded_together > 24 - RESERVE_GB
    # the transformer's pass holds the most: its activations beside all three models
    assert stage["peak_gb"] == next(p["peak_gb"] for p in stage["passes"] if p["parts"] == "transformer")


@pytest.mark.parametrize("family", [pytest.param("zimage", marks=pytest.mark.ci), "klein"])  # (Z-Image's: ci tier)
def test_under_model_offload_the_text_encoders_pass_is_apart_from_the_transformers(family):
    stage = pictures(family, 80, low_vram=True)
    assert "model-offload" in stage["offloads"] and [p["parts"] for p in stage["passes"]] == PARTS
    gb = weights_gb(stage)
    for each in stage["passes"]:  # each model alone, beside the VAE that stays once it has decoded
        alone = gb[each["parts"]] + (gb["vae"] if each["parts"] != "vae" else 0)
        assert each["peak_gb"] == pytest.approx(alone + ACTIVATION_MARGIN * each["activations_gb"], abs=0.01)
    # Qwen3's pass over PROMPT_BATCH prompts, counted on the meta device: a fraction of a GB a prompt
    assert 0.1 * PROMPT_BATCH < stage["passes"][0]["activations_gb"] < 0.5 * PROMPT_BATCH
    assert stage["passes"][0]["peak_gb"] < gb["text_encoder"] + gb["transformer"]


def test_a_12_gb_card_offloads_z_image_layer_by_layer_and_klein_model_by_model():
    zimage, klein = pictures("zimage", 12), pictures("klein", 12)
    usable = 12 - RESERVE_GB
    # Z-Image's transformer alone outweighs the card: only sequential offload holds it
    assert weights_gb(zimage)["transformer"] > usable and "sequential-offload" in zimage["offloads"]
    assert "model-offload" not in zimage["offloads"] and zimage["peak_gb"] <= usable
    assert klein["offloads"] == ["model-offload"] and klein["peak_gb"] <= usable
    # klein's 8 GB text encoder and 7.75 GB transformer each fit alone, not together
    assert sum(weights_gb(klein).values()) > usable


def test_the_scorer_is_held_beside_every_pass_and_too_small_a_card_is_refused_in_one_sentence():
    scored, unscored = pictures("klein", 12, scored=True), pictures("klein", 12)
    scorer = weights_gb(scored)["scorer"]
    assert scorer > 0.5 and scored["offloads"] == ["model-offload", "vae-slicing"]
    for beside, without in zip(scored["passes"], unscored["passes"]):
        assert beside["peak_gb"] - beside["activations_gb"] * ACTIVATION_MARGIN == pytest.approx(
            without["peak_gb"] - without["activations_gb"] * ACTIVATION_MARGIN + scorer, abs=0.01
        )
    assert scored["batches"]["morphs"] < 4 <= unscored["batches"]["morphs"]
    with pytest.raises(UserError) as refused:
        pictures("zimage", 1.5)
    said = str(refused.value)
    assert said.count(". ") == 0 and "\n" not in said and "the pictures stage (Tongyi-MAI/Z-Image-Turbo" in said
    assert "even with sequential-offload" in said and "1.5 GB" in said


@pytest.mark.parametrize(
    ("preset", "tiny", "files"),
    [
        pytest.param(
            "tiny-zimage", TINY_ZIMAGE, zimage_turbo_files, marks=pytest.mark.ci
        ),  # (the ci tier: klein's stays)
        ("tiny-klein", TINY_KLEIN, flux2_klein_files),
    ],
)
def test_the_tiny_presets_and_a_folder_of_their_family_plan_as_the_published_ones(
    capsys, song, tmp_path, preset, tiny, files
):
    stage = planned(capsys, song, "--models", preset, "--gpu-memory", "24")
    assert [m["part"] for m in stage["models"]][:3] == PARTS and stage["offloads"] == []
    assert {m["name"] for m in stage["models"][:3]} == {tiny}
    assert all(gb < 0.01 for gb in list(weights_gb(stage).values())[:3])
    folder = write_repo(tmp_path, "someone/flow", files())
    from_folder = planned(capsys, song, "--models", preset, "--diffusion", folder, "--gpu-memory", "24")
    assert [(m["part"], m["weights_gb"]) for m in from_folder["models"]] == [
        (m["part"], m["weights_gb"]) for m in stage["models"]
    ]
    assert {m["name"] for m in from_folder["models"][:3]} == {str(folder)}


@pytest.mark.parametrize("build", [pytest.param(tiny_zimage, marks=pytest.mark.ci), tiny_klein])  # (Z-Image's: ci)
def test_prompts_are_encoded_prompt_batch_at_a_time_as_each_alone(build):
    pipe = build()
    batches = []
    pipe.text_encoder.register_forward_hook(
        lambda module, args, kwargs, out: batches.append(len(kwargs["input_ids"])), with_kwargs=True
    )
    prompts = [f"a lighthouse in a storm, verse {n}" + " and rain" * n for n in range(PROMPT_BATCH + 1)]
    together = encode_prompts(pipe, prompts, torch.device("cpu"))
    assert batches == [PROMPT_BATCH, 1]
    alone = [encode_prompts(pipe, [prompt], torch.device("cpu"))[0] for prompt in prompts]
    assert [rows.shape for rows in together] == [rows.shape for rows in alone]
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(together, alone))
    # the plan's passes are in the order the pipeline's model offload runs them
    assert pipe.model_cpu_offload_seq.split("->") == PARTS


def test_a_pipeline_the_plan_offloads_is_loaded_on_the_cpu_and_never_sits_whole_on_the_card(monkeypatch):
    pipe = load_drawing(PRESETS["tiny-klein"], Drawing(), CUDA, Precision.resolve("auto", CUDA), offloaded=True)
    modules = [m for m in pipe.components.values() if isinstance(m, torch.nn.Module)]
    assert {p.device.type for m in modules for p in m.parameters()} == {"cpu"}
    assert all(has_offload_hooks(m) for m in modules) and compute_device(pipe).type == "cuda"
    # the registry loads the drawing so where the render's plan offloads its pictures: klein on 12 GB, not on 80
    asked = []
    monkeypatch.setattr(registry_module, "load_drawing", lambda *args: asked.append(args[-1]) or pipe)
    registry = ModelRegistry(PRESETS["tiny-klein"], "cpu")
    for budget in (80, 12):
        with registry.use(Drawing(), memory=plan("klein", budget)):
            pass
    assert asked == [False, True]
