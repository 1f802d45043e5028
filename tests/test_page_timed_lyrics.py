"""Timed lyrics pasted on the page time its captions as the command line's --lyrics does: each line on screen while
it is sung, each karaoke word at the file's time (a probe's finding: the page rendered its storyboard without the
pasted file, so karaoke words were shared out by their letters and a line stayed up for its whole scene). Driven
through the page's handlers, as its buttons call them, with the tiny models."""

import re
import threading

import pytest

from tests.helpers import make_tone
from tests.test_page_inputs import SESSION
from tests.test_page_picks import page_values
from ui import handlers
from ui.config import UIConfig
from ui.jobs import Jobs

ENHANCED = (  # the first line sung 1.0-2.2 s; its scene lasts to 4.5 s
    "[00:01.00]<00:01.00>the <00:01.20>sky <00:01.40>is <00:01.60>burning <00:02.20>\n"
    "[00:04.50]<00:04.50>rivers <00:04.70>made <00:04.90>of <00:05.10>glass <00:05.60>\n"
)


def shown(video: str, suffix: str) -> str:
    with open(re.sub(r"\.mp4$", suffix, video), encoding="utf-8") as file:
        return file.read()


@pytest.mark.slow
def test_pasted_timed_lyrics_time_the_pages_line_captions_and_karaoke_words(tmp_path):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    song = make_tone(tmp_path / "song.wav", 12.0)
    quick = dict(lyrics=ENHANCED, preview=True, size="64x64", steps=2, keyframe_candidates=1)
    values = page_values(song, captions="line", **quick)
    _, video, _, job, _ = handlers.video_in_one_go(jobs, values, SESSION, threading.Event())
    first_cue = shown(video, ".srt").split("\n\n")[0]
    assert "00:00:01,000 --> 00:00:02,700" in first_cue, first_cue  # sung to 2.2 s, held 0.5 s: not to 4.5 s
    karaoke = page_values(song, captions="karaoke", job=job, **quick)
    video, *_ = handlers.render(jobs, karaoke, SESSION, threading.Event())
    assert r"{\kf20}the {\kf20}sky {\kf20}is {\kf60}burning" in shown(video, ".ass")  # the file's word times


def test_a_render_of_the_pages_storyboard_reads_the_pasted_lyrics_only_where_they_are_timed(tmp_path):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    song = tmp_path / "jobs" / "0123456789ab" / "song" / "song.wav"
    song.parent.mkdir(parents=True)
    for text, read in (("the sky is burning\n", False), (ENHANCED, True)):
        for old in (song.parent.parent / "lyrics").glob("*"):
            old.unlink()
        pasted = jobs.lyrics(song, text)
        assert jobs.timed_lyrics(song) == (pasted if read else None)
    assert jobs.timed_lyrics(tmp_path / "jobs" / "fedcba987654" / "song" / "song.wav") is None  # none pasted
