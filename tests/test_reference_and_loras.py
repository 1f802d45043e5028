"""A reference picture (IP-Adapter) and style LoRAs over the whole video, or a scene's own reference, keyed like
everything else: each changes the pictures it reaches and redraws only those; bad ones are refused before any work."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from PIL import Image

from musicvid.core.workdir import Workdir
from musicvid.models.drawing import Drawing, fuse_style_loras
from musicvid.models.precision import Precision
from musicvid.models.registry import ModelRegistry
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.grouping import Picture
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.slerp import slerp
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import PRESETS
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard
from tests.helpers import make_tone, run
from tests.standins.loras import diffusers_lora, kohya_lora, tiny_text_encoder
from tests.standins.sd import tiny_unet
from tests.test_keyframes import LYRICS, changed_since, name, pictures, touching


def picture(path, colour, size=(96, 64)):
    y, x = np.mgrid[0 : size[1], 0 : size[0]]
    pixels = np.stack([x * 255 // size[0], y * 255 // size[1], np.full_like(x, colour)], axis=2).astype(np.uint8)
    Image.fromarray(pixels).save(path)
    return path


def keyframes(workdir) -> dict[str, bytes]:
    return {n: data for n, data in pictures(workdir).items() if n.startswith("keyframes/")}


@pytest.fixture
def song(tmp_path):
    song = make_tone(tmp_path / "song.mp3", 6.0)
    (tmp_path / "song.lrc").write_text(LYRICS)
    return song


def options(song, workdir):
    return [song, "--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", workdir, "-q"]


def keyframes_drawer(capsys, common):
    """`musicvid storyboard --keyframes` with the test's options and more; what it printed."""

    def make_keyframes(*extra) -> str:
        code, out, err = run(capsys, "storyboard", *common, "--keyframes", *extra)
        assert code == 0, err
        return out

    return make_keyframes


def test_a_reference_picture_changes_every_keyframe_and_is_part_of_their_keys(capsys, song, tmp_path):
    workdir = tmp_path / "work"
    make_keyframes = keyframes_drawer(capsys, options(song, workdir))
    first, second = picture(tmp_path / "a.png", 40), picture(tmp_path / "b.png", 220)

    make_keyframes()
    plain = keyframes(workdir)
    shown = len(plain)
    assert f"keyframes: {shown} drawn" in make_keyframes("--reference", first)
    with_first = keyframes(workdir)
    assert all(with_first[n] != plain[n] for n in plain)  # every keyframe takes the reference's look
    assert "keyframes: 0 drawn" in make_keyframes("--reference", first)  # the same picture: nothing to redraw
    assert f"keyframes: {shown} drawn" in make_keyframes("--reference", second)
    assert all(keyframes(workdir)[n] != with_first[n] for n in plain)
    assert f"keyframes: {shown} drawn" in make_keyframes("--reference", second, "--reference-strength", "0.3")
    # the reference's bytes are its key, not its name: the same picture under another name draws nothing
    renamed = tmp_path / "renamed.png"
    renamed.write_bytes(second.read_bytes())
    assert "keyframes: 0 drawn" in make_keyframes("--reference", renamed, "--reference-strength", "0.3")
    # and without a reference the pictures are as before any was given
    assert f"keyframes: {shown} drawn" in make_keyframes()
    assert keyframes(workdir) == plain


@pytest.mark.slow
@pytest.mark.ci  # (three renders; a reference's keys and a style LoRA's stay in the suite)
def test_a_scene_of_its_own_reference_redraws_its_keyframe_and_the_morphs_touching_it(capsys, song, tmp_path):
    workdir = tmp_path / "work"
    common = options(song, workdir)
    look = picture(tmp_path / "look.png", 40)
    assert run(capsys, "render", *common, "--reference", look, "-o", tmp_path / "video.mp4")[0] == 0
    before = pictures(workdir)
    board = load_storyboard(workdir / "storyboard.json")
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, 10)

    board = board.with_scenes({2: replace(board.scenes[2], reference=str(picture(tmp_path / "face.png", 220)))})
    (workdir / "storyboard.json").write_text(board.text())
    assert run(capsys, "render", *common, "--reference", look, "-o", tmp_path / "video.mp4")[0] == 0
    assert changed_since(before, workdir) == touching(2, schedule, workdir) | {name(Workdir(workdir).keyframe(2))}
    saved = json.loads((workdir / "storyboard.json").read_text())
    assert saved["scenes"][2]["reference"] == str(tmp_path / "face.png")


def test_each_picture_of_a_morph_has_its_own_reference_embedding(tmp_path):
    """Along a morph from a scene with a reference to one without, the image embedding walks from the
    picture's to zeros (the adapter's "no picture") as the text does, picture by picture in one batch."""
    pipe = ModelRegistry(PRESETS["tiny"]).use(Drawing(reference=True)).__enter__()
    scenes = [
        Scene(0, "lyric", 0.0, 1.0, prompt="a", seed=1, reference=str(picture(tmp_path / "a.png", 40))),
        Scene(1, "lyric", 1.0, 2.0, prompt="b", seed=2),
    ]
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    settings = resolve_render_settings(PRESETS["tiny"], {})
    own = pipeline_for(pipe, settings)
    inputs = SceneInputs(own, board, [0, 1], settings)
    assert inputs.image[0].abs().sum() > 0 and torch.equal(inputs.image[1], torch.zeros_like(inputs.image[0]))
    walk = [inputs.conditioning(Picture(None, "", 0, 1, t)).image for t in (0.0, 0.25, 1.0)]
    assert torch.equal(walk[0], inputs.image[0]) and torch.equal(walk[2], inputs.image[1])
    assert torch.allclose(walk[1], 0.75 * inputs.image[0])
    assert not torch.isnan(slerp(torch.zeros(3), torch.ones(3), 0.5)).any()

    # a batch of pictures with different embeddings draws each as it would be drawn alone
    from musicvid.models.timing import Timings
    from musicvid.pictures.denoise import draw_group

    group = [Picture(None, "", 0, 1, t) for t in (0.0, 0.5)]
    together = draw_group(own, inputs, group, settings, Timings())
    alone = np.concatenate([draw_group(own, inputs, [p], settings, Timings()) for p in group])
    assert np.abs(together.astype(int) - alone).max() <= 1


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area, or a benchmark's quick run)
def test_style_loras_change_the_pictures_and_are_keyed_by_their_weights_and_weight(capsys, song, tmp_path):
    workdir = tmp_path / "work"
    make_keyframes = keyframes_drawer(capsys, options(song, workdir))
    kohya = tmp_path / "ink.safetensors"
    kohya.write_bytes(kohya_lora())
    trained = tmp_path / "trained"  # a folder as diffusers' training scripts leave it
    diffusers_lora(trained)

    make_keyframes()
    plain = keyframes(workdir)
    shown = len(plain)
    seen = [plain]
    for loras in (
        ["--lora", kohya],
        ["--lora", f"{kohya}:0.5"],
        ["--lora", trained],
        ["--lora", kohya, "--lora", trained],
    ):
        assert f"keyframes: {shown} drawn" in make_keyframes(*loras)
        now = keyframes(workdir)
        assert all(now[n] != before[n] for before in seen for n in plain)
        seen.append(now)
    assert "keyframes: 0 drawn" in make_keyframes("--lora", kohya, "--lora", trained)
    copy = tmp_path / "copy.safetensors"  # a LoRA is its weights, not its name
    copy.write_bytes(kohya.read_bytes())
    assert "keyframes: 0 drawn" in make_keyframes("--lora", copy, "--lora", trained)


def test_a_job_with_other_loras_gets_a_pipeline_of_its_own_and_changes_none_in_use(tmp_path):
    kohya = tmp_path / "ink.safetensors"
    kohya.write_bytes(kohya_lora())
    registry = ModelRegistry(PRESETS["tiny"], keep_loaded=True)
    with registry.use(Drawing()) as plain:
        weights = {k: v.clone() for k, v in plain.unet.state_dict().items()}
        with registry.use(Drawing(loras=Loras([Lora(str(kohya))]))) as styled:  # another own, meanwhile
            assert styled is not plain
        assert all(torch.equal(v, plain.unet.state_dict()[k]) for k, v in weights.items())
    with registry.use(Drawing()) as again:
        assert again is plain and registry.loads[Drawing()] == 1
    with registry.use(Drawing(reference=True)):  # one other pipeline is kept besides the one in use
        pass
    assert Drawing(loras=Loras([Lora(str(kohya))])) not in registry._loaded and Drawing() in registry._loaded


def peft_saved(model, folder, targets, alpha=8):
    """A LoRA of `model` as peft's own save_pretrained writes it (adapter_model.safetensors, its layers under
    base_model.model., beside adapter_config.json with its lora_alpha), trained (lora_B starts at zero)."""
    from peft import LoraConfig, get_peft_model

    adapted = get_peft_model(model, LoraConfig(r=4, lora_alpha=alpha, target_modules=list(targets)))
    generator = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for key, weights in adapted.named_parameters():
            if "lora_B" in key:
                weights.copy_(torch.randn(weights.shape, generator=generator) * 0.1)
    adapted.save_pretrained(folder)
    return folder / "adapter_model.safetensors"


def test_a_lora_as_peft_saves_it_fuses_as_the_same_layers_under_diffusers_names(tmp_path):
    from safetensors.torch import load_file, save_file

    peft = peft_saved(tiny_unet(), tmp_path / "peft", ("to_q", "to_k", "to_v", "to_out.0"))
    # the same layers as diffusers names them, its scale (lora_alpha 8 over r 4) in lora_B (diffusers' alpha is r)
    state = {
        f"unet.{k.removeprefix('base_model.model.')}": v * (2 if "lora_B" in k else 1)
        for k, v in load_file(peft).items()
    }
    save_file(state, tmp_path / "unet.safetensors")
    pipe = ModelRegistry(PRESETS["tiny"]).use(Drawing()).__enter__()
    plain = {k: v.clone() for k, v in pipe.unet.state_dict().items()}
    fused = []
    for file in (peft, tmp_path / "unet.safetensors"):
        fuse_style_loras(pipe, Loras([Lora(str(file))]))
        fused.append({k: v.clone() for k, v in pipe.unet.state_dict().items()})
        pipe.unet.load_state_dict(plain)
    assert any(not torch.equal(v, plain[k]) for k, v in fused[0].items())
    assert all(torch.allclose(v, fused[1][k], atol=1e-6) for k, v in fused[0].items())
    # --fast's few-step LoRA is loaded as a style LoRA is; a folder peft saved is its adapter_model.safetensors
    with ModelRegistry(replace(PRESETS["tiny"], fast_lora=str(peft.parent))).use(Drawing(fast=True)) as fast:
        assert all(torch.allclose(v, fused[1][k], atol=1e-6) for k, v in fast.unet.state_dict().items())
    # its scale is in its adapter_config.json: saved over with another lora_alpha, it keys other pictures
    drawing, precision = Drawing(loras=Loras([Lora(str(peft.parent))])), Precision.resolve("auto", torch.device("cpu"))
    before = drawing.key(PRESETS["tiny"], precision)
    config = json.loads((peft.parent / "adapter_config.json").read_text())
    (peft.parent / "adapter_config.json").write_text(json.dumps({**config, "lora_alpha": 16}))
    assert drawing.key(PRESETS["tiny"], precision) != before


def test_bad_looks_are_refused_before_any_work_in_one_sentence(capsys, song, tmp_path):
    common = options(song, tmp_path / "work")
    other = tmp_path / "other.safetensors"
    from safetensors.torch import save_file

    names = ("lora_unet_nothing_here.lora_down.weight", "lora_unet_nothing_here.lora_up.weight")
    save_file({name: torch.zeros(4, 4) for name in names}, str(other))
    unknown = tmp_path / "unknown.safetensors"  # peft's names, of no layer the model has
    halves = ("base_model.model.nothing_here.lora_A.weight", "base_model.model.nothing_here.lora_B.weight")
    save_file({name: torch.ones(4, 4) for name in halves}, str(unknown))
    text = peft_saved(tiny_text_encoder(), tmp_path / "text", ("q_proj", "v_proj"))
    picture(tmp_path / "a.png", 40)
    cases = [
        (["--lora", "ink.safetensors:3"], "its weight must be from -2 to 2"),
        (["--lora", "missing.safetensors"], "neither a file nor a hub repository"),
        (["--lora", "a"] * 9, "at most 8 times"),
        (["--reference", tmp_path / "missing.png"], "not found"),
        (["--reference", song], "is not an image"),
        (["--reference", tmp_path / "a.png", "--attention-slicing"], "cannot be combined"),
        (["--lora", other], "is not a LoRA of this picture model"),
        (["--lora", unknown], "unknown.safetensors is not a LoRA of this picture model"),
        (["--lora", text], "is peft's adapter of a text encoder alone"),
    ]
    for extra, says in cases:
        code, out, err = run(capsys, "render", *common, *extra)
        assert code == 2 and says in err and "Traceback" not in err, (extra, err)
        assert len(err.strip().splitlines()) == 1


def test_a_csv_cell_and_the_page_name_loras_as_the_command_line_does(tmp_path):
    (tmp_path / "ink.safetensors").write_bytes(b"")
    loras = RenderSettings.parse("lora", "ink.safetensors:0.5; org/style\nC:\\loras\\x.safetensors", tmp_path)
    assert loras == (
        Lora(str(tmp_path / "ink.safetensors"), 0.5),  # a file beside the CSV, as its other paths
        Lora("org/style"),
        Lora("C:\\loras\\x.safetensors"),
    )
    assert Loras.parse(str(loras)) == loras
