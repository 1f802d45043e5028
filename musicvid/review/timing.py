"""A finished render's timing against its song, for its report (musicvid.review.score): the times its pictures change
against the song's onsets, and each lyric scene's start against its line's in transcript.json."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256
from musicvid.core.outputs import changed_since_written
from musicvid.core.workdir import Workdir
from musicvid.lyrics.transcript import Transcript
from musicvid.pictures.schedule import FrameSchedule
from musicvid.storyboard.board import Storyboard

CHANCE_STEP = 0.01  # s between the evenly spread times of the chance baseline


def onset_times(samples: np.ndarray) -> np.ndarray:
    import librosa

    from musicvid.core.audio import BEAT_HOP, SAMPLE_RATE, find_beats
    from musicvid.core.kernels import kernels_compiled

    envelope = find_beats(samples).onset
    with kernels_compiled("onsets"):
        return librosa.onset.onset_detect(onset_envelope=envelope, sr=SAMPLE_RATE, hop_length=BEAT_HOP, units="time")


def song_onsets(storyboard: Storyboard, source: str) -> np.ndarray | str:
    """The onsets of the song the storyboard records, or why there are none. Read before the scorer loads: a
    storyboard whose duration is not its song's (`source`, edited) is refused as render refuses it, before its
    duration sizes the frame schedule."""
    from musicvid.core.audio import load_audio
    from musicvid.storyboard.make import check_matches_audio

    song = Path(storyboard.audio.path or "")
    if not song.is_file() or file_sha256(song) != storyboard.audio.sha256:
        return f"the song rendered is not at {song}"
    audio = load_audio(song)
    check_matches_audio(storyboard, song, audio.info.duration, source)
    onsets = onset_times(audio.samples)
    return onsets if onsets.size else "the song has no onsets"


def nearest_distances(times: np.ndarray, onsets: np.ndarray) -> np.ndarray:
    """Each time's distance to its nearest onset (at least one). Sorted and searched, not a times × onsets matrix:
    the chance baseline of a 60-minute song is 360,000 times against thousands of onsets."""
    onsets = np.sort(onsets)
    after = np.searchsorted(onsets, times)
    below = onsets[np.clip(after - 1, 0, onsets.size - 1)]
    above = onsets[np.clip(after, 0, onsets.size - 1)]
    return np.minimum(np.abs(times - below), np.abs(times - above))


def beat_alignment(storyboard: Storyboard, schedule: FrameSchedule, onsets: np.ndarray | str) -> dict[str, Any]:
    """How close the pictures' changes fall to the song's `onsets` (song_onsets: or why there are none)."""
    changes = np.array([segment.first / schedule.fps for segment in schedule.segments[1:]])
    if not changes.size:
        return {"missing": "the pictures never change: one scene is shown"}
    if isinstance(onsets, str):
        return {"missing": onsets}
    distances = nearest_distances(changes, onsets)
    chance = nearest_distances(np.arange(0.0, storyboard.duration, CHANCE_STEP), onsets)
    return {
        "changes": int(changes.size),
        "onsets": int(onsets.size),
        "mean_seconds": float(distances.mean()),
        "within_frame": float(np.mean(distances <= 1 / schedule.fps)),
        "chance_mean_seconds": float(chance.mean()),
        "per_change": [{"time": float(t), "seconds": float(d)} for t, d in zip(changes, distances)],
    }


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def lyric_timing(workdir: Workdir, storyboard: Storyboard) -> dict[str, Any]:
    """Each lyric scene's start against its line's in transcript.json: the line whose words the scene's
    text holds (lines that start together share a scene) that starts nearest to it."""
    if changed_since_written(workdir.transcript, workdir):
        return {"missing": "transcript.json was edited since a run wrote it: no record of what was heard"}
    try:
        lines = Transcript.load(workdir.transcript).lines
    except (OSError, UserError, UnicodeDecodeError):
        return {"missing": "no transcript.json (a render from a timed lyrics file keeps none)"}
    rows, unmatched = [], 0
    for scene in (s for s in storyboard.scenes if s.kind == "lyric"):
        words = _words(scene.text)
        matching = [line for line in lines if _words(line.text) and _words(line.text) in words]
        if not matching:
            unmatched += 1
            continue
        line = min(matching, key=lambda line: abs(line.start - scene.start))
        rows.append({"scene": scene.index, "start": scene.start, "line_start": line.start})
        rows[-1]["offset"] = scene.start - line.start
    offsets = np.abs([row["offset"] for row in rows])
    return {
        "scenes": rows,
        "unmatched": unmatched,
        "mean_abs_offset": float(offsets.mean()) if rows else None,
        "max_abs_offset": float(offsets.max()) if rows else None,
    }
