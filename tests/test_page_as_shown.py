"""What the page shows is what it renders: a storyboard's table, shown to the hundredth and sent back unedited, gives
back the saved times (a song's end rarely falls on a hundredth), and a person's edit still applies; a Make video
refused or cancelled after its storyboard is made leaves that storyboard to the next Render, which resumes it; and
the page's messages name its controls by their labels, a whole-number control refusing a fraction rather than
rounding it."""

import threading

import gradio as gr
import pandas as pd
import pytest

from musicvid.core.errors import Cancelled, UserError
from musicvid.storyboard.board import load_storyboard, parse_storyboard
from tests.helpers import make_tone
from tests.served_page import controls
from tests.test_page_inputs import SESSION
from tests.test_page_picks import LYRICS, page_values
from ui import handlers
from ui.app import lay_out, words_of
from ui.config import UIConfig
from ui.jobs import Jobs
from ui.table import COLUMNS, apply_edits, rows

UNROUND = 6.0036875  # seconds: 96,059 samples at the 16 kHz songs are decoded at, no whole hundredth
START, END = COLUMNS.index("start"), COLUMNS.index("end")


def unround_board() -> dict:
    return {
        "version": 1,
        "audio": {"duration": UNROUND},
        "scenes": [
            {"index": 0, "kind": "lyric", "start": 0.0, "end": 2.4049375, "text": "a", "prompt": "p", "seed": 1},
            {"index": 1, "kind": "outro", "start": 2.4049375, "end": UNROUND, "text": "", "prompt": "q", "seed": 2},
        ],
    }


def test_a_table_sent_back_as_shown_gives_back_the_saved_times_and_an_edit_applies():
    saved = unround_board()
    shown = rows(parse_storyboard(saved))
    assert [row[END] for row in shown] == [2.4, 6.0]  # as the page shows them
    for sent in (shown, pd.DataFrame(shown, columns=COLUMNS), {"headers": COLUMNS, "data": shown}):
        assert [(s["start"], s["end"]) for s in apply_edits(saved, sent)["scenes"]] == [
            (0.0, 2.4049375),
            (2.4049375, UNROUND),
        ]
    shown[0][END] = shown[1][START] = 3.0  # the person's edit
    assert [(s["start"], s["end"]) for s in apply_edits(saved, shown)["scenes"]] == [(0.0, 3.0), (3.0, UNROUND)]
    shown[1][END] = 5.5  # the last end moved: said as the page shows it (no column holds the song's length)
    with pytest.raises(
        UserError, match=r"^the song's length \(6.0\d*\) is not where the last scene ends \(row 2's end"
    ):
        apply_edits(saved, shown)


def storyboard_of(files: list[str]):
    """The storyboard among a render's downloads."""
    return load_storyboard(next(file for file in files if file.endswith(".json")))


@pytest.mark.slow
@pytest.mark.ci  # (the served page, three presses: its table's rule is the suite's, in the test above)
def test_a_song_of_unround_length_renders_as_the_page_shows_it_and_in_one_go(server, tmp_path, jobs_dir):
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    client, song = Client(server, verbose=False), handle_file(str(make_tone(tmp_path / "song.wav", UNROUND)))
    quick = controls(fps=2)
    table, job, _ = client.predict(song, "", "", LYRICS, *quick, api_name="/make_storyboard")
    assert table["data"][-1][END] == 6.0  # the table's, to the hundredth
    _, files, made, status, _ = client.predict(song, "", "", "", *quick, table, job, api_name="/render")
    saved = storyboard_of(files)
    assert made == job and status.startswith("Done") and saved.scenes[-1].end == UNROUND == saved.duration
    lyric = next(n for n, row in enumerate(table["data"]) if row[2] == "lyric")
    table["data"][lyric][END] = table["data"][lyric + 1][START] = table["data"][lyric][END] + 0.25
    _, files, _, status, _ = client.predict(song, "", "", "", *quick, table, job, api_name="/render")
    edited = storyboard_of(files)
    assert edited.scenes[lyric].end == table["data"][lyric][END] and edited.scenes[-1].end == UNROUND
    _, video, _, _, status = client.predict(song, "", "", LYRICS, *quick, api_name="/make_video")  # no table at all
    assert status.startswith("Done") and video.endswith(".mp4")
    # a refusal in the page's words: the control's label, and a fraction refused rather than rounded
    with pytest.raises(AppError, match='^"Seed" must be a whole number, not 1.5$'):
        client.predict(song, "", "", "", *controls(seed=1.5), api_name="/make_storyboard")


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.parametrize("stopped", ["refused", "cancelled"])
def test_a_make_video_stopped_after_its_storyboard_leaves_it_to_the_next_render(tmp_path, monkeypatch, stopped):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values, stop = page_values(make_tone(tmp_path / "song.wav", UNROUND), keyframe_candidates=1), threading.Event()

    def refusing(*args, **kwargs):  # the render, once the storyboard is made
        raise UserError("refused by the render")

    render = handlers.make_video
    monkeypatch.setattr(handlers, "make_video", refusing)
    if stopped == "cancelled":  # the Cancel comes as the storyboard is finished
        made = handlers.storyboard_job
        monkeypatch.setattr(handlers, "storyboard_job", lambda *args, **kwargs: (made(*args, **kwargs), stop.set())[0])
    with pytest.raises((UserError, Cancelled), match="refused by the render|cancelled"):
        handlers.video_in_one_go(jobs, values, SESSION, stop)
    [job] = [path.name for path in jobs.root.iterdir()]
    monkeypatch.setattr(handlers, "make_video", render)
    monkeypatch.setattr(
        handlers, "get_storyboard", lambda *args, **kwargs: pytest.fail("the storyboard was made again")
    )
    _, _, resumed, status, _ = handlers.render(jobs, values, SESSION, threading.Event())  # the page sent no job
    assert resumed == job and status.startswith("Done") and [p.name for p in jobs.root.iterdir()] == [job]


def test_the_pages_messages_name_its_controls_by_their_labels_and_a_whole_number_takes_no_fraction(tmp_path):
    with gr.Blocks():
        page = lay_out(UIConfig(models="tiny"))
    in_page_words = words_of(page)
    assert in_page_words("--style is 1,001 characters long") == '"Style" is 1,001 characters long'
    said = "--lora a.safetensors: its weight must be from -2 to 2; --fast-lora and --lora-dir are no controls"
    assert in_page_words(said) == (
        '"Style LoRAs and their weights" a.safetensors: its weight must be from -2 to 2; --fast-lora and --lora-dir '
        "are no controls"
    )
    assert in_page_words("--keyframe-candidates must be") == '"Keyframe candidates" must be'
    # a program's 2.5 reaches the handlers as sent (Gradio would round it with precision=0), and is refused there
    for name in ("steps", "seed", "keyframe_candidates", "scene"):
        assert page[name].preprocess(2.5) == 2.5, name
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    for name, value in (("steps", 2.5), ("seed", 1.5), ("keyframe_candidates", float("nan"))):
        with pytest.raises(UserError) as refused:
            handlers.make_storyboard(
                jobs, page_values(tmp_path / "song.wav", **{name: value}), SESSION, threading.Event()
            )
        option = name.replace("_", "-")
        assert str(refused.value) == f"--{option} must be a whole number, not {value}"
    for name, value, said in (("size", "abc", "must look like 512x512, got 'abc'"), ("reroll_below", "x", "must be a")):
        with pytest.raises(UserError) as refused:  # (typed into their boxes: each was named as a CSV column, size)
            handlers.make_storyboard(
                jobs, page_values(tmp_path / "song.wav", **{name: value}), SESSION, threading.Event()
            )
        assert str(refused.value).startswith(f"--{name.replace('_', '-')} {said}"), refused.value
    with pytest.raises(UserError, match=r"^--models must be one of default, .*, not \['tiny'\]$"):  # (an API's list)
        handlers.make_storyboard(jobs, page_values(tmp_path / "song.wav", preset=["tiny"]), SESSION, threading.Event())
    assert list(jobs.root.iterdir()) == []
    with pytest.raises(UserError, match="^there is no scene 1.5: click a keyframe"):
        handlers.changed_scene(unround_board(), 1.5, lambda song: ("seed", 3), tmp_path / "song.wav")
