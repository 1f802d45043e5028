"""The web page, driven as people and programs use it: through gradio_client, and in a real browser."""

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from musicvid.core.assets import DEMO_LYRICS, DEMO_SONG
from musicvid.core.workdir import Workdir
from musicvid.pictures.camera import cover

# The settings controls as the tests set them, in the page's order (its groups', ui.controls.page_groups): the order
# of the API's inputs after the song's (tests/test_one_source.py checks it).
PAGE_CONTROLS = dict(
    context_size=7, seed=0,  # song and lyrics
    preset="tiny",  # models
    size="64x64", aspect="", steps=4, guidance=7.5, keyframe_candidates=1, reroll_below="", style="", reference=None,
    reference_strength=0.6, lora="", lora_upload=None, fast=False,  # pictures
    fps=4, pacing="linear", motion="none", pulse=0, transitions="slerp", align=True, preview=False,  # motion
    look="", output_fps="", resolution="", captions="none",  # video and delivery
)  # fmt: skip


def controls(**changed) -> list:
    """The controls' values as the API takes them, some changed."""
    assert set(changed) <= set(PAGE_CONTROLS)
    return list({**PAGE_CONTROLS, **changed}.values())


TIMED_LYRICS = DEMO_LYRICS.read_text()  # pasted as they are: timed lines need no Whisper, which keeps the tests short


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jobs")


@pytest.fixture(scope="module")
def server_process(jobs_dir):
    jobs = jobs_dir
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    process = subprocess.Popen(
        [sys.executable, "-m", "musicvid", "ui", "--models", "tiny", "--port", str(port), "--jobs-dir", str(jobs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
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
    yield url, process
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(server_process) -> str:
    return server_process[0]


def rss_mb(pid: int, peak: bool = False) -> float:
    """The process's resident memory now, or at its peak since reset_peak."""
    status = Path(f"/proc/{pid}/status").read_text()
    field = "VmHWM:" if peak else "VmRSS:"
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(field))) / 1024


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the kernel counts the peak again from here


def cpu_seconds(pid: int) -> float:
    """User + system time of the process and its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def probe(path):
    with av.open(str(path)) as container:
        return container.streams.video[0].codec_context.name, container.streams.audio[0].codec_context.name


@pytest.mark.slow
def test_upload_storyboard_edit_keyframes_new_picture_pin_render(client, jobs_dir, tmp_path):
    from gradio_client import handle_file

    song = handle_file(str(DEMO_SONG))
    # the person pastes the words they know, without times: each becomes a row, in order
    sung = [line.split("]", 1)[1] for line in DEMO_LYRICS.read_text().splitlines() if line[1:3].isdigit()]
    sung[2] += " 🔥"  # a character no caption font draws: the page says so after the render, as the CLI does
    pasted = "\n".join(sung[:4]) + "\n\n" + "\n".join(sung[4:])
    table, job, status = client.predict(
        song, "Lighthouse", "The Tiny Models", pasted, *controls(), api_name="/make_storyboard"
    )
    assert table["headers"] == ["start", "end", "kind", "lyric", "visual prompt", "section", "mood", "score"]
    assert all(row[7] is None for row in table["data"])  # no keyframe scored yet
    assert [row[3] for row in table["data"] if row[2] == "lyric"] == sung and "Storyboard ready" in status
    table["data"][1][4] = "a lighthouse made of glass"
    # every row's section, a mood for each passage without words (no line is sung again: all verse)
    assert [row[5] for row in table["data"] if row[2] == "lyric"] == ["verse"] * len(sung)
    assert all(row[5] == row[2] and row[6] for row in table["data"] if row[2] != "lyric")
    table["data"][1][5] = "chorus"  # the person knows better
    # keyframes first: every scene's picture in the gallery, and the contact sheet
    gallery, files, status, scored, _ = client.predict(
        None, "", "", "", *controls(), table, job, api_name="/draw_keyframes"
    )
    assert all(0 <= row[7] <= 2.5 for row in scored["data"])  # each keyframe's score, in the table
    assert [row[4] for row in scored["data"]] == [row[4] for row in table["data"]]  # the edits, as sent
    keyframes = [Path(item["image"]).read_bytes() for item in gallery]
    assert len(keyframes) == len(table["data"]) and f"{len(keyframes)} drawn" in status
    assert any(Path(f).name == "contact_sheet.png" for f in files)
    # a new picture for scene 2: that keyframe alone changes
    gallery, files, status, _, _ = client.predict("", "", *controls(), table, job, 2, api_name="/new_picture")
    again = [Path(item["image"]).read_bytes() for item in gallery]
    assert [n for n, (a, b) in enumerate(zip(keyframes, again)) if a != b] == [2] and "1 drawn" in status
    # a picture of the person's own, pinned to scene 3, is that scene's keyframe (scaled to cover it)
    y, x = np.mgrid[0:90, 0:160]
    band = np.stack([x * 255 // 159, y * 255 // 89, np.full_like(x, 90)], axis=2).astype(np.uint8)
    Image.fromarray(band).save(tmp_path / "band.png")
    pin = handle_file(str(tmp_path / "band.png"))
    gallery, files, status, _, _ = client.predict("", "", *controls(), table, job, 3, pin, api_name="/pin_picture")
    keyframe = jobs_dir / job / "work" / "keyframes" / Workdir(Path()).keyframe(3).name
    assert np.array_equal(np.asarray(Image.open(keyframe)), cover(band, (64, 64))) and "1 drawn" in status
    video, files, job_after, status, _ = client.predict(
        song, "Lighthouse", "The Tiny Models", "", *controls(captions="line"), table, job, api_name="/render"
    )
    assert job_after == job
    row = 1 + next(n for n, r in enumerate(table["data"]) if r[3] == sung[2])
    assert f"cannot draw (rows {row}: 🔥)" in status
    work = jobs_dir / job / "work"
    morphs = len(list((work / "frames").glob("*.png")))
    assert json.loads((work / "timings.json").read_text())["pictures_drawn"] == morphs  # keyframes were kept
    assert probe(video) == ("h264", "aac")
    names = sorted(Path(f).suffix for f in files)
    assert names == [".ass", ".json", ".mp4", ".srt"]
    storyboard = json.loads(next(Path(f) for f in files if f.endswith(".json")).read_text())
    assert storyboard["scenes"][1]["prompt"] == "a lighthouse made of glass"
    assert storyboard["scenes"][1]["section"] == "chorus"
    assert Path(storyboard["scenes"][3]["picture"]).parent.name == "pins"  # the render kept the pinned picture
    # a reference picture for the whole video: every picture is drawn anew, in its look
    looked = dict(captions="line", reference=handle_file(str(tmp_path / "band.png")), reference_strength=0.5)
    client.predict(song, "Lighthouse", "The Tiny Models", "", *controls(**looked), table, job, api_name="/render")
    pictures = len(list((work / "frames").glob("*.png"))) + len(list((work / "keyframes").glob("*.png")))
    assert json.loads((work / "timings.json").read_text())["pictures_drawn"] == pictures
    assert np.array_equal(np.asarray(Image.open(keyframe)), cover(band, (64, 64)))  # the pinned one stays as it is
    # the frames between keyframes drawn by the video model: the keyframes stay, every frame between is new
    moving = controls(**looked, transitions="video")
    client.predict(song, "Lighthouse", "The Tiny Models", "", *moving, table, job, api_name="/render")
    frames = len(list((work / "frames").glob("*.png")))
    assert json.loads((work / "timings.json").read_text())["pictures_drawn"] == frames

    # (the loop goes on, edit and render again: the browser test below)

    # the job is this session's: another session cannot render it, nor learn where it is kept
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="make the storyboard first") as refused:
        Client(client.src, verbose=False).predict(song, "", "", "", *controls(), table, job, api_name="/render")
    assert "/" not in str(refused.value)


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
    from ui.jobs import Jobs

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


@pytest.mark.slow
def test_a_broken_edit_names_the_row(client):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    song = handle_file(str(DEMO_SONG))
    table, job, _ = client.predict(song, "", "", TIMED_LYRICS, *controls(), api_name="/make_storyboard")
    table["data"][1][0] = table["data"][1][0] - 1.0  # now overlaps row 1
    with pytest.raises(AppError, match="row 2"):
        client.predict(song, "", "", "", *controls(), table, job, api_name="/render")


@pytest.mark.slow
def test_a_job_id_cannot_reach_other_files(client):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    table = {
        "headers": ["start", "end", "kind", "lyric", "visual prompt", "section", "mood"],
        "data": [[0, 1, "intro", "", "x", "intro", ""]],
    }
    for job in ("../../etc", "/etc/passwd", "0123456789ab"):
        with pytest.raises(AppError, match="make the storyboard first"):
            client.predict(handle_file(str(DEMO_SONG)), "", "", "", *controls(), table, job, api_name="/render")


@pytest.mark.slow
def test_a_text_file_is_refused_and_the_server_keeps_serving(client, server, jobs_dir, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    text = tmp_path / "my notes.mp3"
    text.write_text("this is not a song\n" * 20)
    empty = tmp_path / "empty.mp3"
    empty.touch()
    known = set(jobs_dir.iterdir())
    # refused by ffmpeg in the job's folder, and before the copy in Gradio's: both named as the person named them
    for upload, refusal in ((text, "my notes.mp3 is not audio"), (empty, "empty.mp3 is empty")):
        with pytest.raises(AppError) as refused:
            client.predict(handle_file(str(upload)), "", "", "", *controls(), api_name="/make_storyboard")
        message = str(refused.value)
        assert message.startswith(refusal) and "/" not in message, message
    assert urllib.request.urlopen(server, timeout=5).status == 200
    assert set(jobs_dir.iterdir()) == known  # a refused song leaves no job behind


@pytest.mark.slow
def test_a_long_upload_is_refused_before_it_is_decoded(client, server_process, jobs_dir, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    from musicvid.core.ffmpeg import exe

    # two hours at 6 kb/s: 5 MB to upload, 460 MB of samples had it been decoded
    minute = tmp_path / "minute.ogg"
    subprocess.run(
        [
            exe(),
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=220:duration=60",
            "-ac",
            "1",
            "-ar",
            "8000",
            "-c:a",
            "libopus",
            "-b:a",
            "6k",
            str(minute),
        ],
        check=True,
    )
    long = tmp_path / "two hours.ogg"
    subprocess.run(
        [exe(), "-v", "error", "-stream_loop", "119", "-i", str(minute), "-c", "copy", str(long)], check=True
    )
    pid = server_process[1].pid
    known, before = set(jobs_dir.iterdir()), rss_mb(pid)
    with pytest.raises(AppError, match="120.0 minutes; the limit is 15 minutes"):
        client.predict(handle_file(str(long)), "", "", "", *controls(), api_name="/make_storyboard")
    after = rss_mb(pid)
    print(f"server memory: {before:.0f} MB before the two-hour upload, {after:.0f} MB after")
    assert after - before < 50
    assert set(jobs_dir.iterdir()) == known


def blank_png(path: Path, width: int, height: int) -> None:
    """A black PNG of this size, one bit a pixel, written a row at a time: a 30000x30000 one is 110 KB
    on disk and never whole in this process's memory (as it would be, 900 MB, drawn with Pillow)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row, packer = bytes(1 + (width + 7) // 8), zlib.compressobj(9)  # each row: filter 0, then the bits
    pixels = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))


@pytest.mark.slow
def test_a_huge_picture_is_refused_from_its_header(client, server_process, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    table = {
        "headers": ["start", "end", "kind", "lyric", "visual prompt", "section", "mood"],
        "data": [[0, 1, "intro", "", "x", "intro", ""]],
    }
    pid = server_process[1].pid
    # 900 megapixels (past Pillow's own bomb limit), and 100 (under it: gr.Image took 0.5 GB more to decode it)
    for side in (30000, 10000):
        bomb = tmp_path / f"bomb {side}.png"
        blank_png(bomb, side, side)
        reset_peak(pid)
        before = rss_mb(pid)
        with pytest.raises(AppError) as refused:
            client.predict("", "", *controls(), table, "", 0, handle_file(str(bomb)), api_name="/pin_picture")
        after = rss_mb(pid, peak=True)
        message = str(refused.value)
        assert message.startswith(f"picture bomb {side}.png ") and "more than the 40 megapixels" in message, message
        assert after - before < 50, f"the server took {after - before:.0f} MB more to read a {side}x{side} picture"
    assert urllib.request.urlopen(server_process[0], timeout=5).status == 200


@pytest.mark.slow
def test_two_sessions_pressing_make_video_and_make_storyboard_at_once_both_finish(server):
    from gradio_client import Client, handle_file

    song = handle_file(str(DEMO_SONG))
    one, two = Client(server, verbose=False), Client(server, verbose=False)
    # karaoke lyrics, wide, on the beat, 24 fps from the 4 drawn, a zoom, a pulse, as a preview
    look = dict(captions="karaoke", aspect="16:9", pacing="beats", output_fps="24", motion="zoom", pulse=0.5)
    look = controls(**look, preview=True)
    video_job = one.submit(song, "One", "A", TIMED_LYRICS, *look, api_name="/make_video")
    other = controls(seed=5)  # another seed, as a second person might choose
    storyboard_job = two.submit(song, "Two", "B", TIMED_LYRICS, *other, api_name="/make_storyboard")
    table, video, files, job, status = video_job.result(timeout=300)
    assert probe(video) == ("h264", "aac") and "Done" in status
    with av.open(video) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height, stream.average_rate) == (88, 48, 24)  # 16:9, interpolated
    assert any(f.endswith(".ass") for f in files)  # the karaoke timing, for editors
    other_table, other_job, other_status = storyboard_job.result(timeout=300)
    assert other_job != job and "Storyboard ready" in other_status
    assert [row[3] for row in other_table["data"]] == [row[3] for row in table["data"]]  # the same lyric rows
    storyboard = json.loads(next(Path(f) for f in files if f.endswith(".json")).read_text())
    assert storyboard["title"] == "One" and [s["prompt"] for s in storyboard["scenes"]] == [
        row[4] for row in table["data"]
    ]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def launch(p):
    return p.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    )


def open_page(
    browser,
    server,
    fps: int | None = None,
    steps: int | None = None,
    size: str | None = None,
    preview: bool = False,
):
    """The page with the demo song uploaded, its timed lyrics pasted, and the settings asked for."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server)
    page.locator("input[type=file]").first.set_input_files(str(DEMO_SONG))
    # the upload is the page's once its player shows the song's length: a button pressed before then
    # would send no song (seen on a slow machine)
    page.get_by_text("0:41").first.wait_for(timeout=120_000)
    page.get_by_label("Title").fill("Lighthouse")
    page.get_by_label("Lyrics (optional)").fill(TIMED_LYRICS)
    # the settings' groups, opened as a person opens them; a number is the page's once the field is left, as a
    # person leaves it (Tab)
    if steps or size:
        page.get_by_text("Pictures", exact=True).click()
    if fps or preview:
        page.get_by_text("Motion", exact=True).click()
    if fps:
        page.get_by_label("Frames per second").fill(str(fps))
        page.get_by_label("Frames per second").press("Tab")
    if steps:
        page.get_by_label("Denoising steps").fill(str(steps))
        page.get_by_label("Denoising steps").press("Tab")
    if size:
        page.get_by_label("Size (W×H)").click()
        page.get_by_role("option", name=size).click()
    if preview:
        page.get_by_label("Preview: keyframes crossfaded, in this look (fast)").check()
    return page


def video_source(page) -> str:
    video = page.locator("video")
    return video.get_attribute("src") or video.locator("source").first.get_attribute("src") or ""


def edit_prompt(page, row: int, text: str) -> None:
    """Type into the prompt cell of a row of the storyboard table, as a person does."""
    cell = page.locator(f'[role=gridcell][data-row="{row}"][data-col="4"]')
    cell.dblclick()
    # the editor the double click opens: filled when it is there (keys pressed before it has the focus
    # would select nothing, and the text would be added to the old one)
    editor = cell.locator("textarea, input").first
    editor.fill(text)
    editor.press("Enter")
    cell.get_by_text(text).wait_for(timeout=10_000)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_review_edit_render_and_render_again_in_a_real_browser(server, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    started = time.time()
    known = set(jobs_dir.iterdir())
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, server, fps=4)  # fewer frames: the loop is what is tested
        page.get_by_role("button", name="Make storyboard").click()
        page.get_by_text("Storyboard ready").wait_for(timeout=120_000)
        # keyframes first; a click on the third picks scene 2, and New picture draws that one again
        page.get_by_role("button", name="Draw keyframes").click()
        page.get_by_text("Keyframes ready").wait_for(timeout=120_000)
        [job] = set(jobs_dir.iterdir()) - known
        drawn = {p.name: p.read_bytes() for p in (job / "work" / "keyframes").iterdir()}
        page.locator(".thumbnail-item").nth(2).click()
        playwright.expect(page.get_by_label("Scene", exact=True)).to_have_value("2")
        page.get_by_role("button", name="New picture").click()
        page.get_by_text("Keyframes ready (1 drawn)").wait_for(timeout=120_000)
        redrawn = [name for name, data in drawn.items() if (job / "work" / "keyframes" / name).read_bytes() != data]
        assert redrawn == [Workdir(job).keyframe(2).name]
        sources = []
        for prompt in ("a lighthouse made of glass", "a lighthouse made of ice"):
            edit_prompt(page, 1, prompt)
            page.get_by_role("button", name="Render", exact=True).click()
            page.wait_for_function(
                "([before]) => { const v = document.querySelector('video');"
                " return v && v.readyState >= 1 && (v.currentSrc || v.src) && !before.includes(v.currentSrc || v.src); }",
                arg=[sources],
                timeout=240_000,
            )
            sources.append(video_source(page))
            [job] = set(jobs_dir.iterdir()) - known
            storyboard = json.loads((job / "work" / "storyboard.json").read_text())
            assert storyboard["scenes"][1]["prompt"] == prompt
            with av.open(str(job / "demo.mp4")) as container:
                assert container.streams.video[0].average_rate == 4  # the page's setting reached the video
        artifacts = Path(os.environ.get("MUSICVID_TEST_ARTIFACTS", Path(__file__).parents[1] / "test-artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(artifacts / "ui-finished.png"), full_page=True)
        browser.close()
    assert len(set(sources)) == 2  # a second video, not the first one again
    print(f"browser review loop: {time.time() - started:.1f} s; screenshot {artifacts / 'ui-finished.png'}")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_render_pressed_while_the_storyboard_is_made_renders_it(server, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    known = set(jobs_dir.iterdir())
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, server, preview=True)  # a preview: the press is what is tested, not the drawing
        first_prompt = page.locator('[role=gridcell][data-row="0"][data-col="4"]')
        page.get_by_role("button", name="Make storyboard").click()
        # pressed a moment before the table shows, as a press "when it appears" can be: the browser sends the
        # page as it is at the press (no storyboard yet), and the render waits for the storyboard's end
        page.get_by_role("button", name="Render", exact=True).click()
        assert first_prompt.count() == 0, "the storyboard was ready before Render was pressed"
        done, refused = page.get_by_text("Done:"), page.get_by_text("make the storyboard first")
        done.or_(refused).first.wait_for(timeout=120_000)
        assert refused.count() == 0 and done.count() == 1
        [job] = set(jobs_dir.iterdir()) - known
        storyboard = json.loads((job / "work" / "storyboard.json").read_text())
        assert first_prompt.inner_text().strip() == storyboard["scenes"][0]["prompt"]  # the one rendered
        assert probe(job / "demo.preview.mp4") == ("h264", "aac")
        browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_cancel_stops_a_long_denoise_within_seconds(server_process, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    server, process = server_process
    known = set(jobs_dir.iterdir())

    def rendering() -> bool:
        return any((job / "work" / "storyboard.json").exists() for job in set(jobs_dir.iterdir()) - known)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        # 150 steps at 256x256: each picture denoises for seconds on this CPU
        page = open_page(browser, server, steps=150, size="256x256")
        page.get_by_role("button", name="Make video (no review)").click()
        deadline = time.time() + 120
        while not rendering() and time.time() < deadline:
            time.sleep(0.2)
        assert rendering(), "the render never started"
        time.sleep(2)  # well inside the first group's denoising loop
        busy = cpu_seconds(process.pid)
        time.sleep(2)
        assert cpu_seconds(process.pid) - busy > 1.0  # the server is denoising
        page.get_by_role("button", name="Cancel").click()
        time.sleep(2)
        [job] = set(jobs_dir.iterdir()) - known
        drawn = sorted(job.glob("work/*/*.png"))  # the keyframes finished before Cancel (how many: the CPU's speed)
        idle = cpu_seconds(process.pid)
        time.sleep(3)
        used = cpu_seconds(process.pid) - idle
        assert used < 0.5, f"the server still worked {used:.1f} s of CPU in the 3 s after Cancel took effect"
        assert sorted(job.glob("work/*/*.png")) == drawn  # and no picture after it
        assert page.locator("video").count() == 0 or not video_source(page)
        browser.close()
    assert urllib.request.urlopen(server, timeout=5).status == 200
