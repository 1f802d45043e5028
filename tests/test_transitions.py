"""--transitions video: the frames between keyframes drawn by a video model (LTX-Video; the tiny one here)."""

import itertools
import json
import shutil

import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.pictures.cache import load_picture, stored_key
from musicvid.pictures.frames import video_frames
from musicvid.pictures.schedule import Segment, frame_schedule
from musicvid.pictures.transitions import by_video, clip_frames, clip_index, clip_rate, clip_span, transition_prompt
from musicvid.settings.geometry import drawn_size
from musicvid.settings.presets import PRESETS, VIDEO_FAMILIES
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import check_used, resolve_render_settings
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, probe, render, run


@pytest.mark.parametrize("name", list(VIDEO_FAMILIES))
def test_a_clip_spans_its_morph_and_the_next_keyframe_on_its_familys_frames(name):
    family = VIDEO_FAMILIES[name]
    for fps, length in itertools.product((10.0, 12.5, 24.0), range(1, 300)):
        frames, span = clip_frames(length, fps, family), clip_span(length, fps, family)
        assert (frames - 1) % family.frame_step == 0 and span <= frames - 1 < span + family.frame_step
        assert clip_index(0.0, frames) == 0 and clip_index(1.0, frames) == frames - 1
        if not by_video(Segment(0, 1, 0, length), fps, family):
            assert length < 2 or frames > family.max_frames  # left to the slerp walk
            continue
        # in-between frames land inside the clip, in order, each its own where the clip has frames enough
        places = [clip_index(k / length, frames) for k in range(1, length)]
        assert places == sorted(places) and all(0 < p < frames - 1 for p in places)
        assert len(set(places)) == len(places) or frames - 1 < length
    # the last keyframe's scene holds it: no morph
    assert not by_video(Segment(0, None, 0, 50), 10.0, family)


def test_each_family_draws_its_clips_at_its_own_rate_and_size():
    ltx, wan = VIDEO_FAMILIES["ltx-video"], VIDEO_FAMILIES["wan"]
    # a 5 s morph at 10 fps: LTX draws 57 frames for about 11 fps, Wan 81 at its 16
    assert (clip_frames(50, 10.0, ltx), clip_rate(50, 10.0, ltx)) == (57, 11)
    assert (clip_frames(50, 10.0, wan), clip_rate(50, 10.0, wan)) == (81, 16)
    # a morph longer than 5.06 s is longer than Wan's 81 frames, one of 12.1 s at 10 fps than LTX's 121
    assert by_video(Segment(0, 1, 0, 50), 10.0, wan) and not by_video(Segment(0, 1, 0, 51), 10.0, wan)
    assert by_video(Segment(0, 1, 0, 120), 10.0, ltx) and not by_video(Segment(0, 1, 0, 121), 10.0, ltx)
    assert drawn_size((704, 384), 32) == (704, 384) and drawn_size((500, 300), 32) == (480, 288)
    assert drawn_size((500, 300), wan.size_step) == (496, 288) and drawn_size((8, 8), 32) == (32, 32)
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


@pytest.mark.parametrize(
    "options, said",
    [
        (["--transition-steps", "10"], "--transition-steps only acts with --transitions video"),
        (
            ["--no-align", "--align-chunk", "8"],
            "--align-chunk only acts with the alignment (the default; not --no-align)",
        ),
    ],
)
def test_a_setting_no_song_of_the_run_uses_is_refused_before_any_work(capsys, tmp_path, options, said):
    song = make_tone(tmp_path / "song.wav", 1)
    for command in ("render", "plan"):
        code, _, err = run(capsys, command, song, "--models", "tiny", *options, "--workdir", tmp_path / "w")
        assert code == 2 and err == f"musicvid: {said}: give both, or neither\n", command
    assert not (tmp_path / "w").exists()
    # a batch's row that uses it (a CSV cell --transitions video) is enough
    check_used({"transition_steps": 10}, [RenderSettings(), RenderSettings(transitions="video")])


@pytest.mark.parametrize("options", [["--transitions", "video"], ["--transitions", "video", "--transition-steps", "4"]])
def test_how_the_frames_between_are_drawn_is_refused_beside_a_preview_which_draws_none(capsys, tmp_path, options):
    song = make_tone(tmp_path / "song.wav", 1)
    for command in ("render", "plan"):
        argv = [command, song, "--models", "tiny", "--preview", *options, "--workdir", tmp_path / "w"]
        code, _, err = run(capsys, *argv)
        said = "--transitions only acts where the frames between are drawn, not in a --preview: leave it out"
        assert code == 2 and err == f"musicvid: {said}\n", command
    assert not (tmp_path / "w").exists()
    # a batch's row that draws them uses it
    check_used({"transitions": "video"}, [RenderSettings(preview=True), RenderSettings(transitions="video")])


@pytest.fixture(scope="module")
def renders(tmp_path_factory, tone_render):
    """One song rendered with video transitions (the tiny models); its slerp render is conftest's tone_render."""
    folder = tmp_path_factory.mktemp("transitions")
    song = tone_render / "song.mp3"
    assert render(song, folder / "video", "--transitions", "video", "-o", folder / "video.mp4") == 0
    return song, folder


def frames_of(workdir):
    board = load_storyboard(workdir / "storyboard.json")
    settings = RenderSettings(size=(64, 64))
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    return schedule, list(video_frames(board, schedule, Workdir(workdir), settings))


def file_states(folder):
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}


@pytest.mark.slow
def test_keyframes_land_on_their_frames_and_the_frames_between_are_not_the_slerp_walk(renders, tone_render):
    _, folder = renders
    assert probe(folder / "video.mp4")["frames"] == 60
    schedule, frames = frames_of(folder / "video")
    _, slerped = frames_of(tone_render / "w")
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
