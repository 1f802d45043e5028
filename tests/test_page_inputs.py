"""What the page takes from a visitor reaches no file on the server but those it offers: style LoRAs come from
the visitor's uploads or the operator's --lora-dir, by name; a name not offered is refused in one sentence,
whether or not the server holds something of that name, and nothing of that name is opened. Pasted lyrics
and uploaded LoRAs are capped before any work. The page's functions are called directly: no server."""

import argparse
import asyncio
import builtins
import contextlib
import io
import json
import os
import shutil
import threading
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from musicvid.core.assets import DEMO_SONG
from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.lyrics.known import MAX_LYRICS_CHARS
from musicvid.settings.loras import MAX_LORAS, Lora, Loras
from tests.served_page import a_lora, controls, served
from ui import handlers
from ui.config import UIConfig
from ui.controls import shown_controls, summary
from ui.jobs import Jobs
from ui.loras import MAX_LORA_MB, operator_loras

SESSION = "a-browser"
OFFERED = "a.safetensors, b.safetensors, link.safetensors"


@pytest.fixture
def lora_dir(tmp_path) -> Path:
    """The operator's folder: two LoRAs, a link to one of them, a LoRA in a subfolder, a link out of the
    folder (to a LoRA beside it) and a file that is no LoRA; only the first three are offered."""
    folder = tmp_path / "loras"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.safetensors", "b.safetensors", "sub/c.safetensors"):
        a_lora(folder / name, note=name)
    (folder / "notes.txt").write_text("the operator's notes")
    a_lora(tmp_path / "outside.safetensors", note="not the operator's")
    (folder / "link.safetensors").symlink_to(folder / "a.safetensors")
    (folder / "out.safetensors").symlink_to(tmp_path / "outside.safetensors")
    return folder


@pytest.fixture
def jobs(tmp_path, lora_dir) -> Jobs:
    return Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs", lora_dir=lora_dir))


def page_values(**changed) -> dict:
    """The page's values as a visitor leaves them, with the demo song uploaded, but for `changed`."""
    values = {"preset": "tiny", **shown_controls("tiny"), "language": "detect", "context_size": None, "seed": None}
    values["reference"] = None
    values |= dict(upload=str(DEMO_SONG), title="", artist="", lyrics="", lora_upload=None, job="", table=None)
    return values | changed


@contextmanager
def files_touched():
    """Every path this process stats, lists, opens or links through while inside."""
    touched: list[str] = []
    real = {name: getattr(os, name) for name in ("stat", "lstat", "open", "listdir", "scandir", "readlink", "access")}

    def recording(function):
        def recorded(path, *args, **kwargs):
            if not isinstance(path, int):
                touched.append(os.fspath(path))
            return function(path, *args, **kwargs)

        return recorded

    with pytest.MonkeyPatch.context() as patch:
        for name, function in real.items():
            patch.setattr(os, name, recording(function))
        patch.setattr(builtins, "open", recording(builtins.open))
        patch.setattr(io, "open", recording(io.open))
        yield touched


@pytest.fixture
def nothing_loaded(monkeypatch):
    """Whatever reads, hashes or fetches a LoRA fails the test."""

    def forbidden(*args, **kwargs):
        raise AssertionError(f"a LoRA was read: {args}")

    import huggingface_hub

    from musicvid.core import files
    from musicvid.models import drawing

    for module, name in ((drawing, "weights_file"), (drawing, "file_digest"), (files, "file_sha256")):
        monkeypatch.setattr(module, name, forbidden)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", forbidden)


def test_a_name_not_offered_reads_the_same_whether_or_not_the_server_holds_it(jobs, tmp_path, nothing_loaded):
    held = jobs.root / "0123456789ab" / "song" / "song.mp3"  # another visitor's song
    held.parent.mkdir(parents=True)
    held.write_bytes(b"ID3")
    names = [
        "/etc/passwd",  # a file
        "/etc/shadow",  # a file this process may not read
        "/etc",  # a folder
        str(held),  # a file in the jobs' folder
        str(tmp_path / "missing.safetensors"),  # nothing
        "owner/repo",  # a hub repository
        "owner/repo/file.safetensors",  # a hub file
        "../outside.safetensors",  # out of the operator's folder, to a file there
        "sub/c.safetensors",  # in a subfolder of it
        "out.safetensors",  # a link in it that leads out
        str(jobs.config.lora_dir / "a.safetensors"),  # an offered LoRA, by its path
    ]
    jobs_before = set(jobs.root.iterdir())

    def refusals(text: str) -> tuple[str, str, list[str]]:
        """The refusal of Make storyboard, the line under the controls, and the files looked at for them."""
        with files_touched() as touched:
            with pytest.raises(UserError) as refused:
                handlers.make_storyboard(jobs, page_values(lora=text), SESSION, threading.Event())
            line = summary(page_values(lora=text), operator_loras(jobs.config.lora_dir))
        return str(refused.value), line, touched

    refusals("nothing like it")  # (once first: a first call imports what it uses lazily, numba's config among it)
    *_, baseline = refusals("nothing like it")  # what the page looks at for a name nothing could be
    sentences, lines = set(), set()
    for name in names:
        for text in (name, f"{name}:0.5"):
            sentence, line, touched = refusals(text)
            assert touched == baseline, name  # the same files, in the same order, whatever the name
            sentences.add(sentence.replace(repr(name), "NAME"))
            lines.add(line.replace(repr(name), "NAME"))
    assert sentences == {f"style LoRA NAME is not one this page offers: upload it, or choose one of: {OFFERED}"}
    assert lines == {f"Refused: {sentences.pop()}"}
    assert not any(path.startswith(("/etc", str(held.parent), str(tmp_path / "missing"))) for path in baseline)
    assert set(jobs.root.iterdir()) == jobs_before  # refused before a job was made


def test_without_a_lora_folder_the_page_offers_only_uploads_and_says_so_on_the_page(tmp_path, nothing_loaded):
    import gradio as gr

    from ui.app import page_events

    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values = page_values(lora="/etc/passwd:0.5")
    event = page_events(jobs, {name: f"<{name}>" for name in values})(handlers.make_storyboard)  # as wired
    with pytest.raises(gr.Error) as refused:
        asyncio.run(
            event({f"<{name}>": value for name, value in values.items()}, SimpleNamespace(session_hash=SESSION))
        )
    assert refused.value.message == (
        "style LoRA '/etc/passwd' is not one this page offers: upload it (this page offers none of its own)"
    )


def test_the_operator_offers_the_loras_directly_in_the_folder_and_links_that_stay_there(lora_dir):
    a, b = (lora_dir / "a.safetensors").resolve(), (lora_dir / "b.safetensors").resolve()
    assert operator_loras(lora_dir) == {"a.safetensors": a, "b.safetensors": b, "link.safetensors": a}
    assert operator_loras(None) == {} and operator_loras(lora_dir / "gone") == {}


def render_job(jobs: Jobs, song_name: str = "demo.mp3") -> str:
    """A job of this session with its storyboard made: all a render reads of it."""
    job = "0123456789ab"
    song = jobs.root / job / "song" / song_name
    (jobs.root / job / "work").mkdir(parents=True)
    song.parent.mkdir()
    shutil.copyfile(DEMO_SONG, song)
    (jobs.root / job / "work" / "storyboard.json").write_text(json.dumps({"version": 1, "scenes": []}))
    jobs.owners[job] = SESSION
    return job


def rendered_settings(jobs: Jobs, values: dict, monkeypatch):
    """The settings the page's Render hands the render."""
    handed = []

    def make_video(request, settings, registry, output, stop):
        handed.append(settings)
        return SimpleNamespace(
            video=output,
            workdir=SimpleNamespace(storyboard=Path("s.json")),
            subtitles=Path("s.srt"),
            storyboard=SimpleNamespace(scenes=[]),  # (the page's table is made of it)
        )

    monkeypatch.setattr(handlers, "make_video", make_video)
    handlers.render(jobs, values, SESSION, threading.Event())
    return handed[0]


def test_an_uploaded_and_an_offered_lora_reach_the_render_the_upload_kept_in_the_job(jobs, tmp_path, monkeypatch):
    from musicvid.models.drawing import weights_file

    job = render_job(jobs)
    upload = tmp_path / "gradio" / "e3b0c44298fc" / "ink.safetensors"  # as Gradio keeps an upload
    a_lora(upload, note="the visitor's LoRA")
    values = page_values(lora="b.safetensors:0.5\nink.safetensors:-0.3", lora_upload=[str(upload)], job=job)
    settings = rendered_settings(jobs, values, monkeypatch)
    kept = jobs.root / job / "loras" / "ink.safetensors"
    offered = (jobs.config.lora_dir / "b.safetensors").resolve()
    assert settings.lora == Loras([Lora(str(offered), 0.5), Lora(str(kept), -0.3)])
    assert kept.read_bytes() == upload.read_bytes()
    assert [weights_file(lora.source, "style LoRA") for lora in settings.lora] == [offered, kept]  # no hub
    # an upload the box does not name is used at weight 1; one no longer uploaded leaves the job
    upload.unlink()
    other = tmp_path / "gradio" / "9f86d081884c" / "pen.safetensors"
    a_lora(other, note="another LoRA")
    settings = rendered_settings(jobs, page_values(lora_upload=[str(other)], job=job), monkeypatch)
    assert settings.lora == Loras([Lora(str(jobs.root / job / "loras" / "pen.safetensors"))])
    assert [p.name for p in (jobs.root / job / "loras").iterdir()] == ["pen.safetensors"]


def uploads(folder: Path, *names: str, size: int = 16) -> list[str]:
    made = []
    for number, name in enumerate(names):
        path = folder / str(number) / name
        path.parent.mkdir(parents=True)
        with path.open("wb") as file:
            file.truncate(size)  # sparse: a big one costs no disk
        made.append(str(path))
    return made


# What is refused of the uploads and the box before any work: (the box, the uploads' names, their size, the sentence).
REFUSED = {
    "too many": (
        "", [f"{n}.safetensors" for n in range(MAX_LORAS + 1)], 16, f"upload at most {MAX_LORAS} style LoRAs, not 9",
    ),
    "too big": (
        "", ["big.safetensors"], (MAX_LORA_MB + 1) * 2**20,
        f"style LoRA big.safetensors is {MAX_LORA_MB + 1} MB; the limit is {MAX_LORA_MB} MB",
    ),
    "not safetensors": ("", ["ink.bin"], 16, "style LoRA ink.bin is not a .safetensors file"),
    "two of one name": (
        "", ["ink.safetensors", "ink.safetensors"], 16,
        "two of your style LoRAs are named ink.safetensors: upload each once",
    ),
    "an offered name": (
        "", ["a.safetensors"], 16, "your style LoRA a.safetensors has the name of one this page offers: rename yours",
    ),
    "a weight past its limit": (
        "ink.safetensors:2.5", ["ink.safetensors"], 16,
        "--lora ink.safetensors: its weight must be from -2 to 2, got 2.5",
    ),
    "too many named": (
        "\n".join(["a.safetensors"] * 8), ["ink.safetensors"], 16,
        f"--lora may be given at most {MAX_LORAS} times, not 9",
    ),
}  # fmt: skip


@pytest.mark.parametrize("lora, names, size, sentence", list(REFUSED.values()), ids=list(REFUSED))
def test_uploaded_loras_are_capped_before_any_work(jobs, tmp_path, nothing_loaded, lora, names, size, sentence):
    values = page_values(lora=lora, lora_upload=uploads(tmp_path / "gradio", *names, size=size))
    with pytest.raises(UserError) as refused:
        handlers.make_storyboard(jobs, values, SESSION, threading.Event())
    assert str(refused.value) == sentence
    assert list(jobs.root.iterdir()) == []


def test_lyrics_over_the_limit_are_refused_before_a_job_is_made(jobs, tmp_path):
    with pytest.raises(UserError) as refused:
        handlers.make_storyboard(
            jobs, page_values(lyrics="la " * (MAX_LYRICS_CHARS // 3 + 1)), SESSION, threading.Event()
        )
    assert str(refused.value) == '"Lyrics" is 100,002 characters long; the limit is 100,000'
    assert list(jobs.root.iterdir()) == []
    (tmp_path / "job" / "song").mkdir(parents=True)
    assert Jobs.lyrics(tmp_path / "job" / "song" / "s.mp3", "l" * MAX_LYRICS_CHARS).stat().st_size == MAX_LYRICS_CHARS


def test_the_lora_folder_is_an_option_of_the_page(lora_dir, tmp_path):
    from ui.cli import add_arguments, config_from

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert config_from(parser.parse_args(["--lora-dir", str(lora_dir)])).lora_dir == lora_dir
    assert config_from(parser.parse_args([])).lora_dir is None
    with pytest.raises(UserError, match="--lora-dir .*a.safetensors is not a folder"):
        config_from(parser.parse_args(["--lora-dir", str(lora_dir / "a.safetensors")]))


def test_the_page_names_its_loras_and_caps_its_text_in_the_browser(jobs):
    from ui.app import build_app

    app = build_app(jobs.config)
    by_label = {getattr(block, "label", None): block for block in app.blocks.values()}
    box = by_label["Style LoRAs and their weights (one a line: NAME or NAME:WEIGHT, weight -2 to 2)"]
    assert box.info.endswith(f"This page also offers: {OFFERED}.")
    upload = by_label[f"Your style LoRAs (.safetensors, at most {MAX_LORAS}, 1 GB each)"]
    assert (upload.file_count, upload.file_types) == ("multiple", [".safetensors"])
    assert by_label["Lyrics (optional)"].max_length == MAX_LYRICS_CHARS
    assert [by_label[name].max_length for name in ("Title", "Artist", "Style (added to every prompt)")] == [
        MAX_TEXT_CHARS
    ] * 3


@pytest.fixture
def page_with_loras(tmp_path, lora_dir):
    """The page served with --lora-dir, in a process of its own, and its address."""
    with served(tmp_path / "jobs", "--lora-dir", lora_dir) as (url, _):
        yield url


def raw_call(url: str, api_name: str, data: list) -> str:
    """What the page answers a call made as any program may make it: JSON, no client to upload files."""
    request = urllib.request.Request(
        f"{url}gradio_api/call/{api_name}", json.dumps({"data": data}).encode(), {"Content-Type": "application/json"}
    )
    event = json.load(urllib.request.urlopen(request, timeout=30))["event_id"]
    return urllib.request.urlopen(f"{url}gradio_api/call/{api_name}/{event}", timeout=60).read().decode()


@pytest.mark.ci  # (a served page of its own, started for this test alone)
@pytest.mark.slow
def test_the_served_page_offers_uploads_by_name_and_takes_no_server_file(page_with_loras, lora_dir, tmp_path):
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    [ink] = uploads(tmp_path / "mine", "ink.safetensors")
    named = controls(lora="nope.safetensors:0.5", lora_upload=[handle_file(ink)])
    with pytest.raises(AppError) as refused:
        Client(page_with_loras, verbose=False).predict(
            handle_file(str(DEMO_SONG)), "", "", "", *named, api_name="/make_storyboard"
        )
    assert str(refused.value).endswith("choose one of: a.safetensors, b.safetensors, ink.safetensors, link.safetensors")
    # a server file named as an upload: Gradio refuses it before the page's code runs (which would say that
    # there is no song)
    server_file = {"path": str(lora_dir / "a.safetensors"), "meta": {"_type": "gradio.FileData"}}
    answer = raw_call(page_with_loras, "make_storyboard", [None, "", "", "", *controls(lora_upload=[server_file])])
    assert "event: error" in answer and "was not uploaded by a user" in answer, answer
    assert "upload a song first" in raw_call(page_with_loras, "make_storyboard", [None, "", "", "", *controls()])


@pytest.mark.parametrize(
    "rows", [[["0", "2", "intro", "", "a sky", ""]], [["0", "2", "intro", "", "a sky", "", "", 0.5, "x"]]]
)
def test_a_table_row_of_other_columns_is_one_sentence(rows):
    from tests.helpers import valid_board
    from ui.table import apply_edits

    saved = valid_board()
    saved["scenes"] = [dict(saved["scenes"][0], end=10.0)]
    with pytest.raises(UserError, match="must keep one row per scene and the columns start, end"):
        apply_edits(saved, rows)


def test_a_refused_table_cell_is_named_by_its_row_and_column_as_the_page_shows_them():
    from tests.helpers import valid_board
    from ui.table import apply_edits

    row = ["0", "10", "lyric", "hi", "a sea\x07", "", ""]
    with pytest.raises(UserError, match="^row 1's visual prompt holds a control character"):
        apply_edits(dict(valid_board(), scenes=[dict(valid_board()["scenes"][1], start=0.0, index=0)]), [row])


@pytest.mark.parametrize("how", ["Gradio's cancel of its event", "its session's end"])
def test_a_running_job_is_told_to_stop_by_its_events_cancel_or_its_sessions_end(tmp_path, how):
    """What the page wires (ui.app): the job's thread sees its stop flag set at once, and ends within a step."""
    from ui.app import page_events

    jobs, flags, ended = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs")), [], threading.Event()

    def job(jobs: Jobs, values: dict, session: str, stop: threading.Event):  # 2 s of steps, each looking at `stop`
        flags.append(stop)
        if stop.wait(2):
            ended.set()

    async def run_and_leave():
        task = asyncio.create_task(page_events(jobs, {})(job)({}, SimpleNamespace(session_hash=SESSION)))
        while not flags:
            await asyncio.sleep(0.01)
        task.cancel() if how.startswith("Gradio") else jobs.cancel(SESSION)  # (the page's unload: jobs.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run_and_leave())
    assert flags[0].is_set() and ended.is_set() and SESSION not in jobs.stops
