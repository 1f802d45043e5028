"""The transcript's key knows a vocal separator on this machine by what it holds; a run reads its timed lyrics once,
and says once what the song leaves out of them; the page names pasted lyrics as pasted, and its status says what the
song leaves out of them."""

import asyncio
import dataclasses
import threading
from types import SimpleNamespace

import gradio as gr
import pytest

from musicvid.settings.presets import PRESETS
from musicvid.storyboard.board import parse_storyboard
from musicvid.storyboard.make import get_transcript, transcript_source, word_source
from tests.helpers import make_tone, valid_board
from tests.test_page_inputs import SESSION
from tests.test_page_picks import page_values
from tests.test_storyboard_edits_kept import prepared
from ui import handlers
from ui.app import page_events
from ui.config import UIConfig
from ui.jobs import Jobs
from ui.table import rows

TINY = PRESETS["tiny"]
PAST_THE_END = "[00:01.00]in the song\n[00:02.00]still in it\n[09:00.00]far past\n"


def test_a_separator_on_this_machine_keys_the_transcript_by_what_it_holds(tmp_path):
    folder = tmp_path / "separator"
    folder.mkdir()
    keys = []
    for weights in (b"trained once", b"trained once more"):  # saved over at the same path
        (folder / "model.safetensors").write_bytes(weights)
        keys.append(transcript_source(dataclasses.replace(TINY, separator=str(folder)), True, None))
    assert keys[0] != keys[1] and keys[0].startswith(f"{TINY.asr_backend}:")
    file = tmp_path / "separator.th"
    file.write_bytes(b"one model")
    first = transcript_source(dataclasses.replace(TINY, separator=str(file)), True, None)
    file.write_bytes(b"another model")
    assert transcript_source(dataclasses.replace(TINY, separator=str(file)), True, None) != first
    # a hub name keeps its name, and no separator is in the key of a run that separates nothing
    assert transcript_source(dataclasses.replace(TINY, separator="htdemucs"), True, None).endswith("+vocals:htdemucs")
    assert "vocals" not in transcript_source(dataclasses.replace(TINY, separator=str(file)), False, None)


def test_a_run_fits_its_timed_lyrics_once_and_says_once_what_the_song_leaves_out(tmp_path, caplog):
    (path := tmp_path / "song.lrc").write_text(PAST_THE_END)
    song = make_tone(tmp_path / "song.wav", 10.0)
    for n in range(2):  # a page's process: each run says it
        caplog.clear()
        run = prepared(song, tmp_path / f"work{n}", lyrics_file=path)
        transcript = get_transcript(run)  # the storyboard's
        assert transcript is run.timed_lyrics and word_source(run) is transcript  # the karaoke's: the same reading
        assert [line.text for line in transcript.lines] == ["in the song", "still in it"]
        said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert said == [f"lyrics file {path}: 1 line starts at or after the song's end (10.0 s) and is left out"]


def test_the_pages_messages_name_the_pasted_lyrics_as_pasted(tmp_path):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    song = jobs.root / "0123456789ab" / "song" / "song.wav"
    song.parent.mkdir(parents=True)
    saved = Jobs.lyrics(song, PAST_THE_END)
    assert jobs.as_pasted(f"lyrics file {saved} line 3 has 1,001 words") == '"Lyrics" line 3 has 1,001 words'
    assert jobs.as_pasted(f"the lyrics file {saved}: its times") == '"Lyrics": its times'
    other = tmp_path / "lyrics" / "lyrics.lrc"  # a file of the person's (the command line's), not pasted
    assert jobs.as_pasted(f"lyrics file {other} has") == f"lyrics file {other} has"
    # as wired: the pipeline's refusal of the saved file, on the page
    values = page_values(make_tone(tmp_path / "song.wav", 3.0), lyrics="[09:00.00]far past the song's end\n")
    event = page_events(jobs, {name: f"<{name}>" for name in values})(handlers.make_storyboard)
    with pytest.raises(gr.Error) as refused:
        asyncio.run(
            event({f"<{name}>": value for name, value in values.items()}, SimpleNamespace(session_hash=SESSION))
        )
    assert refused.value.message == '"Lyrics" has no timed lines inside the song\'s 3.0 s'


@pytest.mark.parametrize("press", [handlers.make_storyboard, handlers.video_in_one_go])
def test_the_pages_status_says_what_the_song_leaves_out_of_the_pasted_lyrics(tmp_path, monkeypatch, press):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    made = parse_storyboard(valid_board())  # of a 10 s song: the run's own (its log's warning: above)
    monkeypatch.setattr(handlers, "get_storyboard", lambda *args, **kwargs: (made, None, None))
    monkeypatch.setattr(handlers, "render_job", lambda *args: ("song.mp4", [], handlers.DONE, rows(made)))
    song = make_tone(tmp_path / "song.wav", 1.0)
    status = press(jobs, page_values(song, lyrics=PAST_THE_END), SESSION, threading.Event())[-1]
    note = '"Lyrics": 1 line starts at or after the song\'s end (10.0 s) and is left out'
    assert status.endswith(f"\n\n**Note:** {note}.")
    for inside in (PAST_THE_END.replace("09:00", "00:09"), "plain lines\n"):
        assert "Note" not in press(jobs, page_values(song, lyrics=inside), SESSION, threading.Event())[-1]
