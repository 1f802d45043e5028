"""The video people expect: output rate, shape and resolution, camera moves, beat accents, the look,
the lyrics on screen."""

import json
import math
import subprocess

import av
import numpy as np
import pytest
import torch

from musicvid.cli import main
from musicvid.core.audio import find_beats
from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.delivery import captions, mux
from musicvid.delivery.upscale import Upscaler
from musicvid.models.loading import load_upscaler
from musicvid.models.registry import ModelRegistry
from musicvid.pictures import camera, render
from musicvid.pictures.cache import load_picture
from musicvid.pictures.camera import cover
from musicvid.pictures.pacing import accent_per_frame
from musicvid.pictures.schedule import frame_schedule, to_frame
from musicvid.settings.geometry import ASPECTS, RESOLUTIONS
from musicvid.settings.presets import PRESETS, REAL_ESRGAN, TINY
from musicvid.settings.render import RenderSettings, resolve_render_settings
from musicvid.storyboard.board import Scene, Storyboard, load_storyboard
from tests.helpers import click_track, make_tone, probe

TINY_MODELS = PRESETS["tiny"]
CPU = torch.device("cpu")


def test_the_music_video_look_and_what_follows_from_the_output_rate():
    look = resolve_render_settings(TINY_MODELS, dict(look="music-video"))
    assert (look.pacing, look.output_fps, look.fps, look.aspect, look.resolution, look.captions) == (
        "beats",
        30,
        10,
        "16:9",
        "1080p",
        "karaoke",
    )
    assert look.video_size == (1920, 1080) and look.video_fps == 30
    assert resolve_render_settings(TINY_MODELS, dict(look="music-video", captions="none", output_fps=60)).fps == 10
    assert resolve_render_settings(TINY_MODELS, dict(look="music-video", size=(64, 64))).aspect is None  # a size wins
    # SD draws at the multiple of the output rate nearest the paper's 10 fps, so keyframes land on frames
    assert [resolve_render_settings(TINY_MODELS, dict(output_fps=r)).fps for r in (24, 25, 30, 60)] == [
        12,
        12.5,
        10,
        10,
    ]
    with pytest.raises(UserError, match="whole multiple of --fps 10"):
        resolve_render_settings(TINY_MODELS, dict(fps=10, output_fps=25))
    with pytest.raises(UserError, match="one of 24, 25, 30, 60"):
        resolve_render_settings(TINY_MODELS, dict(output_fps=29.97))


@pytest.mark.parametrize("aspect", list(ASPECTS))
def test_each_shape_and_resolution_has_the_exact_ratio_and_short_side(aspect):
    for resolution, short in RESOLUTIONS.items():
        width, height = resolve_render_settings(
            PRESETS["default"], dict(aspect=aspect, resolution=resolution)
        ).video_size
        assert min(width, height) == short and width % 2 == height % 2 == 0
        assert abs(width / height - ASPECTS[aspect]) < 2 / short
    assert RenderSettings(size=(512, 512)).video_size == (512, 512)


# two renders probed (every shape and resolution's size is checked above; the code is the same)
@pytest.mark.parametrize("aspect,resolution", [("9:16", "1080p"), ("4:5", "720p")])
@pytest.mark.slow
def test_the_video_has_the_shape_resolution_rate_and_length_asked_for(aspect, resolution, tmp_path):
    song = make_tone(tmp_path / "song.mp3", 1.0)
    (tmp_path / "song.lrc").write_text("[00:00.30]la la la\n")
    output = tmp_path / "video.mp4"
    argv = ["render", song, "--models", "tiny", "--lyrics", tmp_path / "song.lrc", "--aspect", aspect]
    argv += ["--resolution", resolution, "--upscaler", "lanczos", "--output-fps", "25", "-o", output, "-q"]
    assert main([str(a) for a in [*argv, "--workdir", tmp_path / "work"]]) == 0
    video = probe(output)
    wanted = resolve_render_settings(TINY_MODELS, dict(aspect=aspect, resolution=resolution)).video_size
    assert video["size"] == wanted and video["fps"] == 25 and abs(video["frames"] - 25 * video["duration"]) <= 1


@pytest.mark.parametrize("interpolator,upscaled", [("blend", 10), ("minterpolate", 30)])
@pytest.mark.slow
def test_a_learned_upscaler_sees_only_the_drawn_frames_where_the_frames_between_are_blends(
    interpolator, upscaled, tmp_path
):
    song = make_tone(tmp_path / "song.mp3", 1.0)
    (tmp_path / "song.lrc").write_text("[00:00.30]la la la\n")
    output, workdir = tmp_path / "video.mp4", tmp_path / "work"
    argv = ["render", song, "--models", "tiny", "--lyrics", tmp_path / "song.lrc", "--fps", "10", "--output-fps", "30"]
    argv += ["--interpolator", interpolator, "--aspect", "16:9", "--resolution", "720p", "--upscaler", TINY]
    argv += ["--captions", "line"]
    assert main([str(a) for a in [*argv, "--workdir", workdir, "-o", output, "-q"]]) == 0
    # a blend of two upscaled frames is the upscaled blend: the network draws 10 frames, not 30
    assert json.loads((workdir / "timings.json").read_text())["upscale"]["frames"] == upscaled
    video = probe(output)
    assert video["size"] == (1280, 720) and video["fps"] == 30 and video["frames"] == 30


def test_camera_moves_leave_keyframes_whole_and_glide_through_them():
    schedule = frame_schedule([0.0, 2.0, 5.0], 8.0, 10)
    firsts = [s.first for s in schedule.segments]
    for move in ("zoom", "pan"):
        views = camera.views(schedule, move)
        assert [views[k] for k in firsts] == [camera.WHOLE] * 3  # each keyframe as drawn
        zooms = np.array([v.zoom for v in views])
        assert zooms.max() == pytest.approx(1 + camera.MOVE, abs=1e-3) and zooms.min() == 1
        # no jolt: the zoom changes little from frame to frame, least of all around a keyframe
        assert np.abs(np.diff(zooms)).max() < camera.MOVE * math.pi / 20 + 1e-9
        assert all(abs(views[k + 1].zoom - 1) < 0.02 for k in firsts)
    shifts = [v.shift for v in camera.views(schedule, "pan")]
    assert min(shifts[1:20]) == -1 * max(np.abs(shifts[1:20])) and max(shifts[20:50]) > 0.9  # left, then right
    frame = np.random.default_rng(0).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    assert camera.look_through(frame, camera.WHOLE) is frame
    closer = camera.look_through(frame, camera.View(1.5, 1.0))
    assert closer.shape == frame.shape and not np.array_equal(closer, frame)


def test_pulse_accents_strong_beats_and_nothing_in_silence():
    fps, duration = 10, 8.0
    samples, beats = click_track(duration, bpm=75)
    frames = to_frame(duration, fps)
    accent = accent_per_frame(find_beats(samples), fps, frames)
    on_beat = sorted({math.ceil(b * fps) for b in beats if b * fps < frames})
    between = [k for k in range(frames) if all(abs(k - b) >= 3 for b in on_beat)]
    assert accent.max() <= 1 and accent[on_beat].mean() > 3 * accent[between].mean()
    assert not accent_per_frame(find_beats(np.zeros(16_000 * 3, dtype=np.float32)), fps, 30).any()
    schedule = frame_schedule([0.0], duration, fps)
    pulsed = camera.views(schedule, "none", accent, pulse=1.0)
    assert max(v.zoom for v in pulsed) == pytest.approx(1 + camera.PULSE_ZOOM, rel=0.2)


def moving_square(frames: int, width=96, height=64, step=4) -> list[np.ndarray]:
    result = []
    for n in range(frames):
        frame = np.full((height, width, 3), 40, dtype=np.uint8)
        frame[20:44, 10 + n * step : 34 + n * step] = (230, 200, 60)
        result.append(frame)
    return result


@pytest.mark.parametrize("interpolator", ["minterpolate", "blend"])
def test_interpolation_keeps_the_drawn_frames_and_fills_between(interpolator):
    drawn = moving_square(8)
    made = list(
        mux.interpolate(drawn, width=96, height=64, fps=10, output_fps=30, frame_count=24, interpolator=interpolator)
    )
    assert len(made) == 24 and made[0].shape == (64, 96, 3)
    for k, frame in enumerate(drawn):  # every third frame is a drawn one (up to the conversion to YUV)
        assert np.abs(made[3 * k].astype(int) - frame).max() <= 4
    # a frame between: motion compensation moves the square a third of the way; a blend shows two halves
    lit = (made[4].astype(int).sum(axis=2) > 400).any(axis=0).nonzero()[0]
    if interpolator == "minterpolate":
        assert abs(lit.mean() - (10 + 4 * 4 / 3 + 11.5)) < 1.5
    else:
        assert np.isin(np.unique(made[4][32, :, 0]), [40, 230]).mean() < 1  # mixed colours, not a copy


@pytest.mark.parametrize("interpolator", ["minterpolate", "blend"])
def test_one_ffmpeg_delivers_the_frames_between_at_the_video_size_with_the_drawn_ones_on_their_frames(
    tmp_path, interpolator
):
    drawn, song = moving_square(8), make_tone(tmp_path / "song.wav", 0.77)
    video = tmp_path / "look.mp4"
    mux.encode_video(
        drawn,
        width=96,
        height=64,
        fps=10,
        audio=song,
        output=video,
        output_fps=30,
        interpolator=interpolator,
        frame_count=23,
        video_size=(160, 90),
    )
    found = probe(video)
    # the held last frame's surplus is trimmed: the song's length
    assert found["size"] == (160, 90) and found["fps"] == 30 and found["frames"] == 23
    assert abs(found["duration"] - 0.77) < 0.05
    frames = decoded(video, set(range(23)))
    for k, frame in enumerate(drawn):  # every third frame is a drawn one, scaled to cover 16:9
        if 3 * k < 23:
            assert psnr(frames[3 * k], cover(frame, (160, 90))) > 30, k


@pytest.mark.slow
def test_upscalers_cover_the_video_size(standin_hub):
    assert cover(np.zeros((384, 704, 3), np.uint8), (1920, 1080)).shape == (1080, 1920, 3)
    assert load_upscaler("auto", CPU) is None  # Lanczos on the CPU
    # every preset's upscaler is auto: the tiny one's network too is for a GPU (on two cores it cost 1.1 s
    # a 1080p frame, 200 s of a 6 s song's render), and the CPU takes Lanczos
    for preset in PRESETS.values():
        with ModelRegistry(preset, "cpu").use("upscaler") as upscaler:
            assert preset.upscaler == "auto" and upscaler is None
    frame = np.random.default_rng(1).integers(0, 255, (48, 88, 3), dtype=np.uint8)
    for name in (TINY, REAL_ESRGAN):  # the hub file as published (tests/standins/upscaler.py), through spandrel
        model = load_upscaler(name, CPU)
        assert model.scale == 4 and model.architecture.id == "ESRGAN"
        upscaled = list(Upscaler(model, (1280, 720), batch=2)([frame] * 3))
        assert [f.shape for f in upscaled] == [(720, 1280, 3)] * 3
        # a batch draws what one frame alone does; torch's scaling to cover is Pillow's Lanczos, nearly
        alone = Upscaler(model, (1280, 720), batch=1)
        assert np.array_equal(next(alone([frame])), upscaled[2])
        with torch.inference_mode():
            bigger = model(torch.from_numpy(frame).permute(2, 0, 1)[None].float() / 255)[0]
        pillow = cover((bigger.permute(1, 2, 0) * 255).round().to(torch.uint8).numpy(), (1280, 720))
        assert np.abs(pillow.astype(int) - upscaled[2].astype(int)).mean() < 2


def decoded(path, indices: set[int]) -> dict[int, np.ndarray]:
    with av.open(str(path)) as container:
        return {k: f.to_ndarray(format="rgb24") for k, f in enumerate(container.decode(video=0)) if k in indices}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    return 10 * math.log10(255**2 / np.mean((a.astype(float) - b.astype(float)) ** 2))


@pytest.mark.slow
def test_music_video_look_on_the_demo_song_is_valid_resumable_and_keeps_its_keyframes(demo_song, tmp_path, monkeypatch):
    song = tmp_path / "demo3.mp3"  # the demo's first 3 s, sung to two lines
    mux_cut = [mux.ffmpeg.exe(), "-v", "error", "-i", str(demo_song), "-t", "3", "-c", "copy", str(song)]
    subprocess.run(mux_cut, check=True)
    lyrics = tmp_path / "demo3.lrc"
    lyrics.write_text("[00:01.00]My heart is a lighthouse in the storm\n[00:02.00]Your voice is a river made of gold\n")
    workdir, output = tmp_path / "work", tmp_path / "demo3.mp4"
    argv = ["render", song, "--models", "tiny", "--look", "music-video", "--lyrics", lyrics]
    # Lanczos: the tiny random upscaler's pictures are all alike (its own test is above)
    argv += ["--upscaler", "lanczos", "--workdir", workdir, "-o", output, "-q"]
    # the disk fills up at the 8th in-between frame (a SIGKILL at any write: test_render's fault injection)
    written, save = [], render.save_picture

    def save_until_full(path, pixels, key):
        if "frames" in path.parts and len(written) == 8:
            raise OSError(28, "No space left on device")
        written.append(path)
        save(path, pixels, key)

    monkeypatch.setattr(render, "save_picture", save_until_full)
    assert main([str(a) for a in argv]) == 1 and not output.exists()
    monkeypatch.setattr(render, "save_picture", save)
    assert main([str(a) for a in argv]) == 0  # the rerun goes on from there

    video = probe(output)
    assert video["size"] == (1920, 1080) and video["fps"] == 30
    assert abs(video["frames"] - video["duration"] * 30) <= 1 and abs(video["duration"] - 3.0) < 0.1
    assert "{\\kf" in output.with_suffix(".ass").read_text()
    # each scene's first frame is its keyframe, drawn at 10 fps and upscaled
    storyboard = load_storyboard(workdir / "storyboard.json")
    starts = {to_frame(s.start, 30): s.index for s in storyboard.scenes}
    frames = decoded(output, set(starts))
    keyframes = {
        scene: cover(load_picture(Workdir(workdir).keyframe(scene)), (1920, 1080)) for scene in starts.values()
    }
    for k, scene in starts.items():
        # above the lyrics, which are burned in at the bottom
        fit = {other: psnr(frames[k][:800], picture[:800]) for other, picture in keyframes.items()}
        assert fit[scene] > 35 and all(fit[scene] > value + 3 for other, value in fit.items() if other != scene)


def lyric_board(lines: list[str]) -> Storyboard:
    """One lyric scene a second, a line each."""
    scenes = [Scene(index=i, kind="lyric", start=float(i), end=i + 1.0, text=t) for i, t in enumerate(lines)]
    return Storyboard(audio={"duration": len(lines)}, title="", artist="", language="", settings={}, scenes=scenes)


def burned_in(tmp_path, lines: list[str], width=320, height=240) -> list[np.ndarray]:
    """Each line burned in by libass on a grey frame, as the video shows it: the bottom third."""
    script = tmp_path / "lyrics.ass"
    captions.write_script(script, captions.ass_script(lyric_board(lines), width, height))
    grey = np.full((height, width, 3), 90, dtype=np.uint8)
    video = tmp_path / "lyrics.mp4"
    mux.encode_video(
        [grey] * 2 * len(lines), width=width, height=height, fps=2, audio=None, output=video, subtitles=script
    )
    frames = decoded(video, set(range(0, 2 * len(lines), 2)))  # frame 2k is in line k
    return [frames[2 * k][height * 2 // 3 :].astype(float) for k in range(len(lines))]


def test_chinese_japanese_and_korean_lyrics_are_burned_in_as_their_letters(tmp_path):
    # five full-width characters each: drawn as boxes (a font without them), the three are the same picture
    lines = burned_in(tmp_path, ["我们的歌声", "春の夜の夢", "사랑의노래"])

    def apart(a, b) -> int:  # pixels clearly apart, not by the encoder's noise
        return int((np.abs(a - b).max(axis=2) > 40).sum())

    drawn = [apart(line, 90) for line in lines]
    assert min(drawn) > 300  # five characters' strokes and outline, at 17 px
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert apart(lines[a], lines[b]) > min(drawn) / 2, (a, b)


def dialogue(script: str) -> list[str]:
    """The text of each shown line of an ASS script."""
    return [line.split(",,0,0,0,,")[1] for line in script.splitlines() if line.startswith("Dialogue:")]


def test_lyrics_name_the_font_of_each_character_and_leave_out_what_none_has():
    board = lyric_board(["la 中文 la", "fire 🔥 and 𓀀", "🔥🎵", "ok 😀"])  # DejaVu has the emoticons
    script = captions.ass_script(board, 512, 288)
    assert "Style: Lyrics,DejaVu Sans," in script
    assert dialogue(script) == [
        "la {\\fnLyrics CJK}中文 {\\fn}la",  # the CJK font for its run, then the style's again
        "fire and",
        "ok 😀",
    ]  # a line with nothing drawable is not shown at all
    assert captions.undrawn_note(board) == (
        "2 of 4 lyric lines have characters the caption fonts cannot draw (scenes 1-2: 🔥, 𓀀, 🎵): "
        "the burned-in lyrics leave them out; the .srt keeps them"
    )
    assert "fire 🔥 and 𓀀" in captions.srt(board)
    assert captions.undrawn_note(lyric_board(["la 中文 la", "ok 😀"])) == ""
    # karaoke: a word with nothing drawable lights nothing up, its time is a wait before the next
    words = captions.word_times(board, None)
    (_, fire_end, _), _, (and_start, and_end, _), _ = words[1]
    wait, fill = round(and_start * 100) - round(fire_end * 100), round(and_end * 100) - round(and_start * 100)
    assert wait > 0 and dialogue(captions.ass_script(board, 512, 288, words))[1].endswith(
        f"fire {{\\k{wait}}}{{\\kf{fill}}}and"
    )
