"""--transitions video: the frames between keyframes drawn by a video model (LTX-Video; the tiny one here)."""

import json
import shutil

import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.pictures.cache import load_picture, stored_key
from musicvid.pictures.frames import video_frames
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.transitions import clip_frames, clip_index, clip_rate, transition_prompt
from musicvid.settings.geometry import FRAME_STEP, MAX_CLIP_FRAMES, drawn_size
from musicvid.settings.presets import PRESETS
from musicvid.settings.render import RenderSettings, resolve_render_settings
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, probe, render

LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def test_a_clip_holds_its_morph_and_the_next_keyframe_in_8k_plus_1_frames():
    for length in range(1, 300):
        frames = clip_frames(length)
        assert (frames - 1) % FRAME_STEP == 0 and frames <= MAX_CLIP_FRAMES
        assert frames >= min(length + 1, MAX_CLIP_FRAMES) and (frames < length + 1 + FRAME_STEP)
        assert clip_index(0.0, frames) == 0 and clip_index(1.0, frames) == frames - 1
        # in-between frames land inside the clip, in order; a longer morph than the longest clip shows it slowed
        places = [clip_index(k / length, frames) for k in range(1, length)]
        assert places == sorted(places) and all(0 <= p <= frames - 1 for p in places)
        if length < MAX_CLIP_FRAMES:
            assert len(set(places)) == len(places) and all(0 < p < frames - 1 for p in places)
    # a 5 s morph at 10 fps: 57 frames over 5 s, drawn for about 11 fps
    assert clip_frames(50) == 57 and clip_rate(50, 10.0) == 11
    assert (
        drawn_size((704, 384)) == (704, 384) and drawn_size((500, 300)) == (480, 288) and drawn_size((8, 8)) == (32, 32)
    )
    prompt = transition_prompt("a burning sky", "a river of glass", "oil painting")
    assert prompt.index("a burning sky") < prompt.index("a river of glass") and prompt.endswith("oil painting")


def test_transitions_are_a_setting_of_every_front_door_with_the_video_models_steps():
    assert resolve_render_settings(PRESETS["default"], {}).transition_steps == 40
    assert resolve_render_settings(PRESETS["tiny"], {"transitions": "video"}).transition_steps == 2
    assert RenderSettings.column("transitions").name == "transitions"
    assert RenderSettings.parse("transitions", "video", None) == "video"
    with pytest.raises(UserError, match="--transitions must be one of slerp, video"):
        RenderSettings.parse("transitions", "morph", None)
    with pytest.raises(UserError, match="--transition-steps must be from 1 to 100"):
        resolve_render_settings(PRESETS["tiny"], {"transition_steps": 500})


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    """One song rendered with video transitions and with slerp morphs (the tiny models)."""
    folder = tmp_path_factory.mktemp("transitions")
    song = make_tone(folder / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    assert render(song, folder / "video", "--transitions", "video", "-o", folder / "video.mp4") == 0
    assert render(song, folder / "slerp", "-o", folder / "slerp.mp4") == 0
    return song, folder


def frames_of(workdir):
    board = load_storyboard(workdir / "storyboard.json")
    settings = RenderSettings(size=(64, 64))
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    return schedule, list(video_frames(board, schedule, Workdir(workdir), settings))


def file_states(folder):
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}


@pytest.mark.slow
def test_keyframes_land_on_their_frames_and_the_frames_between_are_not_the_slerp_walk(renders):
    _, folder = renders
    assert probe(folder / "video.mp4")["frames"] == 60
    schedule, frames = frames_of(folder / "video")
    _, slerped = frames_of(folder / "slerp")
    morphs = [segment for segment in schedule.segments if segment.target is not None]
    assert morphs
    for segment in schedule.segments:
        keyframe = load_picture(Workdir(folder / "video").keyframe(segment.scene))
        assert np.array_equal(frames[segment.first], keyframe)
        assert np.array_equal(keyframe, slerped[segment.first])  # the same keyframes, drawn by SD
    between = [k for segment in morphs for k in range(segment.first + 1, segment.end)]
    differences = [np.abs(frames[k].astype(int) - slerped[k]).mean() for k in between]
    assert min(differences) > 5  # every frame between is the video model's, none the slerp walk's
    # and a transition moves: its frames are not all one picture
    first = morphs[0]
    assert not np.array_equal(frames[first.first + 1], frames[first.end - 1])


@pytest.mark.slow
def test_a_rerun_draws_nothing_and_a_killed_one_redraws_only_its_unfinished_transition(renders, tmp_path):
    song, folder = renders
    workdir = shutil.copytree(folder / "video", tmp_path / "w")
    before = file_states(workdir / "frames")
    assert render(song, workdir, "--transitions", "video", "-o", tmp_path / "again.mp4") == 0
    assert json.loads((workdir / "timings.json").read_text())["pictures_drawn"] == 0
    assert file_states(workdir / "frames") == before
    # a render killed in the middle of writing one transition's frames
    schedule, _ = frames_of(workdir)
    second = [segment for segment in schedule.segments if segment.target is not None][1]
    lost = [f"{k:06d}.png" for k in range(second.first + 1, second.end)][::2]
    for name in lost:
        (workdir / "frames" / name).unlink()
    assert render(song, workdir, "--transitions", "video", "-o", tmp_path / "resumed.mp4") == 0
    after = file_states(workdir / "frames")
    assert json.loads((workdir / "timings.json").read_text())["pictures_drawn"] == len(lost)
    assert {name for name in before if after[name] != before[name]} == set(lost)
    assert all(after[name][1] == before[name][1] for name in lost)  # drawn again to the same bytes


@pytest.mark.slow
def test_an_edited_scene_redraws_only_the_transitions_that_touch_it(renders, tmp_path):
    song, folder = renders
    workdir = shutil.copytree(folder / "video", tmp_path / "w")
    before = {p.name: stored_key(p) for p in (workdir / "frames").iterdir()}
    board = json.loads((workdir / "storyboard.json").read_text())
    board["scenes"][2]["prompt"] = "a lighthouse made of glass"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(board))
    assert render(song, workdir, "--transitions", "video", "--storyboard", edited, "-o", tmp_path / "b.mp4") == 0
    after = {p.name: stored_key(p) for p in (workdir / "frames").iterdir()}
    schedule = frame_schedule([s["start"] for s in board["scenes"]], board["audio"]["duration"], 10)
    touching = {
        f"{k:06d}.png"
        for segment in schedule.segments
        if segment.target is not None and 2 in (segment.scene, segment.target)
        for k in range(segment.first + 1, segment.end)
    }
    assert touching and {name for name in before if after[name] != before[name]} == touching
