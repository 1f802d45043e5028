"""Camera moves and pulse (musicvid.pictures.camera): a zoom or pan leaves each keyframe whole and glides through
it, and the pulse accents strong beats and nothing in silence."""

import math

import numpy as np
import pytest

from musicvid.core.audio import find_beats
from musicvid.pictures import camera
from musicvid.pictures.pacing import accent_per_frame
from musicvid.pictures.schedule import frame_schedule, to_frame
from tests.helpers import click_track


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
