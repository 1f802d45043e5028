"""The page's text as a visitor gives it: every text field bounded on the server as in the browser, pasted lyrics read
whole or refused (a timed line among untimed ones, a time the LRC reader cannot read), and a refused Pin picture
leaves no upload behind. Refused before a job is made; the page's functions are called directly: no server."""

import json
import threading

import pytest

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.storyboard.board import load_storyboard
from tests.helpers import valid_board
from tests.test_page_inputs import SESSION, page_values, render_job
from ui import handlers
from ui.config import UIConfig
from ui.jobs import Jobs
from ui.loras import LORA_BOX_CHARACTERS
from ui.table import rows


@pytest.fixture
def jobs(tmp_path) -> Jobs:
    return Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))


@pytest.mark.parametrize("field", ["title", "artist", "style", "lora"])
def test_the_pages_text_fields_are_bounded_before_a_job_is_made(jobs, field):
    with pytest.raises(UserError) as refused:
        handlers.make_storyboard(jobs, page_values(**{field: "x" * 10_000_000}), SESSION, threading.Event())
    limit = f"{LORA_BOX_CHARACTERS:,}" if field == "lora" else f"{MAX_TEXT_CHARS:,}"
    said = "the style LoRAs' box holds" if field == "lora" else f"--{field} is"
    assert str(refused.value) == f"{said} 10,000,000 characters{' long' * (field != 'lora')}; the limit is {limit}"
    assert list(jobs.root.iterdir()) == []


@pytest.mark.parametrize(
    "pasted, said",
    [
        ("the sky is burning\n[00:04.00]rivers made of glass\nand the night", r"line 1 \(the sky is burning\) has no"),
        ("[00:01.00]the sky\n\n[Chorus]\nrivers made of glass\n", r"line 4 \(rivers made of glass\) has no time"),
        ("[00:01.00]the sky\n[00:05,5x]rivers\n", r"line 2: \[00:05,5x\] is no time"),
        ("[-00:01.00]the sky\nrivers\n", r"line 1: \[-00:01.00\] is a time before the song starts"),
    ],
)
def test_pasted_lyrics_the_lrc_reader_cannot_read_whole_are_refused_before_a_job_is_made(jobs, pasted, said):
    with pytest.raises(UserError, match=f"^the pasted lyrics {said}"):
        handlers.make_storyboard(jobs, page_values(lyrics=pasted), SESSION, threading.Event())
    assert list(jobs.root.iterdir()) == []


def test_pasted_lyrics_all_timed_are_lrc_and_all_untimed_are_plain(tmp_path):
    (tmp_path / "job" / "song").mkdir(parents=True)
    song = tmp_path / "job" / "song" / "s.mp3"
    assert Jobs.lyrics(song, "[ar:Band]\n[00:01.00]the sky\n\n[Chorus]\n[00:04,50]rivers\n").suffix == ".lrc"
    assert Jobs.lyrics(song, "[Verse 1]\nthe sky is burning\n[1. Refrain] rivers\n").suffix == ".txt"
    # an SRT's cues pasted are the SRT they are, and one the SRT reader cannot read is refused before a job is made
    cues = "1\n00:00:01,000 --> 00:00:03,000\nthe sky\n\n2\n00:00:04,000 --> 00:00:06,000\nrivers\n"
    assert Jobs.lyrics(song, cues).suffix == ".srt"
    with pytest.raises(UserError, match="^the pasted lyrics"):
        Jobs.lyrics(song, cues.replace("00:00:04,000", "00:00:0x,000"))


@pytest.mark.parametrize("scene, table", [(2, None), (-1, None), (None, None), ("x", None), (0, "a row short")])
def test_a_refused_pin_leaves_no_upload_behind(jobs, tmp_path, scene, table):
    from PIL import Image

    job = render_job(jobs)
    board = valid_board()
    (jobs.root / job / "work" / "storyboard.json").write_text(json.dumps(board))
    (tmp_path / "gradio").mkdir()
    Image.new("RGB", (16, 16), "red").save(upload := tmp_path / "gradio" / "pin.png")
    shown = rows(load_storyboard(jobs.root / job / "work" / "storyboard.json"))[:-1] if table else None
    values = page_values(job=job, scene=scene, pin_upload=str(upload), table=shown)
    for _ in range(3):  # each refused press, as many as are made
        with pytest.raises(UserError, match="there is no scene|must keep one row per scene"):
            handlers.pin_picture(jobs, values, SESSION, threading.Event())
    assert list((jobs.root / job / "pins").iterdir()) == [] and upload.exists()
