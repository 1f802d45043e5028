"""What the page holds to: its jobs' folder is its own (a person's files in --jobs-dir are never removed or served),
its options are checked before it starts, text that is no text and a render's bad files are refused before any
work, a cancelled press does none, one preset's models are kept at a time, and what jobs hold on disk is bounded.
The page's functions are called directly, but where the served page or the command line is what is tested."""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import weakref

import pytest

from musicvid.core.assets import DEMO_SONG
from musicvid.core.errors import Cancelled, UserError
from musicvid.lyrics.transcript import Line, Transcript
from musicvid.models.readback import GB
from musicvid.settings.song import SongRequest
from musicvid.storyboard import make
from tests.served_page import TIMED_LYRICS, page_jobs, served
from tests.test_page_inputs import SESSION, page_values, render_job
from ui import handlers
from ui.config import JOB_MARK, UIConfig
from ui.jobs import NO_STORYBOARD, Jobs

SONG_BYTES = DEMO_SONG.stat().st_size


@pytest.fixture
def jobs(tmp_path) -> Jobs:
    return Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))


@pytest.fixture
def no_storyboard(monkeypatch):
    """Whatever makes a storyboard fails the test: what is refused is refused before it."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a storyboard was made")

    monkeypatch.setattr(handlers, "get_storyboard", forbidden)


def a_persons_folder(folder):
    """A folder of a person's own, as an operator might name with --jobs-dir: files, and sub-folders untouched
    for days."""
    (folder / "photos").mkdir(parents=True)
    (folder / "photos" / "a.txt").write_text("precious")
    (folder / "notes.txt").write_text("top")
    days_ago = time.time() - 3 * 86400
    os.utime(folder / "photos", (days_ago, days_ago))
    return folder


def test_only_the_pages_own_old_jobs_are_removed(tmp_path):
    mine = a_persons_folder(tmp_path / "mydocs")
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=mine, keep_hours=1))
    old_job, _ = jobs.new(str(DEMO_SONG), SESSION)
    unmarked = jobs.root / "0123456789ab"  # named as a job, but not one the page made
    unmarked.mkdir()
    elsewhere = tmp_path / "elsewhere" / "fedcba987654"  # a page's job, reached through a link
    elsewhere.mkdir(parents=True)
    (elsewhere / JOB_MARK).touch()
    (jobs.root / elsewhere.name).symlink_to(elsewhere)
    hours_ago = time.time() - 3 * 3600
    for folder in (jobs.root / old_job, unmarked, elsewhere):
        os.utime(folder, (hours_ago, hours_ago))
        if (folder / JOB_MARK).exists():
            os.utime(folder / JOB_MARK, (hours_ago, hours_ago))
    new_job, _ = jobs.new(str(DEMO_SONG), SESSION)
    assert sorted(p.name for p in jobs.root.iterdir()) == sorted([unmarked.name, elsewhere.name, new_job])
    assert (mine / "photos" / "a.txt").read_text() == "precious" and (mine / "notes.txt").exists()
    assert elsewhere.is_dir()
    # the page starts again on it no more: what it holds now is not all the page's
    with pytest.raises(UserError, match=f"holds {elsewhere.name}, which the page did not make"):
        Jobs(UIConfig(models="tiny", jobs_dir=mine))


def test_an_upload_whose_name_holds_a_control_character_is_kept_under_a_name_musicvid_writes(jobs, tmp_path):
    """Round 13: a program calling the handlers with an upload named "a\nb.mp3" had its storyboard made, then every
    render refused for the video's name, which the page picks (Gradio's browser path strips such characters)."""
    from musicvid.core.paths import check_made
    from ui.jobs import video_file

    upload = tmp_path / "a\nb\tc.mp3"
    upload.write_bytes(DEMO_SONG.read_bytes())
    _, song = jobs.new(str(upload), SESSION)
    assert song.name == "a b c.mp3" and song.read_bytes() == upload.read_bytes()
    check_made(video_file(song, preview=False), "output")


def test_a_pin_waiting_for_the_models_marks_and_writes_nothing_in_its_job(jobs, tmp_path):
    """Round 13: Pin picture read its job's song before it waited, marking the job the newest, and a render finishing
    then removed its own job to keep --max-jobs-gb, the video it had just made with it."""
    from PIL import Image

    job, stop, ended = render_job(jobs), threading.Event(), []
    Image.new("RGB", (8, 8), "teal").save(tmp_path / "pin.png")
    values = page_values(job=job, scene=0, pin_upload=str(tmp_path / "pin.png"))

    def pin() -> None:
        try:
            handlers.pin_picture(jobs, values, SESSION, stop)
        except Exception as error:
            ended.append(type(error))

    waiting = threading.Thread(target=pin)
    with jobs.models(threading.Event()):  # another job's render
        waiting.start()
        waiting.join(timeout=1.0)
        assert sorted(p.name for p in (jobs.root / job).iterdir()) == ["song", "work"]
        stop.set()
    waiting.join()
    assert ended == [Cancelled] and sorted(p.name for p in (jobs.root / job).iterdir()) == ["song", "work"]


def test_a_persons_folder_named_as_the_pages_is_refused(tmp_path):
    (tmp_path / "musicvid-jobs").mkdir()
    (tmp_path / "musicvid-jobs" / "taxes.pdf").write_text("x")
    with pytest.raises(UserError, match="^--jobs-dir .* holds taxes.pdf, which the page did not make: move it away"):
        Jobs(UIConfig(models="tiny", jobs_dir=tmp_path))
    assert (tmp_path / "musicvid-jobs" / "taxes.pdf").exists()


@pytest.mark.slow
@pytest.mark.ci  # (the served page's jobs apart: the ci tier, which CI runs on every stop)
def test_the_served_page_serves_its_jobs_alone(tmp_path):
    mine = a_persons_folder(tmp_path / "mydocs")
    job = page_jobs(mine) / "0123456789ab"  # a job an earlier start of the page made
    (job / "song").mkdir(parents=True)
    (job / JOB_MARK).touch()
    (job / "song" / "demo.mp3").write_bytes(b"ID3")
    with served(mine) as (url, process):
        assert urllib.request.urlopen(f"{url}gradio_api/file={job / 'song' / 'demo.mp3'}", timeout=10).status == 200
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}gradio_api/file={mine / 'notes.txt'}", timeout=10)
        assert refused.value.code == 403
        process.terminate()  # (a service stopped: said as one, not as a clean exit)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM


BAD_OPTIONS = {
    "--keep-hours nan": "--keep-hours must be above 0 and at most 8760, got nan",
    "--keep-hours inf": "--keep-hours must be above 0 and at most 8760, got inf",
    "--keep-hours -1": "--keep-hours must be above 0 and at most 8760, got -1",
    "--max-minutes 0": "--max-minutes must be above 0 and at most 60, got 0",
    "--max-minutes nan": "--max-minutes must be above 0 and at most 60, got nan",
    "--max-upload-mb 0": "--max-upload-mb must be 1 or more, got 0",
    "--port 70000": "--port must be from 1 to 65535, got 70000",
    "--port -1": "--port must be from 1 to 65535, got -1",
    "--max-jobs-gb 0": "--max-jobs-gb must be above 0 and at most 1048576, got 0",
}


@pytest.mark.parametrize("argv, sentence", BAD_OPTIONS.items(), ids=list(BAD_OPTIONS))
def test_the_pages_options_are_checked_before_it_starts(argv, sentence):
    from ui.cli import add_arguments, config_from

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(UserError) as refused:
        config_from(parser.parse_args(argv.split()))
    assert str(refused.value) == sentence


def test_the_page_refuses_an_address_it_cannot_listen_on_before_it_is_built():
    from ui.cli import check_listening

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for host, said in (
            ("", "--host is empty: give the address to listen on"),
            ("192.0.2.1", "--host 192.0.2.1 --port 7860: the page cannot listen there ("),  # (no address of ours)
            ("127.0.0.1", f"--host 127.0.0.1 --port {port}: the page cannot listen there ("),  # (a port taken)
        ):
            with pytest.raises(UserError, match=re.escape(said)):
                check_listening(host, port if host == "127.0.0.1" else 7860)
    check_listening("127.0.0.1", port)  # (free again)


@pytest.mark.ci  # (musicvid-ui started in a process of its own for each bad option; the options' own check, above, stays in the suite)
def test_musicvid_ui_refuses_a_bad_option_in_one_line_and_exit_2(tmp_path):
    (tmp_path / "afile").write_text("x")
    ran = subprocess.run(
        [sys.executable, "-m", "musicvid", "ui", "--models", "tiny", "--jobs-dir", str(tmp_path / "afile")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 2, ran.stderr
    assert (
        ran.stderr
        == f"musicvid: --jobs-dir {tmp_path / 'afile'} is not a folder: a file has its name, or a name above it\n"
    )


@pytest.mark.parametrize("field", ["title", "artist", "style", "lyrics"])
def test_text_that_is_no_text_is_refused_before_a_job_is_made(jobs, no_storyboard, field):
    named = '"Lyrics"' if field == "lyrics" else f"--{field}"
    with pytest.raises(UserError) as refused:
        handlers.make_storyboard(jobs, page_values(**{field: "oil \ud800 paint"}), SESSION, threading.Event())
    assert str(refused.value) == f"{named} has something that is not a character at position 5: give it as UTF-8 text"
    assert list(jobs.root.iterdir()) == []


def test_a_title_of_bytes_that_are_not_utf8_is_refused_on_the_command_line_too():
    title = b"a\xffb".decode("utf-8", "surrogateescape")  # as Python reads such an argument
    with pytest.raises(UserError, match="^--title has something that is not a character at position 2"):
        SongRequest(song=DEMO_SONG, title=title)


def bad_files(folder) -> dict[str, dict]:
    """The page's values with a reference picture that is no picture, or a style LoRA that is no safetensors."""
    folder.mkdir()
    (folder / "fake.png").write_text("not an image")
    (folder / "junk.safetensors").write_bytes(os.urandom(5000))
    return {
        "reference": dict(reference=str(folder / "fake.png")),
        "lora": dict(lora_upload=[str(folder / "junk.safetensors")]),
    }


REFUSALS = {
    "reference": "^reference picture .*fake.png is not an image",
    "lora": r"^style LoRA junk.safetensors cannot be read as a safetensors file \(",
}


@pytest.mark.parametrize("press", [handlers.video_in_one_go, handlers.render, handlers.keyframes])
@pytest.mark.parametrize("bad", list(REFUSALS))
def test_a_renders_bad_file_is_refused_before_the_storyboard_is_made(jobs, tmp_path, no_storyboard, press, bad):
    values = page_values(**bad_files(tmp_path / "gradio")[bad])
    with pytest.raises(UserError, match=REFUSALS[bad]):
        press(jobs, values, SESSION, threading.Event())
    assert list(jobs.root.iterdir()) == []


def test_a_bad_lora_is_refused_before_a_render_of_a_made_storyboard(jobs, tmp_path, monkeypatch):
    monkeypatch.setattr(handlers, "make_video", lambda *args, **kwargs: pytest.fail("the render started"))
    values = page_values(**bad_files(tmp_path / "gradio")["lora"], job=render_job(jobs))
    with pytest.raises(UserError, match=REFUSALS["lora"]):
        handlers.render(jobs, values, SESSION, threading.Event())


@pytest.mark.parametrize("cancelled", ["while it waits", "as it gets the models"])
def test_a_press_cancelled_before_it_gets_the_models_does_no_work(jobs, no_storyboard, cancelled):
    stop, ended = threading.Event(), []

    def press():
        try:
            handlers.make_storyboard(jobs, page_values(lyrics=TIMED_LYRICS), SESSION, stop)
        except Cancelled as error:
            ended.append(error)

    with jobs.models_lock:  # another job's
        thread = threading.Thread(target=press)
        thread.start()
        time.sleep(0.3)
        stop.set()
        if cancelled == "while it waits":
            thread.join(timeout=2)
            assert ended, "the cancelled press still waits for the models"
    thread.join(timeout=5)
    assert [str(error) for error in ended] == ["the job was cancelled"]
    assert list(jobs.root.iterdir()) == []


def test_a_storyboard_cancelled_while_the_song_is_heard_ends_before_vipe(jobs, monkeypatch):
    stop = threading.Event()

    def hear_then_cancel(asr, samples, sha256, **kwargs):
        stop.set()  # the press's Cancel, while Whisper listens
        return Transcript([Line(1.0, 3.0, "a line heard")], "en", "heard", sha256)

    monkeypatch.setattr(make, "transcribe", hear_then_cancel)
    for stage in ("read_form", "elaborate"):
        monkeypatch.setattr(make, stage, lambda *args, **kwargs: pytest.fail("the storyboard went on after the cancel"))
    with pytest.raises(Cancelled, match="cancelled"):
        handlers.make_storyboard(jobs, page_values(), SESSION, stop)
    assert list(jobs.root.iterdir()) == []  # the job is gone with it


def test_one_presets_models_are_kept_at_a_time(jobs):
    class Model:  # a model as a registry holds it: the registry's alone
        pass

    first = jobs.registry("tiny")
    first.loaders["vipe"] = lambda *args: Model()
    with first.use("vipe") as model:
        held = weakref.ref(model)
    del model
    assert jobs.registry("tiny") is first and held() is not None  # kept loaded for the preset's next job
    other = jobs.registry("tiny-xl")
    assert other is not first and jobs.loaded == ("tiny-xl", other)
    assert held() is None  # released: no longer in memory


def test_what_jobs_hold_is_bounded_the_least_recently_used_removed_first(tmp_path, monkeypatch):
    """A job was aged by its folder's time, which a render (writing deeper) leaves: the job a person was still
    editing and rendering went first."""
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs", max_jobs_gb=3.5 * SONG_BYTES / GB))
    made = []
    for age in (4, 3, 2):  # hours ago: the first is the oldest
        made.append(jobs.new(str(DEMO_SONG), SESSION)[0])
        for path in (jobs.root / made[-1], jobs.root / made[-1] / JOB_MARK):
            os.utime(path, (time.time() - age * 3600,) * 2)
    monkeypatch.setattr(handlers.Workdir, "storyboard", property(lambda workdir: DEMO_SONG))  # (each has one)
    jobs.song(made[0], SESSION)  # the oldest pressed on again now: in use
    made.append(jobs.new(str(DEMO_SONG), SESSION)[0])
    assert sorted(p.name for p in jobs.root.iterdir()) == sorted([made[0], *made[2:]])
    assert made[1] not in jobs.owners
    with pytest.raises(UserError, match="^this page removed the job, to make room for newer ones .*: make the story"):
        jobs.song(made[1], SESSION)  # (its storyboard still on the page: "make the storyboard first" said nothing)
    with pytest.raises(UserError, match="^make the storyboard first"):
        jobs.song(made[1], "another-browser")  # (nothing said of a job not its own)
    small = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "small", max_jobs_gb=SONG_BYTES / 2 / GB))
    with pytest.raises(UserError, match="^the song is too big for this page, which keeps"):
        small.new(str(DEMO_SONG), SESSION)
    assert list(small.root.iterdir()) == []


def test_after_each_press_the_jobs_are_bounded_again_but_for_the_one_pressed(tmp_path, monkeypatch):
    """Room was made for a new job's song alone: what its render wrote later (frames, the video) was counted nowhere,
    and two jobs held 1.4 times --max-jobs-gb (round 11)."""
    monkeypatch.setattr(handlers.Workdir, "storyboard", property(lambda workdir: DEMO_SONG))  # (each has one)
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path, max_jobs_gb=3.5 * SONG_BYTES / GB))
    older, _ = jobs.new(str(DEMO_SONG), SESSION)
    newer, _ = jobs.new(str(DEMO_SONG), "another-browser")
    os.utime(jobs.root / older / JOB_MARK, (time.time() - 60,) * 2)
    for written in (2, 5):  # the render's results: the pressed job within the bound with the other, then alone past it
        with jobs.models(threading.Event()):
            jobs.song(older, SESSION)  # pressed on: the one used last
            (jobs.root / older / f"render-{written}.bin").write_bytes(bytes(written * SONG_BYTES))
        assert sorted(p.name for p in jobs.root.iterdir()) == [older]
    with pytest.raises(UserError, match="^this page removed the job, to make room for newer ones"):
        jobs.song(newer, "another-browser")


def test_a_page_never_removes_a_job_another_page_on_its_jobs_folder_holds(tmp_path):
    """Two pages on one --jobs-dir (each page's default): the second's clean-up removed the first's job as it
    rendered, which then wrote on into a folder without the page's mark, never removed."""
    first = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path, keep_hours=1))
    second = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path, keep_hours=1, max_jobs_gb=1.5 * SONG_BYTES / GB))
    job, _ = first.new(str(DEMO_SONG), SESSION)
    hours_ago = time.time() - 3 * 3600
    os.utime(first.root / job / JOB_MARK, (hours_ago, hours_ago))  # old by --keep-hours, and two songs are too many
    with pytest.raises(UserError, match="^this page keeps .* GB of jobs, and another page using its jobs folder"):
        second.new(str(DEMO_SONG), SESSION)
    assert sorted(p.name for p in first.root.iterdir()) == [job]
    os.close(first.held.pop(job))  # the first page ends: the OS lets its locks go
    made, _ = second.new(str(DEMO_SONG), SESSION)
    assert sorted(p.name for p in first.root.iterdir()) == [made]


def test_a_job_refused_for_another_pages_jobs_removes_none_of_this_pages_first(tmp_path):
    """A page removed its own jobs (a session's storyboard and its edits) to make room for a new one, then refused it
    anyway: the job another page held left no room even with them all gone."""
    first = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path))
    second = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path, max_jobs_gb=1.5 * SONG_BYTES / GB))
    kept, _ = second.new(str(DEMO_SONG), SESSION)
    held, _ = first.new(str(DEMO_SONG), SESSION)
    with pytest.raises(UserError, match="^this page keeps .* GB of jobs, and another page using its jobs folder"):
        second.new(str(DEMO_SONG), "another-browser")
    assert sorted(p.name for p in second.root.iterdir()) == sorted([kept, held])


def test_a_page_started_again_gives_each_open_session_its_job_and_no_one_elses(tmp_path, monkeypatch):
    """Who owns a job was known in memory alone: after a restart (or a kill -9 mid-render) the open tab's Render
    said 'make the storyboard first', its storyboard and keyframes on disk."""
    monkeypatch.setattr(handlers.Workdir, "storyboard", property(lambda workdir: DEMO_SONG))  # (the job has one)
    before = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path))
    job, song = before.new(str(DEMO_SONG), SESSION)
    after = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path))
    with pytest.raises(UserError, match=re.escape(NO_STORYBOARD)):  # the first page runs still, and holds it
        after.song(job, SESSION)
    for held in before.held.values():
        os.close(held)  # the first page ends
    with pytest.raises(UserError, match=re.escape(NO_STORYBOARD)):
        after.song(job, "another session")
    assert after.song(job, SESSION) == song and after.owners == {job: SESSION}
    assert SESSION not in (before.root / job / JOB_MARK).read_text()  # (a digest of it)
