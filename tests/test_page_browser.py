"""The page driven as people use it, in a real browser (Chromium, driven by Playwright): review, edit, render
and render again; Render pressed while the storyboard is made renders it; Cancel stops a long denoise within
seconds."""

import json
import os
import shutil
import time
import urllib.request
from pathlib import Path

import av
import pytest

from musicvid.core.assets import DEMO_SONG
from musicvid.core.workdir import Workdir
from tests.served_page import TIMED_LYRICS, codecs, cpu_seconds, page_jobs

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
    # a file set before the page's components are live is lost: the song is given once the page is drawn
    page.get_by_label("Title").wait_for(timeout=60_000)
    # the upload is the page's once its player shows the song's length: a button pressed before then
    # would send no song (seen on a slow machine). A file given while the page still hydrates can be dropped
    # without a word, the input it was given to replaced by another: while the song's own input (the one that takes
    # audio; it is gone once the player has the song) is still there after 30 s, the song is given again, as a person
    # drops it again. (Where the first input was held on to, a replaced one was never given the song again: 2 runs of 3
    # on a loaded machine waited 150 s there.)
    from playwright.sync_api import TimeoutError as NotShown

    length, song = page.get_by_text("0:41").first, page.locator('input[type=file][accept*="audio"]')
    for _ in range(4):
        if song.count():
            song.first.set_input_files(str(DEMO_SONG))
        try:
            length.wait_for(timeout=30_000)
            break
        except NotShown:
            continue
    else:
        pytest.fail(f"the song's length never showed in 120 s; the page shows: ...{shown(page)}")
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


def shown(page) -> str:
    """The end of what the page shows, for a failure's message."""
    return page.locator("body").inner_text()[-1500:]


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
@pytest.mark.ci
def test_review_edit_render_and_render_again_in_a_real_browser(server, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    started = time.time()
    known = set(page_jobs(jobs_dir).iterdir())
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, server, fps=4)  # fewer frames: the loop is what is tested
        page.get_by_role("button", name="Make storyboard").click()
        page.get_by_text("Storyboard ready").wait_for(timeout=120_000)
        # keyframes first; a click on the third picks scene 2, and New picture draws that one again
        page.get_by_role("button", name="Draw keyframes").click()
        page.get_by_text("Keyframes ready").wait_for(timeout=120_000)
        [job] = set(page_jobs(jobs_dir).iterdir()) - known
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
            [job] = set(page_jobs(jobs_dir).iterdir()) - known
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
@pytest.mark.ci
def test_render_pressed_while_the_storyboard_is_made_renders_it(server, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    known = set(page_jobs(jobs_dir).iterdir())
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, server, preview=True)  # a preview: the press is what is tested, not the drawing
        first_prompt = page.locator('[role=gridcell][data-row="0"][data-col="4"]')
        page.get_by_role("button", name="Make storyboard").click()
        # pressed once the storyboard's job has begun on the server (its folder is there), before the table shows,
        # as a press "when it appears" can be: the browser sends the page as it is at the press (no storyboard
        # yet), and the render waits for the storyboard's end. (Two presses a millisecond apart, which no person
        # makes, may reach Gradio's queue in either order.)
        deadline = time.time() + 60
        while not set(page_jobs(jobs_dir).iterdir()) - known and time.time() < deadline:
            time.sleep(0.05)
        page.get_by_role("button", name="Render", exact=True).click()
        assert first_prompt.count() == 0, "the storyboard was ready before Render was pressed"
        done, refused = page.get_by_text("Done:"), page.get_by_text("make the storyboard first")
        try:  # (the storyboard, then the preview: 4 minutes on 2 cores shared with a Whisper test, at worst)
            done.or_(refused).first.wait_for(timeout=240_000)
        except Exception:
            pytest.fail(f"no 'Done:' after 240 s; the page shows: ...{shown(page)}")
        assert refused.count() == 0 and done.count() == 1
        [job] = set(page_jobs(jobs_dir).iterdir()) - known
        storyboard = json.loads((job / "work" / "storyboard.json").read_text())
        assert first_prompt.inner_text().strip() == storyboard["scenes"][0]["prompt"]  # the one rendered
        assert codecs(job / "demo.preview.mp4") == ("h264", "aac")
        browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
@pytest.mark.ci
def test_cancel_stops_a_long_denoise_within_seconds(server_process, jobs_dir):
    playwright = pytest.importorskip("playwright.sync_api")
    server, process = server_process
    known = set(page_jobs(jobs_dir).iterdir())

    def rendering() -> bool:
        return any((job / "work" / "storyboard.json").exists() for job in set(page_jobs(jobs_dir).iterdir()) - known)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        # 150 steps at 256x256: each picture denoises for seconds on this CPU
        page = open_page(browser, server, steps=150, size="256x256")
        page.get_by_role("button", name="Make video (no review)").click()
        # (the storyboard first: as long as the other test's, 4 minutes at worst on 2 cores shared with a Whisper test;
        # 120 s ran out in 3 of 27 CI runs)
        deadline = time.time() + 240
        while not rendering() and time.time() < deadline:
            time.sleep(0.2)
        # (what the page and the job's folder show, where it did not)
        jobs = {job.name: sorted(p.name for p in job.rglob("*")) for job in set(page_jobs(jobs_dir).iterdir()) - known}
        assert rendering(), f"the render never started within 240 s; new jobs: {jobs}; the page shows: ...{shown(page)}"
        time.sleep(2)  # well inside the first group's denoising loop
        busy = cpu_seconds(process.pid)
        time.sleep(4)  # (the suite's other worker shares the 2 cores: the server gets half of one, or less)
        assert cpu_seconds(process.pid) - busy > 1.0  # the server is denoising
        page.get_by_role("button", name="Cancel").click()
        time.sleep(2)
        [job] = set(page_jobs(jobs_dir).iterdir()) - known
        drawn = sorted(job.glob("work/*/*.png"))  # the keyframes finished before Cancel (how many: the CPU's speed)
        idle = cpu_seconds(process.pid)
        time.sleep(3)
        used = cpu_seconds(process.pid) - idle
        assert used < 0.5, f"the server still worked {used:.1f} s of CPU in the 3 s after Cancel took effect"
        assert sorted(job.glob("work/*/*.png")) == drawn  # and no picture after it
        assert page.locator("video").count() == 0 or not video_source(page)
        browser.close()
    assert urllib.request.urlopen(server, timeout=5).status == 200
