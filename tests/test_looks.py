"""--look: the music video look sets the shape, resolution, rate, pacing and captions people expect, and what
follows from the output rate (the drawn rate a whole fraction of it); on the demo song it is valid, resumable and
keeps its keyframes."""

import subprocess

import pytest

from musicvid.cli import main
from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.delivery import mux
from musicvid.pictures import denoise
from musicvid.pictures.cache import load_picture
from musicvid.pictures.camera import cover
from musicvid.pictures.schedule import to_frame
from musicvid.settings.presets import PRESETS
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import load_storyboard
from tests.helpers import decoded, probe, psnr

TINY_MODELS = PRESETS["tiny"]


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


@pytest.mark.slow
def test_music_video_look_on_the_demo_song_is_valid_resumable_and_keeps_its_keyframes(demo_song, tmp_path, monkeypatch):
    song = tmp_path / "demo3.mp3"  # the demo's first 3 s, sung to two lines
    mux_cut = [mux.ffmpeg.exe(), "-v", "error", "-i", str(demo_song), "-t", "3", "-c", "copy", str(song)]
    subprocess.run(mux_cut, check=True)
    lyrics = tmp_path / "demo3.lrc"
    # the first line's first words timed as enhanced LRC times them, which karaoke follows
    lyrics.write_text(
        "[00:01.00]<00:01.00>My <00:01.30>heart <00:01.50>is a lighthouse in the storm\n"
        "[00:02.00]Your voice is a river made of gold\n"
    )
    workdir, output = tmp_path / "work", tmp_path / "demo3.mp4"
    argv = ["render", song, "--models", "tiny", "--look", "music-video", "--lyrics", lyrics]
    # Lanczos: the tiny random upscaler's pictures are all alike (its own test: tests/test_delivery.py)
    argv += ["--upscaler", "lanczos", "--workdir", workdir, "-o", output, "-q"]
    # the disk fills up at the 8th in-between frame (a SIGKILL at any write: test_render's fault injection)
    written, save = [], denoise.save_picture

    def save_until_full(path, pixels, key):
        if "frames" in path.parts and len(written) == 8:
            raise OSError(28, "No space left on device")
        written.append(path)
        save(path, pixels, key)

    monkeypatch.setattr(denoise, "save_picture", save_until_full)
    assert main([str(a) for a in argv]) == 1 and not output.exists()
    monkeypatch.setattr(denoise, "save_picture", save)
    assert main([str(a) for a in argv]) == 0  # the rerun goes on from there

    video = probe(output)
    assert video["size"] == (1920, 1080) and video["fps"] == 30
    assert abs(video["frames"] - video["duration"] * 30) <= 1 and abs(video["duration"] - 3.0) < 0.1
    assert "{\\kf30}My {\\kf20}heart" in output.with_suffix(".ass").read_text()
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
