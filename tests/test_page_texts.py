"""The page's text as a visitor gives it: every text field bounded on the server as in the browser, pasted lyrics read
whole or refused (a timed line among untimed ones, a time the LRC reader cannot read) and named in the page's messages
as the box they were pasted into, and a refused Pin picture leaves no upload behind. Refused before a job is made; the
page's functions are called directly: no server."""

import json
import threading
from types import SimpleNamespace

import pytest

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.core.workdir import Workdir
from musicvid.lyrics.known import check_kind, check_line_count, check_lyrics_file, read_plain_lyrics
from musicvid.storyboard.board import load_storyboard, parse_storyboard
from tests.helpers import valid_board
from tests.test_lyrics_leftovers import PAST_THE_END
from tests.test_page_inputs import SESSION, page_values, render_job
from ui import handlers
from ui.app import song_inputs
from ui.config import UIConfig
from ui.jobs import PASTED, Jobs
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
    with pytest.raises(UserError, match=f'^"Lyrics" {said}'):
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
    with pytest.raises(UserError, match='^"Lyrics"'):
        Jobs.lyrics(song, cues.replace("00:00:04,000", "00:00:0x,000"))
    # a transcript's JSON pasted is the transcript it is
    line = {"start": 1, "end": 3, "text": "the sky"}
    assert Jobs.lyrics(song, json.dumps({"lines": [line], "language": "en"}, indent=2)).suffix == ".json"


def test_a_storyboard_pasted_as_lyrics_is_said_to_be_one_before_a_job_is_made(jobs):
    pasted = json.dumps(valid_board(), indent=2)
    with pytest.raises(UserError, match='^"Lyrics" holds a storyboard, not lyrics: the page makes its own'):
        handlers.make_storyboard(jobs, page_values(lyrics=pasted), SESSION, threading.Event())
    assert list(jobs.root.iterdir()) == []


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
    assert not any((jobs.root / job).glob("pins/*")) and upload.exists()  # (its scene checked before it is kept)


# Each kind of message musicvid gives of a lyrics file, as the page shows it of the pasted lyrics' file: (its name in
# the job's lyrics folder, what it holds, the check that refuses it, how the page's message begins)
ABOUT_THE_FILE = {
    "no lines": ("lyrics.txt", "[Chorus]\n", lambda path: read_plain_lyrics(check_lyrics_file(path)), "has no lines"),
    "no times": ("lyrics.lrc", "words without times\n", check_lyrics_file, "has no times: an LRC line"),
    "no cue times": ("lyrics.srt", "My heart\n\nYour voice\n", check_lyrics_file, "has no cue times"),
    "too long": ("lyrics.txt", "x" * 100_001, check_lyrics_file, "is over 100,000 characters"),
    "not UTF-8": ("lyrics.txt", b"\xc3\x28", check_lyrics_file, "is not UTF-8 text"),
    "UTF-16": ("lyrics.txt", "hi\n".encode("utf-16-le"), check_lyrics_file, "holds NUL bytes: it is UTF-16 without"),
    "UTF-32": ("lyrics.txt", "hi\n".encode("utf-32"), check_lyrics_file, "is UTF-32 text, which musicvid does not"),
    "kind": ("lyrics.doc", "words\n", check_kind, "must be .lrc, .srt"),
    "a line": ("lyrics.txt", "a bell \x07\n", check_lyrics_file, "line 1 holds a control character"),
    "too many lines": ("lyrics.txt", "", lambda path: check_line_count(400, 30.0, path), "has 400 lines, more than"),
}


@pytest.mark.parametrize("name, held, check, said", ABOUT_THE_FILE.values(), ids=list(ABOUT_THE_FILE))
def test_the_page_names_the_pasted_lyrics_file_as_its_box_and_its_messages_read_as_written(
    jobs, name, held, check, said
):
    # the box by its label's word, one box: "has", "is" as musicvid writes them of one file
    assert PASTED == f'"{song_inputs()["lyrics"].keywords["label"].split(" (")[0]}"'
    (path := jobs.root / "0123456789ab" / "lyrics" / name).parent.mkdir(parents=True)
    path.write_bytes(held if isinstance(held, bytes) else held.encode())
    with pytest.raises(UserError) as refused:
        check(path)
    assert jobs.as_pasted(str(refused.value)).startswith(f"{PASTED} {said}")


@pytest.mark.parametrize("press", [handlers.render, handlers.keyframes])
def test_render_or_draw_keyframes_that_make_the_storyboard_note_what_it_leaves_out_of_the_pasted_lyrics(
    jobs, tmp_path, monkeypatch, press
):
    made = parse_storyboard(valid_board())  # of a 10 s song, as Make storyboard's note test makes it
    monkeypatch.setattr(handlers, "get_storyboard", lambda *args, **kwargs: (made, None, None))
    monkeypatch.setattr(handlers, "render_job", lambda *args: ("song.mp4", [], handlers.DONE, rows(made)))
    monkeypatch.setattr(handlers, "edited_request", lambda *args: (None, None))
    drawn = SimpleNamespace(storyboard=made, scenes=[], contact_sheet="", workdir=Workdir(tmp_path), pictures_drawn=0)
    monkeypatch.setattr(handlers, "make_keyframes", lambda *args, **kwargs: drawn)
    note = f"{PASTED}: 1 line starts at or after the song's end (10.0 s) and is left out"
    status = press(jobs, page_values(lyrics=PAST_THE_END), SESSION, threading.Event())[3]  # no storyboard yet
    assert status.endswith(f"\n\n**Note:** {note}.")
    # pressed again, on the storyboard now on the page (made before, and noted then), or with every line in the song
    assert "Note" not in press(jobs, page_values(lyrics=PAST_THE_END), SESSION, threading.Event())[3]
    inside = page_values(lyrics=PAST_THE_END.replace("09:00", "00:09"))
    assert "Note" not in press(jobs, inside, "another-browser", threading.Event())[3]
