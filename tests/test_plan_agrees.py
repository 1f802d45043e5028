"""`musicvid plan` agrees with `musicvid render`: it refuses, before any work and in the same one sentence, what a
render refuses before its work (musicvid.prepare.check_before_work), writes nothing, and plans the models the render
loads (a storyboard's own reference pictures too). And what options alone say: a model option given empty, a LoRA
file that is no LoRA file, a budget too small said in figures that make sense."""

from __future__ import annotations

import json
import logging
import re
import subprocess

import pytest
import torch

from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.models.lora_files import check_lora
from tests.helpers import make_tone, referencing_board, run, work_directory


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A song, a picture and a storyboard whose scenes each name that picture as their own reference."""
    folder = tmp_path_factory.mktemp("agrees")
    referencing_board(folder, make_tone(folder / "song.wav", 3.0), 3.0)
    return folder


def parts_planned(capsys, *argv) -> set[str]:
    code, out, err = run(capsys, "plan", *argv, "--json")
    assert code == 0, err
    [pictures] = [s for s in json.loads(out)["stages"] if s["stage"] == "pictures"]
    return {model["part"] for model in pictures["models"]}


def test_the_plan_counts_a_storyboards_own_reference_pictures_as_the_render_loads_them(capsys, folder, tmp_path):
    song, board = folder / "song.wav", folder / "refs.json"
    given = parts_planned(capsys, song, "--models", "tiny", "--reference", folder / "ref.png")
    assert {"image_encoder", "ip_adapter"} <= given
    assert parts_planned(capsys, song, "--models", "tiny", "--storyboard", board) == given
    # the work directory's own storyboard, which a render keeps, draws its references too
    workdir = work_directory(tmp_path / "w")
    (workdir / "storyboard.json").write_text(board.read_text())
    assert parts_planned(capsys, song, "--models", "tiny", "--workdir", workdir) == given


@pytest.mark.ci  # (a storyboard with references made for klein's plan: ten seconds of the suite's 6 minutes)
def test_klein_plans_a_storyboards_own_references_as_tokens(capsys, folder):
    pictures = lambda *options: next(  # noqa: E731
        s
        for s in json.loads(run(capsys, "plan", folder / "song.wav", "--models", "klein", "--json", *options)[1])[
            "stages"
        ]
        if s["stage"] == "pictures"
    )
    given = pictures("--reference", folder / "ref.png", "--gpu-memory", "12")
    assert pictures("--storyboard", folder / "refs.json", "--gpu-memory", "12") == given
    plain = pictures("--gpu-memory", "12")  # (twice the tokens: a smaller batch, or more offloaded)
    assert (plain["batches"], plain["offloads"]) != (given["batches"], given["offloads"])


def test_a_device_not_here_is_refused_unless_the_plan_is_for_another_machine(capsys, folder):
    absent = f"cuda:{torch.cuda.device_count()}"  # (one past the last, or cuda:0 with none)
    code, out, err = run(capsys, "plan", folder / "song.wav", "--models", "tiny", "--device", absent)
    assert code == 2 and not out and err.count("\n") == 1, err
    assert f"--device {absent} is not a device here" in err and "--gpu-memory GB plans for another machine" in err
    code, out, err = run(capsys, "plan", folder / "song.wav", "--models", "tiny", "--device", absent, "--gpu-memory", 8)
    assert code == 0 and "for 8 GB (--gpu-memory)" in out, err
    for device in ("cpu", "mps"):  # (a render there follows no plan)
        code, out, err = run(capsys, "plan", folder / "song.wav", "--models", "tiny", "--device", device)
        assert code == 2 and not out and f"--device {device}: a render there follows no memory plan" in err, err


def refusals(capsys, tmp_path, song, *options):
    """What plan and render say of the same song and options (render's work directory and video in `tmp_path`)."""
    places = ["--workdir", tmp_path / "wd"] if "--workdir" not in options else []
    said = {}
    for command, extra in (("plan", []), ("render", ["-o", tmp_path / "v.mp4"])):
        said[command] = run(capsys, command, song, "--models", "tiny", *options, *places, *extra)
    return said


def cases(folder, tmp_path) -> dict:
    """Each input or option render refuses before any work (or, for the song, at its decoding), by what it is."""
    video_only = tmp_path / "video.mp4"
    pictures = "testsrc=duration=1:size=64x64:rate=10"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-f", "lavfi", "-i", pictures, str(video_only)], check=True)
    (tmp_path / "person").mkdir()
    (tmp_path / "person" / "notes.txt").write_text("mine")
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "many.lrc").write_text("".join(f"[00:0{n // 10}.{n % 10}0]line {n}\n" for n in range(29)))
    (tmp_path / "tags.lrc").write_text("[ti:Only tags]\n[ar:Nobody]\n")
    song, ref = folder / "song.wav", folder / "ref.png"
    return {
        "more lyric lines than the song holds": (song, "--lyrics", tmp_path / "many.lrc"),  # (plan read them not)
        "a timed file with no line in the song": (song, "--lyrics", tmp_path / "tags.lrc"),
        "no storyboard": (song, "--storyboard", tmp_path / "none.json"),
        "a storyboard that is not JSON": (song, "--storyboard", tmp_path / "bad.json"),
        "no reference": (song, "--reference", tmp_path / "none.png"),
        "a reference that is no picture": (song, "--reference", folder / "song.wav"),
        "no LoRA": (song, "--lora", tmp_path / "none.safetensors"),
        "a picture as a LoRA": (song, "--lora", ref),
        "a work directory that is a file": (song, "--workdir", tmp_path / "a-file"),
        "a person's folder": (song, "--workdir", tmp_path / "person"),
        "no audio stream": (video_only,),
        "under one frame": (make_tone(tmp_path / "click.wav", 0.03),),
        "no fast decoder": (song, "--fast", "--fast-decoder", tmp_path / "nonexistent"),
        "no upscaler": (song, "--resolution", "720p", "--upscaler", tmp_path / "none.pth"),
        "an empty scorer": (song, "--scorer", ""),
        "an empty upscaler": (song, "--resolution", "720p", "--upscaler", " "),
    }


def test_plan_refuses_what_render_refuses_in_the_same_sentence_and_writes_nothing(capsys, folder, tmp_path):
    for what, (song, *options) in cases(folder, tmp_path).items():
        said = refusals(capsys, tmp_path, song, *options)
        (plan_code, plan_out, plan_err), (render_code, _, render_err) = said["plan"], said["render"]
        assert render_code == 2 and render_err.count("\n") == 1, (what, render_err)
        assert (plan_code, plan_out, plan_err) == (2, "", render_err), (what, plan_err, render_err)
        assert not (tmp_path / "wd").exists(), what  # neither made a work directory: refused before any work


def test_a_compile_backend_torch_does_not_know_is_refused_by_plan_as_by_render(capsys, folder, tmp_path, monkeypatch):
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "bogus")
    said = refusals(capsys, tmp_path, folder / "song.wav", "--compile")
    assert said["plan"][0] == said["render"][0] == 2 and said["plan"][2] == said["render"][2]
    assert "'bogus' is not a torch.compile backend" in said["plan"][2]


def test_the_plan_of_a_video_counts_its_sound_not_its_container(capsys, tmp_path):
    """A video whose pictures run on after its song (4 s of pictures, 2 of sound): the render is as long as the song."""
    song = tmp_path / "clip.mp4"
    pictures, sound = "testsrc=duration=4:size=64x64:rate=10", "sine=frequency=220:duration=2"
    subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-f", "lavfi", "-i", pictures, "-f", "lavfi", "-i", sound, str(song)], check=True
    )
    code, out, err = run(capsys, "plan", song, "--models", "tiny", "--json")
    assert code == 0, err
    assert abs(json.loads(out)["seconds"] - 2.0) < 0.1 and json.loads(out)["frames"] <= 21


def test_the_plans_first_line_counts_the_frames_drawn_and_the_videos(capsys, tmp_path):
    # a probe's finding: at --output-fps it gave the frames drawn alone, which a render reports otherwise
    song = make_tone(tmp_path / "song.wav", 12.0)
    for options, said in (
        ((), "120 frames at 10 fps; "),
        (("--fps", "2", "--output-fps", "24"), "24 frames at 2 fps, 288 in the video at 24 fps; "),
        (("--preview",), "120 frames at 10 fps (a preview draws its keyframes alone); "),
    ):
        code, out, err = run(capsys, "plan", song, "--models", "tiny", *options)
        assert code == 0 and f"{song}: 12.0 s, {said}the render's GPU memory" in out, (out, err)


def test_a_lora_file_of_another_kind_is_refused_in_one_sentence(tmp_path):
    for name in ("look.png", "words.lrc", "x.pt"):
        (file := tmp_path / name).write_bytes(b"\x89PNG not a LoRA")
        with pytest.raises(UserError, match=rf"--lora {name} is not a LoRA file: give a \.safetensors file"):
            check_lora(file, f"--lora {name}", "sd")


@pytest.mark.parametrize("option", ["--scorer", "--vipe", "--diffusion", "--asr-model"])
def test_a_model_option_given_empty_is_refused_not_taken_as_left_out(capsys, folder, option):
    for empty in ("", "  "):
        code, out, err = run(capsys, "plan", folder / "song.wav", "--models", "tiny", option, empty)
        assert (
            code == 2
            and not out
            and err.strip() == f"musicvid: {option} is empty: give a model's name or folder, or leave it out"
        )


@pytest.mark.parametrize("budget", ["0.5", "0.50001", "1e-300"])
def test_a_budget_too_small_is_said_in_figures_that_make_sense(capsys, folder, budget):
    code, out, err = run(capsys, "plan", folder / "song.wav", "--gpu-memory", budget)
    assert code == 2 and not out and err.count("\n") == 1, err
    needs = float(re.search(r"needs (\d+\.\d\d) GB", err).group(1))
    assert needs > 0 and "(nothing once 0.5 GB is kept for CUDA itself)" in err and "-0" not in err, err


def test_a_render_plans_with_the_references_of_the_storyboard_it_draws(folder, tmp_path):
    """check_before_work says so to prepare's plan_on_device: of the --storyboard file, else the work directory's."""
    from musicvid.prepare import check_before_work
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.render import RenderSettings
    from musicvid.settings.song import SongRequest

    song, settings, models = folder / "song.wav", RenderSettings(), PRESETS["tiny"]
    given = SongRequest(song=song, storyboard_file=folder / "refs.json", workdir=tmp_path / "a")
    assert check_before_work(given, models, settings, video=False).references
    workdir = work_directory(tmp_path / "b")
    assert not check_before_work(SongRequest(song=song, workdir=workdir), models, settings, video=False).references
    (workdir / "storyboard.json").write_text((folder / "refs.json").read_text())
    assert check_before_work(SongRequest(song=song, workdir=workdir), models, settings, video=False).references


def test_a_storyboard_of_another_songs_length_is_refused_by_the_plan_as_by_the_render(capsys, folder, tmp_path):
    song = make_tone(tmp_path / "longer.wav", 4.0)
    said = f"musicvid: storyboard {folder / 'refs.json'} is for audio of 3.00 s, but {song} lasts 4.00 s\n"
    for command in ("plan", "render"):
        code, _, err = run(capsys, command, song, "--models", "tiny", "--storyboard", folder / "refs.json")
        assert (code, err) == (2, said), (command, err)
    assert not (tmp_path / "longer.mp4").exists()


def test_lyrics_beside_a_storyboard_are_said_unread_unless_the_captions_read_their_times(
    capsys, caplog, folder, tmp_path
):
    song, board = folder / "song.wav", folder / "refs.json"
    (plain := tmp_path / "words.txt").write_text("a line of the song\n")
    (timed := tmp_path / "words.lrc").write_text("[00:00.50]a line of the song\n")
    said = "the storyboard's lines stand in for them"
    for lyrics, captions, unread in ((plain, "karaoke", True), (timed, "none", True), (timed, "line", False)):
        args = ("--models", "tiny", "--storyboard", board, "--lyrics", lyrics, "--captions", captions)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="musicvid"):
            code, _, err = run(capsys, "plan", song, *args)
        assert code == 0 and (f"lyrics {lyrics} not read: {said}" in caplog.text) == unread, err


def test_a_storyboard_with_a_prompt_to_write_plans_vipe_as_the_render_loads_it(capsys, folder, tmp_path, monkeypatch):
    """An empty prompt is ViPE's to write (a probe's finding: the plan, the render's own on a GPU too, left ViPE out
    of every --storyboard)."""
    import musicvid.prepare
    from musicvid.models.registry import ModelRegistry
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.render import RenderSettings
    from musicvid.settings.song import SongRequest

    board = json.loads((folder / "refs.json").read_text())
    for scene in board["scenes"]:
        scene.pop("reference", None)
    seen = []  # what a render tells its own plan: (musicvid.memory.plan.plan_on_device's `unwritten`)
    monkeypatch.setattr(musicvid.prepare, "plan_on_device", lambda *given: seen.append(given[-1]))
    for prompt, writes in (("", True), ("a red lighthouse", False)):
        board["scenes"][1]["prompt"] = prompt
        (given := tmp_path / f"{writes}.json").write_text(json.dumps(board))
        code, out, err = run(capsys, "plan", folder / "song.wav", "--storyboard", given, "--gpu-memory", "24", "--json")
        assert code == 0, err
        assert ("elaborate" in [stage["stage"] for stage in json.loads(out)["stages"]]) is writes
        request = SongRequest(song=folder / "song.wav", storyboard_file=given, workdir=tmp_path / f"w{writes}")
        musicvid.prepare.prepare(request, ModelRegistry(PRESETS["tiny"], "cpu"), RenderSettings(), tmp_path / "v.mp4")
    assert seen == [True, False]
