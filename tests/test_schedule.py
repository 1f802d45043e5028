"""The frame schedule: which scene and which t each frame shows."""

import numpy as np
import pytest

from musicvid.pictures.schedule import frame_schedule, to_frame
from tests.helpers import click_track


def test_frame_count_is_duration_times_fps_rounded():
    assert frame_schedule([0.0], 12.34, 10).frame_count == 123
    assert frame_schedule([0.0], 12.35, 10).frame_count == 124
    assert frame_schedule([0.0], 3.0, 24).frame_count == 72


def test_scene_starts_snap_to_the_frame_grid():
    schedule = frame_schedule([0.0, 1.04, 2.06, 4.0], 5.0, 10)
    assert [s.first for s in schedule.segments] == [0, 10, 21, 40]
    assert [s.end for s in schedule.segments] == [10, 21, 40, 50]
    assert to_frame(0.35, 10) == 4  # halves go up, despite 0.35 * 10 = 3.4999…


def test_segments_tile_all_frames():
    schedule = frame_schedule([0.0, 0.73, 3.3, 3.31, 7.9], 9.87, 10)
    covered = [k for s in schedule.segments for k in range(s.first, s.end)]
    assert covered == list(range(schedule.frame_count))


def test_t_runs_from_0_towards_1_within_uneven_scenes():
    schedule = frame_schedule([0.0, 0.4, 1.4], 2.0, 10)
    first, second, last = schedule.segments
    assert [first.t(k) for k in range(first.first, first.end)] == [0.0, 0.25, 0.5, 0.75]
    assert [second.t(k) for k in range(second.first, second.end)] == [k / 10 for k in range(10)]
    assert first.target == 1 and second.target == 2


def test_the_last_scene_holds_its_keyframe():
    schedule = frame_schedule([0.0, 1.0], 3.0, 10)
    last = schedule.segments[-1]
    assert last.target is None and last.end == 30
    assert all(last.t(k) == 0.0 for k in range(last.first, last.end))


def test_a_scene_shorter_than_a_frame_is_skipped_and_the_morph_goes_past_it():
    schedule = frame_schedule([0.0, 1.0, 1.02, 2.0], 3.0, 10)
    assert schedule.shown_scenes == [0, 2, 3]
    assert schedule.segments[0].target == 2
    assert schedule.segments[0].end == 10


def test_a_scene_snapping_to_the_very_end_is_skipped():
    schedule = frame_schedule([0.0, 2.97], 3.0, 10)
    assert schedule.shown_scenes == [0]
    assert schedule.segments[0].target is None


def test_beat_pacing_moves_the_morph_on_the_beats_and_still_lands_on_each_keyframe():
    from musicvid.core.audio import find_beats
    from musicvid.pictures.pacing import motion_per_frame

    fps, duration = 10, 12.0
    samples, beats = click_track(duration, bpm=75)  # a beat every 0.8 s: 8 frames
    frames = to_frame(duration, fps)
    motion = motion_per_frame(find_beats(samples), fps, frames)
    schedule = frame_schedule([0.0, 4.0, 8.3], duration, fps, motion)
    on_beat = {int(np.ceil(b * fps)) for b in beats}  # the frame whose interval holds the beat
    steps = {"on": [], "off": []}
    for segment in schedule.segments[:-1]:
        ts = [segment.t(k) for k in range(segment.first, segment.end)] + [1.0]  # … up to the next keyframe
        assert ts[0] == 0.0 and all(b >= a for a, b in zip(ts, ts[1:]))  # starts on its keyframe, never goes back
        for k, step in zip(range(segment.first + 1, segment.end + 1), np.diff(ts)):
            steps["on" if k in on_beat else "off"].append(step * segment.length)
    # in frames where a beat falls the morph moves several times as far as in the frames between
    assert np.mean(steps["on"]) > 4 * np.mean(steps["off"]) and min(steps["off"]) > 0
    # the next keyframe is where it was: the schedule's frames are those of linear pacing
    linear = frame_schedule([0.0, 4.0, 8.3], duration, fps)
    assert [(s.first, s.end) for s in schedule.segments] == [(s.first, s.end) for s in linear.segments]


def test_beat_pacing_of_silence_is_linear():
    from musicvid.core.audio import find_beats
    from musicvid.pictures.pacing import motion_per_frame

    motion = motion_per_frame(find_beats(np.zeros(16_000 * 3, dtype=np.float32)), 10, 30)
    paced, linear = frame_schedule([0.0, 1.5], 3.0, 10, motion), frame_schedule([0.0, 1.5], 3.0, 10)
    first, plain = paced.segments[0], linear.segments[0]
    assert [first.t(k) for k in range(15)] == pytest.approx([plain.t(k) for k in range(15)])
