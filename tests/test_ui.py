"""The web page, driven as people and programs use it: through gradio_client, and in a real browser."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import av
import pytest

from musicvid.assets import DEMO_LYRICS, DEMO_SONG

ADVANCED = ["tiny", 4, 7, 4, 7.5, "64x64", 0, "", True, False]  # preset, fps, context, steps, guidance, size, seed, style, align, captions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jobs")


@pytest.fixture(scope="module")
def server(jobs_dir):
    jobs = jobs_dir
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    process = subprocess.Popen(
        [sys.executable, "-m", "musicvid", "ui", "--models", "tiny", "--port", str(port), "--jobs-dir", str(jobs)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            if process.poll() is not None:
                pytest.fail(process.stdout.read().decode())
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("the UI server did not start within 120 s")
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def probe(path):
    with av.open(str(path)) as container:
        return container.streams.video[0].codec_context.name, container.streams.audio[0].codec_context.name


def test_upload_storyboard_edit_render(client):
    from gradio_client import handle_file

    song = handle_file(str(DEMO_SONG))
    # the person pastes the words they know, without times: each becomes a row, in order
    sung = [line.split("]", 1)[1] for line in DEMO_LYRICS.read_text().splitlines() if line[1:3].isdigit()]
    pasted = "\n".join(sung[:4]) + "\n\n" + "\n".join(sung[4:])
    table, job, status = client.predict(song, "Lighthouse", "The Tiny Models", pasted, *ADVANCED,
                                        api_name="/make_storyboard")  # fmt: skip
    assert table["headers"] == ["start", "end", "kind", "lyric", "visual prompt"]
    assert [row[3] for row in table["data"] if row[2] == "lyric"] == sung and "Storyboard ready" in status
    table["data"][1][4] = "a lighthouse made of glass"
    video, files, job_after, status = client.predict(
        song, "Lighthouse", "The Tiny Models", *ADVANCED, table, job, api_name="/render"
    )
    assert job_after == job
    assert probe(video) == ("h264", "aac")
    names = sorted(Path(f).suffix for f in files)
    assert names == [".json", ".mp4", ".srt"]
    storyboard = json.loads(next(Path(f) for f in files if f.endswith(".json")).read_text())
    assert storyboard["scenes"][1]["prompt"] == "a lighthouse made of glass"


def test_pasted_lyrics_are_kept_as_what_they_are(tmp_path):
    from ui.app import Jobs

    song = tmp_path / "song.mp3"
    assert Jobs.lyrics(song, " \n\n") is None
    assert Jobs.lyrics(song, "[00:05.00]My heart is a lighthouse\n").name == "lyrics.lrc"
    assert Jobs.lyrics(song, "My heart is a lighthouse\n").name == "lyrics.txt"
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == []  # the job's only file stays its song


def test_a_lyric_the_person_edited_is_no_longer_in_doubt():
    from ui.app import apply_edits

    saved = {"version": 1, "audio": {"duration": 10.0}, "scenes": [
        {"index": 0, "kind": "lyric", "start": 0.0, "end": 5.0, "text": "misheard", "prompt": "a", "seed": 1, "confidence": 0.2},
        {"index": 1, "kind": "lyric", "start": 5.0, "end": 10.0, "text": "unsure", "prompt": "b", "seed": 2, "confidence": 0.3},
    ]}  # fmt: skip
    edited = apply_edits(saved, [[0.0, 5.0, "lyric", "heard right", "a"], [5.0, 10.0, "lyric", "unsure", "c"]])
    assert [s.get("confidence") for s in edited["scenes"]] == [None, 0.3]


def test_a_broken_edit_names_the_row(client):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    song = handle_file(str(DEMO_SONG))
    table, job, _ = client.predict(song, "", "", "", *ADVANCED, api_name="/make_storyboard")
    table["data"][1][0] = table["data"][1][0] - 1.0  # now overlaps row 1
    with pytest.raises(AppError, match="row 2"):
        client.predict(song, "", "", *ADVANCED, table, job, api_name="/render")


def test_a_job_id_cannot_reach_other_files(client):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    table = {"headers": ["start", "end", "kind", "lyric", "visual prompt"], "data": [[0, 1, "intro", "", "x"]]}
    for job in ("../../etc", "/etc/passwd", "0123456789ab"):
        with pytest.raises(AppError, match="make the storyboard first"):
            client.predict(handle_file(str(DEMO_SONG)), "", "", *ADVANCED, table, job, api_name="/render")


def test_a_text_file_is_refused_and_the_server_keeps_serving(client, server, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    text = tmp_path / "notes.mp3"
    text.write_text("this is not a song\n" * 20)
    with pytest.raises(AppError, match="not audio"):
        client.predict(handle_file(str(text)), "", "", "", *ADVANCED, api_name="/make_storyboard")
    assert urllib.request.urlopen(server, timeout=5).status == 200


def test_two_jobs_at_once_both_finish(client):
    from gradio_client import handle_file

    song = handle_file(str(DEMO_SONG))
    first = client.submit(song, "One", "A", "", *ADVANCED, api_name="/make_video")
    second = client.submit(song, "Two", "B", "", *ADVANCED, api_name="/make_video")
    results = [first.result(timeout=300), second.result(timeout=300)]
    jobs = {r[3] for r in results}
    assert len(jobs) == 2
    for table, video, files, job, status in results:
        assert probe(video) == ("h264", "aac") and "Done" in status


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def launch(p):
    return p.chromium.launch(
        executable_path=CHROMIUM,
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    )  # fmt: skip


def start_make_video(browser, server):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server)
    page.locator("input[type=file]").first.set_input_files(str(DEMO_SONG))
    page.get_by_label("Title").fill("Lighthouse")
    page.get_by_role("button", name="Make video (no review)").click()
    return page


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_make_video_in_a_real_browser(server):
    playwright = pytest.importorskip("playwright.sync_api")
    started = time.time()
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = start_make_video(browser, server)
        video = page.locator("video")
        video.wait_for(timeout=240_000)
        source = video.get_attribute("src") or video.locator("source").first.get_attribute("src")
        assert source
        page.wait_for_function("document.querySelector('video') && document.querySelector('video').readyState >= 1",
                               timeout=60_000)  # fmt: skip
        artifacts = Path(os.environ.get("MUSICVID_TEST_ARTIFACTS", Path(__file__).parents[1] / "test-artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(artifacts / "ui-finished.png"), full_page=True)
        browser.close()
    print(f"browser end to end: {time.time() - started:.1f} s; screenshot {artifacts / 'ui-finished.png'}")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_cancel_stops_the_render_itself(server, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    known = set(jobs_dir.iterdir())

    def pictures() -> int:
        return sum(1 for job in set(jobs_dir.iterdir()) - known for _ in job.glob("work/*/*.png"))

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = start_make_video(browser, server)
        deadline = time.time() + 180
        while pictures() < 3 and time.time() < deadline:  # the render has begun
            time.sleep(0.1)
        assert pictures() >= 3, "the render never started"
        page.get_by_role("button", name="Cancel").click()
        time.sleep(3)  # the group being drawn finishes and is written
        stopped_at = pictures()
        time.sleep(5)
        assert pictures() == stopped_at  # no picture drawn after the cancel took effect
        assert page.locator("video").count() == 0 or not page.locator("video").get_attribute("src")
        browser.close()
    assert urllib.request.urlopen(server, timeout=5).status == 200
