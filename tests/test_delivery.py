"""The video delivered as asked: each shape and resolution at its exact ratio and short side, the output rate
with the frames between made by one ffmpeg (the drawn frames kept on their frames), and the upscalers, a learned
one seeing only the drawn frames where the frames between are blends."""

import itertools
import json
import os
import subprocess
import time

import av
import numpy as np
import pytest
import torch

from musicvid.cli import main
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.delivery import mux
from musicvid.delivery.upscale import Upscaler
from musicvid.models.footprint import UPSCALER_ROLES
from musicvid.models.loading import load_upscaler
from musicvid.models.registry import ModelRegistry
from musicvid.pictures.camera import cover
from musicvid.settings.geometry import ASPECTS, RESOLUTIONS
from musicvid.settings.presets import PRESETS, REAL_ESRGAN, REAL_ESRGAN_FAST, TINY
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import resolve_render_settings
from tests.helpers import decoded, make_tone, probe, psnr

TINY_MODELS = PRESETS["tiny"]
CPU = torch.device("cpu")


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


@pytest.mark.parametrize(
    "interpolator,upscaled", [("blend", 10), pytest.param("minterpolate", 30, marks=pytest.mark.ci)]
)  # (minterpolate's: the ci tier)
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
    for preset, role in itertools.product(PRESETS.values(), UPSCALER_ROLES.values()):  # (and with --fast)
        with ModelRegistry(preset, "cpu").use(role) as upscaler:
            assert preset.upscaler == "auto" and upscaler is None
    frame = np.random.default_rng(1).integers(0, 255, (48, 88, 3), dtype=np.uint8)
    # the hub files as published (tests/standins/upscaler.py), through spandrel: --fast's is the compact one
    for name, network in ((TINY, "ESRGAN"), (REAL_ESRGAN, "ESRGAN"), (REAL_ESRGAN_FAST, "Compact")):
        model = load_upscaler(name, CPU)
        assert model.scale == 4 and model.architecture.id == network
        upscaled = list(Upscaler(model, (1280, 720), batch=2)([frame] * 3))
        assert [f.shape for f in upscaled] == [(720, 1280, 3)] * 3
        # a batch draws what one frame alone does; torch's scaling to cover is Pillow's Lanczos, nearly
        alone = Upscaler(model, (1280, 720), batch=1)
        assert np.array_equal(next(alone([frame])), upscaled[2])
        if network == "Compact":  # (the scaling is the Upscaler's whatever the network, and the random compact's
            continue  # output, a pixel shuffle's checkerboard, is all the frequencies where two kernels differ most)
        with torch.inference_mode():
            bigger = model(torch.from_numpy(frame).permute(2, 0, 1)[None].float() / 255)[0]
        pillow = cover((bigger.permute(1, 2, 0) * 255).round().to(torch.uint8).numpy(), (1280, 720))
        assert np.abs(pillow.astype(int) - upscaled[2].astype(int)).mean() < 2


def test_the_song_is_muxed_from_its_first_sample_in_at_most_two_channels(tmp_path):
    """A sound that starts 1.5 s into its file (a video's may) is muxed from 0, as the analysis decoded it: else
    every picture and caption is early; 12 channels (7.1.4), which AAC takes no layout of, go to stereo."""
    song = make_tone(tmp_path / "song.wav", 3, "-af", "pan=7.1.4|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0|c6=c0|c7=c0|c8=c0")
    late = tmp_path / "late.mkv"
    subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-y", "-itsoffset", "1.5", "-i", song, "-c:a", "pcm_s16le", late], check=True
    )
    out = tmp_path / "video.mp4"
    frames = [np.full((64, 64, 3), 128, np.uint8)] * 6
    mux.encode_video(frames, width=64, height=64, fps=2, audio=late, output=out)
    with av.open(str(out)) as container:
        sound = container.streams.audio[0]
        assert sound.codec_context.channels == 2
        first = next(container.decode(audio=0))
        assert float(first.pts * first.time_base) < 0.1  # from 0, not from 1.5 s


@pytest.mark.ci  # (a second encode of the delivery's: its others stay)
def test_the_same_frames_make_the_same_file_whatever_their_pace(tmp_path):
    """ffmpeg reads the song faster than the frames come through the pipe: the file's interleaving of the two must
    not follow their pace, or a rerun (a resume) gives other bytes for the same video."""
    song = make_tone(tmp_path / "song.wav", 40)  # (the muxer's default lets the song run 10 s ahead of the frames)
    frames = [np.random.default_rng(n).integers(0, 256, (64, 64, 3), np.uint8) for n in range(40)]

    def paced(delay):
        for frame in frames:
            time.sleep(delay)
            yield frame

    for delay, name in ((0.0, "a.mp4"), (0.05, "b.mp4")):
        mux.encode_video(paced(delay), width=64, height=64, fps=1, audio=song, output=tmp_path / name)
    assert (tmp_path / "a.mp4").read_bytes() == (tmp_path / "b.mp4").read_bytes()


def test_what_ffmpeg_says_went_wrong_is_its_error_not_the_cascade_after_it():
    log = (
        "[Parsed_minterpolate_0 @ 0x7f4d] Height or width < 32\n"
        "[Parsed_minterpolate_0 @ 0x7f4d] Failed to configure input pad on Parsed_minterpolate_0\n"
        "[vf#0:0 @ 0x5584] Error reinitializing filters!\n"
        "[vf#0:0 @ 0x5584] Task finished with error code: -22 (Invalid argument)\n"
        "[vost#0:0/libx264 @ 0x5584] [enc:libx264 @ 0x5584] Could not open encoder before EOF\n"
        "[out#0/mp4 @ 0x5584] Nothing was written into output file, because at least one of its streams received no "
        "packets.\n"
    )
    assert mux.ffmpeg.reason(log) == "[Parsed_minterpolate_0 @ 0x7f4d] Height or width < 32"
    assert mux.ffmpeg.reason("x.mp3: Invalid data found when processing input\n") == (
        "x.mp3: Invalid data found when processing input"
    )


def test_a_broken_pipe_when_ffmpeg_stopped_reading_keeps_the_finished_video(tmp_path, monkeypatch):
    """ffmpeg may exit once it has all it needs (at 1 → 60 fps, before the held frames): closing its input then
    flushes into a closed pipe. Its exit status decides, and a whole video is kept."""
    real = subprocess.Popen

    class Closed:  # the pipe's close, as when ffmpeg quit before the last frames were flushed
        def __init__(self, pipe):
            self.pipe = pipe

        def write(self, data):
            return self.pipe.write(data)

        def close(self):
            self.pipe.close()
            raise BrokenPipeError(32, "Broken pipe")

    def popen(*args, **kwargs):
        process = real(*args, **kwargs)
        if process.stdin is not None:  # (encode_video's; the song's probes have none)
            process.stdin = Closed(process.stdin)
        return process

    monkeypatch.setattr(mux.subprocess, "Popen", popen)
    frames = [np.full((64, 64, 3), 40 * n, np.uint8) for n in range(3)]
    out = tmp_path / "video.mp4"
    mux.encode_video(frames, width=64, height=64, fps=1, audio=None, output=out, output_fps=60, frame_count=180)
    with av.open(str(out)) as container:
        assert sum(1 for _ in container.decode(video=0)) == 180


def test_the_ffmpeg_run_is_the_wheels_whatever_path_holds(tmp_path, monkeypatch):
    """PATH's ffmpeg may be an older build (Debian 12's 5.1 read a video cut short as whole): the suite runs the
    wheel's, pinned, and so does a render."""
    import imageio_ffmpeg

    from musicvid.core import ffmpeg

    (other := tmp_path / "ffmpeg").write_text("#!/bin/sh\nexit 3\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("IMAGEIO_FFMPEG_EXE", raising=False)
    ffmpeg.exe.cache_clear()
    try:
        assert ffmpeg.exe() == imageio_ffmpeg.get_ffmpeg_exe() != str(other)
    finally:
        ffmpeg.exe.cache_clear()


def test_the_video_is_bt709_and_tagged_so_its_colours_decode_as_drawn(tmp_path):
    """Players read an untagged HD video as BT.709: encoded by swscale's default (BT.601) matrix, a green frame's green
    came back 27 levels darker. Read as its tags say, each colour comes back within x264's loss."""
    frame = np.zeros((1080, 1920, 3), np.uint8)
    frame[:, :960], frame[:, 960:] = (200, 30, 30), (30, 200, 60)
    mux.encode_video([frame] * 4, width=1920, height=1080, fps=2, audio=None, output=(video := tmp_path / "hd.mp4"))
    with av.open(str(video)) as opened:
        context = opened.streams.video[0].codec_context
        tags = [int(getattr(context, name)) for name in ("colorspace", "color_primaries", "color_trc", "color_range")]
    assert tags == [1, 1, 1, 1]  # (ffmpeg's numbers: BT.709 for the first three; 1, limited range)
    shown = subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-i", str(video), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    decoded = np.frombuffer(shown, np.uint8).reshape(1080, 1920, 3).astype(int)
    for x, colour in ((480, (200, 30, 30)), (1440, (30, 200, 60))):
        assert np.abs(decoded[540, x] - colour).max() <= 4, (decoded[540, x], colour)
