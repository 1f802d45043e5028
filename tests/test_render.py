"""`musicvid render` end to end with the tiny models: the MP4, the frame schedule, resume, edits."""

import json
import random
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import torch
from PIL import Image, PngImagePlugin

from musicvid.core.workdir import Workdir
from musicvid.models.tiny import local_diffusion
from musicvid.pictures.cache import KEY_FIELD, load_picture, stored_key
from musicvid.pictures.frames import video_frames
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.slerp import align
from musicvid.review.run_report import report_line
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import SongAudio, load_storyboard
from tests.helpers import click_track, probe, render
from vipe_core.atomic import temporary_of

REPOSITORY = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def song(tone_render):
    """A 6.03 s song with three lines: intro, two lyric scenes, an outro (conftest's, shared: read it only)."""
    return tone_render / "song.mp3"


@pytest.fixture(scope="module")
def rendered(tone_render):
    """The song rendered once, for all the suite's tests to share (conftest's tone_render): its work directory
    (left as the render left it: a test that goes on from it goes on from a copy) and its video."""
    return tone_render / "w", tone_render / "video.mp4"


@pytest.mark.slow
def test_render_writes_a_valid_mp4(rendered):
    workdir, output = rendered
    info = probe(output)
    assert info["video_codec"] == "h264" and info["pix_fmt"] == "yuv420p"
    assert info["audio_codec"] == "aac"
    assert info["fps"] == Fraction(10)
    assert info["frames"] == 60  # round(6.03 × 10)
    assert abs(info["duration"] - 6.03) <= 0.1
    assert info["size"] == (64, 64)
    assert (workdir / "video.mp4").exists()
    srt = output.with_suffix(".srt").read_text()
    assert "00:00:01,000 --> " in srt and "the sky is burning" in srt
    # written through a temporary file, yet with the mode any new file gets (not owner-only)
    from vipe_core.atomic import UMASK

    assert {f.stat().st_mode & 0o777 for f in (output, output.with_suffix(".srt"))} == {0o666 & ~UMASK}


def test_a_picture_removed_or_spoilt_under_the_run_is_said_in_one_sentence(tmp_path):
    from musicvid.core.errors import RenderError
    from musicvid.storyboard.board import Scene, Storyboard

    scenes = [Scene(index=i, kind="lyric", start=i, end=i + 1, text="", prompt="p", seed=i) for i in range(2)]
    board, settings, workdir = (
        Storyboard(SongAudio(2.0), scenes=scenes),
        RenderSettings(size=(64, 64)),
        Workdir(tmp_path),
    )
    schedule = frame_schedule([0.0, 1.0], 2.0, settings.fps)
    for spoilt in (b"", None):  # a keyframe cut short, then none
        workdir.keyframes.mkdir(exist_ok=True)
        if spoilt is not None:
            workdir.keyframe(0).write_bytes(spoilt)
        with pytest.raises(
            RenderError, match=r"^keyframes/0000.png in the work directory was removed or damaged while"
        ):
            list(video_frames(board, schedule, workdir, settings))
        workdir.keyframe(0).unlink(missing_ok=True)


@pytest.mark.slow
def test_each_scene_starts_on_its_keyframe(rendered):
    workdir, _ = rendered
    board = load_storyboard(workdir / "storyboard.json")
    settings = RenderSettings(size=(64, 64), steps=4)
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    frames = list(video_frames(board, schedule, Workdir(workdir), settings))
    assert len(frames) == schedule.frame_count
    for segment in schedule.segments:
        keyframe = load_picture(Workdir(workdir).keyframe(segment.scene))
        assert np.array_equal(frames[segment.first], keyframe)
    # in between, the frames are rendered morphs, neither keyframe
    middle = schedule.segments[1]
    assert not np.array_equal(frames[middle.first + 3], frames[middle.first])
    # the last scene holds its keyframe to the end
    assert all(np.array_equal(f, frames[schedule.segments[-1].first]) for f in frames[schedule.segments[-1].first :])
    # frames identical to keyframes are not rendered twice
    rendered = sorted(p.name for p in (workdir / "frames").iterdir())
    assert f"{middle.first:06d}.png" not in rendered and f"{middle.first + 1:06d}.png" in rendered


def test_conditioning_on_csa_gives_the_same_noise_prediction():
    """The UNet reads text through cross-attention only, which ignores row order."""
    pipe = local_diffusion()
    with torch.inference_mode():
        p1, _ = pipe.encode_prompt(["a man jumps into a pool at night"], "cpu", 1, False)
        # a source whose chunks sit elsewhere, so that CSA has to move p1's rows
        order = torch.arange(77)
        order[1:] = torch.cat([torch.arange(41, 77), torch.arange(1, 41)])
        p0 = p1[:, order] + 0.01 * torch.randn(p1.shape, generator=torch.Generator().manual_seed(1))
        aligned = align(p0[0], p1[0], 4)
        assert not torch.equal(aligned, p1[0])
        assert sorted(aligned.sum(dim=1).tolist()) == sorted(p1[0].sum(dim=1).tolist())
        latents = torch.randn(1, 4, 8, 8, generator=torch.Generator().manual_seed(0))
        t = torch.tensor([500])
        plain = pipe.unet(latents, t, encoder_hidden_states=p1).sample
        permuted = pipe.unet(latents, t, encoder_hidden_states=aligned[None]).sample
    assert torch.allclose(plain, permuted, atol=1e-5)


def killed_run(pattern: str, n: int, *argv) -> subprocess.CompletedProcess:
    """`musicvid ARGV` in a process that SIGKILLs itself before the nth rename onto a path matching
    `pattern` (tests/killer.py); n = 0 runs it to the end."""
    command = [sys.executable, "-m", "tests.killer", pattern, str(n), "--", *(str(a) for a in argv)]
    return subprocess.run(command, capture_output=True, cwd=REPOSITORY)


def temporaries(*folders) -> list:
    """atomic_path's temporaries, `.musicvid-<pid>.<name>.<random><suffix>` (the lock is none)."""
    return [p for folder in folders for p in folder.rglob(".musicvid-*") if temporary_of(p) and p.is_file()]


@pytest.mark.slow
@pytest.mark.ci
def test_killed_at_random_points_reruns_to_identical_frames_leaving_no_temporary_file(song, rendered, tmp_path):
    whole, whole_video = rendered

    cut, out = tmp_path / "cut", tmp_path / "videos" / "cut.mp4"
    argv = ["render", song, "--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", cut, "-q", "-o", out]
    pick = random.Random(7).randint
    # Each run is killed at its own point and the next one resumes what it left: the storyboard being
    # saved, a picture being written (a random one), the mux, the copy to -o, its subtitles.
    points = [
        ("*/storyboard.json", 1),
        ("*/frames/*.png", pick(1, 40)),
        ("*/video.mp4", 1),
        (str(out), 1),
        (str(out.with_suffix(".srt")), 1),
    ]
    for pattern, n in points:
        killed = killed_run(pattern, n, *argv)
        assert killed.returncode == -9, (pattern, n, killed.stderr.decode())
        assert temporaries(cut, out.parent), f"killed at {pattern} #{n}: the write in progress left its temporary"
    finished = killed_run("", 0, *argv)
    assert finished.returncode == 0, finished.stderr.decode()
    assert temporaries(cut, out.parent) == []
    for folder in ("keyframes", "frames"):
        names = sorted(p.name for p in (whole / folder).iterdir())
        assert names == sorted(p.name for p in (cut / folder).iterdir())
        for name in names:
            assert (whole / folder / name).read_bytes() == (cut / folder / name).read_bytes(), name
    assert probe(out)["frames"] == probe(whole_video)["frames"] == 60


@pytest.mark.slow
def test_editing_one_prompt_rerenders_only_the_frames_that_depend_on_it(song, rendered, tmp_path):
    workdir = shutil.copytree(rendered[0], tmp_path / "w")
    before = {p.name: (p.stat().st_mtime_ns, stored_key(p)) for p in (workdir / "frames").iterdir()}
    board = json.loads((workdir / "storyboard.json").read_text())
    board["scenes"][2]["prompt"] = "a lighthouse made of glass"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(board))
    # and a picture replaced by one of another size under its valid key (a person's image editor)
    resized = workdir / "frames" / "000001.png"
    meta = PngImagePlugin.PngInfo()
    meta.add_text(KEY_FIELD, stored_key(resized))
    Image.open(resized).resize((32, 32)).save(resized, pnginfo=meta)
    assert render(song, workdir, "--storyboard", edited, "-o", tmp_path / "b.mp4") == 0
    after = {p.name: (p.stat().st_mtime_ns, stored_key(p)) for p in (workdir / "frames").iterdir()}

    schedule = frame_schedule([s["start"] for s in board["scenes"]], board["audio"]["duration"], 10)
    depends = {  # frames of scene 1 (morphing into scene 2) and of scene 2 itself
        f"{k:06d}.png" for seg in schedule.segments if 2 in (seg.scene, seg.target) for k in range(seg.first, seg.end)
    }
    changed = {name for name in before if before[name] != after[name]}
    # the resized picture's group is denoised whole, but only that picture is written again
    assert changed == depends & set(before) | {"000001.png"}
    assert depends & changed  # the edit did reach the video
    assert Image.open(resized).size == (64, 64) and probe(tmp_path / "b.mp4")["frames"] == 60


@pytest.mark.slow
def test_no_align_and_preview_and_captions(song, rendered, tone_render_slerp, tmp_path):
    shutil.copytree(rendered[0], tmp_path / "csa")
    frame = "000015.png"  # (tone_render_slerp: the song rendered with --no-align, shared)
    assert (tone_render_slerp / "frames" / frame).read_bytes() != (tmp_path / "csa" / "frames" / frame).read_bytes()

    assert render(song, tmp_path / "csa", "--preview", "--captions", "line", "-o", tmp_path / "preview.mp4") == 0
    assert probe(tmp_path / "preview.mp4")["frames"] == 60

    karaoke = tmp_path / "karaoke.mp4"
    assert render(song, tmp_path / "csa", "--captions", "karaoke", "--low-vram", "--size", "128x96", "-o", karaoke) == 0
    assert probe(karaoke)["size"] == (128, 96)
    # the .ass is beside the video, with the line's words timed and its font; libass drew them at the bottom of the frames
    kept = karaoke.with_suffix(".ass").read_text()
    assert "{\\kf" in kept and "burning" in kept and "\n[Fonts]\nfontname: DejaVuSans-Bold_B0.ttf\n" in kept
    with av.open(str(karaoke)) as container:
        shown = next(f for i, f in enumerate(container.decode(video=0)) if i == 20).to_ndarray(format="rgb24")  # 2.0 s
    drawn = load_picture(tmp_path / "csa" / "frames" / "000020.png")
    difference = np.abs(shown.astype(int) - drawn.astype(int)).mean(axis=(1, 2))
    assert difference[-30:].max() > 3 * difference[:48].mean()  # rows of words, far above the encoding's error


@pytest.mark.slow
def test_ffmpeg_failure_is_exit_1_with_its_reason(song, rendered, tmp_path, monkeypatch, capsys):
    import musicvid.delivery.mux

    real = musicvid.delivery.mux.ffmpeg.exe()
    fake = tmp_path / "ffmpeg"
    # an ffmpeg built without libx264: it decodes the song, and fails at the mux
    fake.write_text(
        f'#!/bin/sh\ncase "$*" in *libx264*) echo "Unknown encoder \'libx264\'" >&2; exit 1;; esac\nexec "{real}" "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(musicvid.delivery.mux.ffmpeg, "exe", lambda: str(fake))
    assert real != str(fake)
    shutil.copytree(rendered[0], tmp_path / "w")  # its pictures drawn: the run goes straight to the mux
    code = render(song, tmp_path / "w", "-o", tmp_path / "v.mp4")
    err = capsys.readouterr().err
    assert code == 1 and "Unknown encoder 'libx264'" in err and err.count("\n") == 1
    assert not (tmp_path / "v.mp4").exists()


def test_compile_wraps_the_unet_and_decoder_once():
    from musicvid.models.tiny import local_diffusion
    from musicvid.pictures.switches import pipeline_for
    from musicvid.settings.presets import TINY
    from musicvid.settings.render import RenderSettings

    pipe = local_diffusion(TINY)
    settings = RenderSettings(compile=True)
    own = pipeline_for(pipe, settings)
    unet, decoder = pipe.unet, pipe.vae.decoder
    assert isinstance(unet, torch._dynamo.eval_frame.OptimizedModule)
    assert isinstance(decoder, torch._dynamo.eval_frame.OptimizedModule)
    assert own.unet is unet
    pipeline_for(pipe, settings)  # a kept-loaded pipeline, next render: compiled already
    assert pipe.unet is unet and pipe.vae.decoder is decoder


def test_a_group_padded_to_the_batch_size_for_a_compiled_unet_gives_the_same_pictures():
    from musicvid.pictures.conditioning import SceneInputs
    from musicvid.pictures.denoise import batch_inputs, decode, denoise
    from musicvid.pictures.grouping import Picture
    from musicvid.storyboard.board import Scene, Storyboard

    scenes = [Scene(index=i, kind="lyric", start=i, end=i + 1.0, text="", prompt=p, seed=i) for i, p in enumerate("ab")]
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    settings = RenderSettings(size=(64, 64), steps=3, batch_size=5)
    pipe = local_diffusion()
    inputs = SceneInputs(pipe, board, [0, 1], settings)
    group = [Picture(None, "", 0, 1, t) for t in (0.2, 0.4, 0.6)]
    with torch.inference_mode():
        alone = decode(pipe, denoise(pipe, batch_inputs(pipe, inputs, group), settings))
        padded = decode(pipe, denoise(pipe, batch_inputs(pipe, inputs, group, size=5), settings))
    # another batch shape may round differently (matrix products are blocked by shape), nothing more
    assert padded.shape[0] == 5 and (padded[:3].int() - alone.int()).abs().max() <= 1


def test_a_render_gets_its_own_sampler_and_the_loaded_pipeline_keeps_its_own():
    from musicvid.models.tiny import local_diffusion
    from musicvid.pictures.switches import pipeline_for
    from musicvid.settings.presets import TINY
    from musicvid.settings.render import RenderSettings

    pipe = local_diffusion(TINY)
    shared = pipe.scheduler
    ddim, dpm = pipeline_for(pipe, RenderSettings(scheduler="ddim")), pipeline_for(pipe, RenderSettings())
    assert pipe.scheduler is shared  # a render denoising with it now is not disturbed
    assert (
        type(ddim.scheduler).__name__ == "DDIMScheduler"
        and type(dpm.scheduler).__name__ == "DPMSolverMultistepScheduler"
    )
    assert ddim.unet is dpm.unet is pipe.unet  # the weights are shared, not copied


@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_a_render_shares_the_loaded_modules_in_their_own_precision(half):
    from musicvid.models.tiny import local_diffusion
    from musicvid.models.tiny_video import tiny_ltx_video
    from musicvid.pictures.clips import video_pipeline_for
    from musicvid.pictures.switches import pipeline_for
    from musicvid.settings.presets import TINY
    from musicvid.settings.render import RenderSettings

    def dtypes(pipe) -> dict:
        return {name: module.dtype for name, module in pipe.components.items() if isinstance(module, torch.nn.Module)}

    picture = local_diffusion(TINY).to(dtype=half)
    picture.vae.to(torch.float32)  # the VAE kept in float32 beside a half-precision UNet, as the SDXL rule does
    video = tiny_ltx_video().to(dtype=half)
    for pipe, make in ((picture, pipeline_for), (video, video_pipeline_for)):
        before = dtypes(pipe)
        own = make(pipe, RenderSettings())
        assert dtypes(pipe) == before and dtypes(own) == before  # no render casts what the loaded pipeline shares
        assert all(own.components[name] is pipe.components[name] for name in before)
    assert dtypes(picture)["unet"] == half and dtypes(picture)["vae"] == torch.float32


def test_a_video_without_audio_has_no_audio_stream(tmp_path):
    from musicvid.delivery.mux import encode_video

    frames = [np.full((16, 24, 3), 20 * i, dtype=np.uint8) for i in range(7)]
    encode_video(frames, width=24, height=16, fps=10, audio=None, output=tmp_path / "silent.mp4")
    with av.open(str(tmp_path / "silent.mp4")) as container:
        assert not container.streams.audio
        assert sum(1 for _ in container.decode(video=0)) == 7


@pytest.mark.parametrize(
    "seconds, said", [(83.04, "in 83.0 s on"), (0.0042, "in 4 ms on"), (0.0001, "in under 1 ms on")]
)
def test_the_report_line_says_a_render_of_milliseconds_in_milliseconds(seconds, said):
    summary = dict(video_frames=9, pictures_drawn=0, wall_seconds=seconds, device="cpu", models={}, peak_memory_gb={})
    assert report_line(summary) == f"9 frames (0 pictures drawn) {said} cpu"
    assert report_line({**summary, "pictures_drawn": 1}) == f"9 frames (1 picture drawn) {said} cpu"


@pytest.mark.slow
def test_beat_pacing_redraws_only_the_morphs_and_keeps_keyframes_and_frame_count(tmp_path):
    import soundfile

    samples, _ = click_track(4.0, bpm=75)
    song = tmp_path / "clicks.wav"
    soundfile.write(song, samples, 16_000)
    song.with_suffix(".lrc").write_text("[00:00.00]tick\n[00:02.00]tock\n")
    workdir = tmp_path / "w"
    assert render(song, workdir, "--fps", "5", "-o", tmp_path / "linear.mp4") == 0
    keyframes = {p.name: p.read_bytes() for p in (workdir / "keyframes").iterdir()}
    linear = {p.name: p.read_bytes() for p in (workdir / "frames").iterdir()}
    assert render(song, workdir, "--fps", "5", "--pacing", "beats", "-o", tmp_path / "beats.mp4") == 0
    drawn = json.loads((workdir / "timings.json").read_text())["pictures_drawn"]
    assert drawn == len(linear)  # every in-between frame, no keyframe
    assert {p.name: p.read_bytes() for p in (workdir / "keyframes").iterdir()} == keyframes
    beats = {p.name: p.read_bytes() for p in (workdir / "frames").iterdir()}
    assert beats.keys() == linear.keys() and any(beats[name] != linear[name] for name in beats)
    assert probe(tmp_path / "beats.mp4")["frames"] == probe(tmp_path / "linear.mp4")["frames"] == 20


def test_karaoke_words_light_up_at_whispers_word_times_or_shared_out_by_letters():
    from musicvid.delivery.captions import ass_script
    from musicvid.delivery.cue_times import word_times
    from musicvid.lyrics.transcript import Line, Transcript, Word
    from musicvid.storyboard.board import Scene, Storyboard

    scenes = [
        Scene(index=0, kind="intro", start=0.0, end=1.0, text="", prompt="a", seed=1),
        Scene(index=1, kind="lyric", start=1.0, end=3.0, text="let it go", prompt="b", seed=2),
        Scene(index=2, kind="lyric", start=3.0, end=5.0, text="an edited line", prompt="c", seed=3),
    ]
    board = Storyboard(audio=SongAudio(5.0), scenes=scenes)
    heard = Line(1.1, 2.6, "let it go", words=[Word(1.1, 1.4, " let"), Word(1.5, 1.7, " it"), Word(1.9, 2.6, " go")])
    sung = Line(3.0, 4.8, "and a line", words=[Word(3.0, 3.5, " and"), Word(3.6, 4.0, " a"), Word(4.1, 4.8, " line")])
    words = word_times(board, Transcript([heard, sung], "en", "test", ""))
    assert words[1] == [(1.1, 1.4, "let", False), (1.5, 1.7, "it", True), (1.9, 2.6, "go", True)]  # Whisper's times
    shared = words[2]  # the text was edited: the scene's 2 s shared by letters, in order, end to end
    assert [w[2] for w in shared] == ["an", "edited", "line"] and shared[0][0] == 3.0 and shared[-1][1] == 5.0
    assert shared[1][1] - shared[1][0] > shared[0][1] - shared[0][0]
    script = ass_script(board, 512, 288, words)
    dialogue = [line for line in script.splitlines() if line.startswith("Dialogue:")]
    assert len(dialogue) == 2 and "PlayResX: 512" in script and "PlayResY: 288" in script
    # a 0.1 s wait, then "let" fills over 0.3 s; 0.1 s; "it" 0.2 s; 0.2 s; "go" 0.7 s
    assert dialogue[0].startswith("Dialogue: 0,0:00:01.00,0:00:03.00,")
    assert dialogue[0].endswith("{\\k10}{\\kf30}let {\\k10}{\\kf20}it {\\k20}{\\kf70}go")
