"""The page's controls and fields as its events call them, no server: a look sets its controls and
they reach the settings, pasted lyrics are kept as what they are, a lyric the person edited is no longer in
doubt, and a job that ran out of memory or disk says so."""

import errno
import threading

import pytest

from musicvid.core.errors import UserError, out_of_memory
from tests.test_page_inputs import SESSION, page_values, render_job
from ui import handlers
from ui.config import UIConfig
from ui.jobs import Jobs


def test_a_look_sets_its_controls_and_they_reach_the_settings():
    from ui.controls import chosen, followed, shown_controls

    shown = shown_controls("tiny")
    values = {"preset": "tiny", **shown, "look": "music-video"}
    changes, now = followed(values, shown)
    look = dict(captions="karaoke", aspect="16:9", pacing="beats", output_fps="30", resolution="1080p")
    assert changes == {**look, "size": "88x48"}  # the shape's size follows
    values.update(changes, motion="pan", pulse=0.3, preview=True)
    settings = chosen(values)
    assert (settings.output_fps, settings.fps, settings.video_size, settings.motion, settings.pulse) == (
        30,
        10,
        (1920, 1080),
        "pan",
        0.3,
    )
    assert settings.preview and settings.captions == "karaoke"
    # no look: its controls show the settings' defaults again
    back, _ = followed({**values, "look": ""}, now)
    assert back == dict(captions="none", aspect="", pacing="linear", output_fps="", resolution="", size="64x64")
    # the drawn rate left as shown follows the video's, where a person's own stays
    rates = {rate: chosen({"preset": "tiny", **shown, "output_fps": rate}).fps for rate in ("24", "60", "")}
    assert rates == {"24": 12, "60": 10, "": 10} and chosen({"preset": "tiny", **shown, "fps": 7}).fps == 7
    # fast drawing: its steps and guidance fill the controls, and the full sampler's come back without it
    full = {"preset": "default", **shown_controls("default")}
    fast, _ = followed({**full, "fast": True}, shown_controls("default"))
    assert (fast["steps"], fast["guidance"]) == (4, 1.0)
    settings = chosen({**full, **fast, "fast": True})
    assert settings.fast and (settings.steps, settings.guidance) == (4, 1.0)
    back, _ = followed({**full, **fast, "fast": False}, shown_controls("default", fast=True))
    assert (back["steps"], back["guidance"]) == (25, 7.5)
    # what the person typed stays theirs
    assert "steps" not in followed({"preset": "tiny", **shown, "steps": 3, "fast": True}, shown)[0]


def test_pasted_lyrics_are_kept_as_what_they_are(tmp_path):
    (tmp_path / "song").mkdir()
    song = tmp_path / "song" / "song.mp3"
    assert Jobs.lyrics(song, " \n\n") is None
    assert Jobs.lyrics(song, "[00:05.00]My heart is a lighthouse\n").name == "lyrics.lrc"
    assert Jobs.lyrics(song, "My heart is a lighthouse\n").name == "lyrics.txt"
    assert [p.name for p in song.parent.iterdir()] == []  # the song's folder holds only the song


def test_a_lyric_the_person_edited_is_no_longer_in_doubt():
    from ui.table import apply_edits

    saved = {
        "version": 1,
        "audio": {"duration": 10.0},
        "scenes": [
            {
                "index": 0,
                "kind": "lyric",
                "start": 0.0,
                "end": 5.0,
                "text": "misheard",
                "prompt": "a",
                "seed": 1,
                "confidence": 0.2,
            },
            {
                "index": 1,
                "kind": "lyric",
                "start": 5.0,
                "end": 10.0,
                "text": "unsure",
                "prompt": "b",
                "seed": 2,
                "confidence": 0.3,
            },
        ],
    }
    edited = apply_edits(
        saved, [[0.0, 5.0, "lyric", "heard right", "a", "", ""], [5.0, 10.0, "lyric", "unsure", "c", "", ""]]
    )
    assert [s.get("confidence") for s in edited["scenes"]] == [None, 0.3]


def test_a_job_that_runs_out_of_memory_or_disk_says_so_and_lets_go_of_the_models(tmp_path, monkeypatch):
    """A render that fails for want of memory or of disk is the page's message in the sentence the command line says
    it in, not a bare MemoryError or OSError; the next job gets the models. Any other failure is left as it is."""
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values = page_values(job=render_job(jobs))
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / ".musicvid-42.video.mp4.k3j5h2g1.wav"))
    failures = iter([MemoryError(), full, ValueError("a bug")])

    def make_video(*args, **kwargs):
        raise next(failures)

    monkeypatch.setattr(handlers, "make_video", make_video)
    with pytest.raises(UserError) as said:
        handlers.render(jobs, values, SESSION, threading.Event())
    assert str(said.value) == str(out_of_memory(MemoryError())) and "ran out of" in str(said.value)
    with pytest.raises(UserError, match=f"^the disk is full, where {tmp_path / 'video.mp4'} was being written;"):
        handlers.render(jobs, values, SESSION, threading.Event())
    with pytest.raises(ValueError, match="^a bug$"):
        handlers.render(jobs, values, SESSION, threading.Event())
    assert jobs.models_lock.acquire(blocking=False)
