"""The page's language control: Whisper's languages by name after "detect", its choice handed to the request's
--language and resolved there as the command line's is, and refused on the page in one sentence, by its label. The
page's functions are called directly: no server."""

import asyncio
import threading
from types import SimpleNamespace

import gradio as gr
import pytest

from musicvid.lyrics.languages import language_code
from musicvid.models.internals import whisper_languages
from musicvid.storyboard.board import parse_storyboard
from tests.helpers import make_tone, valid_board
from tests.test_page_inputs import SESSION, page_values
from ui import handlers
from ui.app import page_events, song_inputs
from ui.config import UIConfig
from ui.jobs import Jobs


def test_the_control_offers_detect_then_every_language_whisper_takes_by_name():
    control = song_inputs()["language"]()
    names = [name for name, _ in control.choices]
    assert control.value == names[0] == "detect" and "Polish" in names and "Castilian" in names
    assert {language_code(name) for name in names[1:]} == set(whisper_languages().values())  # every one, by name
    assert names[1:] == sorted(names[1:]) and all(name != language_code(name) for name in names[1:])  # names alone


def test_the_choice_reaches_the_request_and_detect_means_none(tmp_path, monkeypatch):
    jobs, asked = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs")), []

    def get_storyboard(request, registry, stop):
        asked.append(request.language)
        return parse_storyboard(valid_board()), None, None

    monkeypatch.setattr(handlers, "get_storyboard", get_storyboard)
    # (timed lyrics: the tiny preset's English-only Whisper does not hear the song, and refuses no language)
    timed = "[00:00.50]widzę światło\n"
    for chosen in ("Polish", "pl", "detect"):  # (a code may be typed: the control takes what it does not list)
        handlers.make_storyboard(jobs, page_values(language=chosen, lyrics=timed), SESSION, threading.Event())
    assert asked == ["Polish", "pl", None]  # resolved by prepare, as --language and a batch's column are


@pytest.mark.parametrize(
    "chosen, said",
    [
        ("Polish", '"Language sung" pl needs a Whisper that hears more than English, and tiny-random hears English'),
        ("Klingon", '"Language sung" must be one of Whisper\'s language codes or names (e.g. en, pl, it, pt, ja, or'),
    ],
)
def test_a_language_the_models_cannot_hear_is_refused_on_the_page_in_one_sentence(tmp_path, monkeypatch, chosen, said):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    monkeypatch.setattr(jobs, "new", lambda *job: pytest.fail("the song was copied before the language was checked"))
    song = make_tone(tmp_path / "song.wav", 1)
    values, before = page_values(upload=str(song), language=chosen), set(jobs.root.iterdir())
    page = {name: f"<{name}>" for name in values} | {"language": song_inputs()["language"]()}  # its label, as wired
    event = page_events(jobs, page)(handlers.make_storyboard)
    with pytest.raises(gr.Error) as refused:
        asyncio.run(event({page[name]: value for name, value in values.items()}, SimpleNamespace(session_hash=SESSION)))
    assert refused.value.message.startswith(said) and "\n" not in refused.value.message, refused.value.message
    assert set(jobs.root.iterdir()) == before  # no job made
