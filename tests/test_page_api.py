"""The page driven as programs use it, through gradio_client: the whole loop (storyboard, edits, keyframes, a new
picture, a pinned one, renders in other looks), each session's jobs its own, broken edits and bad uploads refused
in one sentence while the server keeps serving, uploads too long or too big refused before they are decoded, and
two sessions at once."""

import json
import struct
import subprocess
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
from tests.served_page import TIMED_LYRICS, codecs, controls, cpu_seconds, page_jobs

# (the whole file in the ci tier: a served page of its own, started and stopped, and its whole loops, a minute and a
# half of the suite's 6; the page's handlers are tested in process in the suite, tests/test_page_*.py)
pytestmark = pytest.mark.ci


def rss_mb(pid: int, peak: bool = False) -> float:
    """The process's resident memory now, or at its peak since reset_peak."""
    status = Path(f"/proc/{pid}/status").read_text()
    field = "VmHWM:" if peak else "VmRSS:"
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(field))) / 1024


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the kernel counts the peak again from here


@pytest.fixture
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


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
        None, "", "", "", *controls(), table, job, api_name="/make_keyframes"
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
    keyframe = page_jobs(jobs_dir) / job / "work" / "keyframes" / Workdir(Path()).keyframe(3).name
    assert np.array_equal(np.asarray(Image.open(keyframe)), cover(band, (64, 64))) and "1 drawn" in status
    video, files, job_after, status, _ = client.predict(
        song, "Lighthouse", "The Tiny Models", "", *controls(captions="line"), table, job, api_name="/render"
    )
    assert job_after == job
    row = 1 + next(n for n, r in enumerate(table["data"]) if r[3] == sung[2])
    assert f"cannot draw (rows {row}: 🔥)" in status
    work = page_jobs(jobs_dir) / job / "work"
    morphs = len(list((work / "frames").glob("*.png")))
    assert json.loads((work / "timings.json").read_text())["pictures_drawn"] == morphs  # keyframes were kept
    assert codecs(video) == ("h264", "aac")
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
    known = set(page_jobs(jobs_dir).iterdir())
    # refused by ffmpeg in the job's folder, and before the copy in Gradio's: both named as the person named them
    for upload, refusal in ((text, "my notes.mp3 is not audio"), (empty, "empty.mp3 is empty")):
        with pytest.raises(AppError) as refused:
            client.predict(handle_file(str(upload)), "", "", "", *controls(), api_name="/make_storyboard")
        message = str(refused.value)
        assert message.startswith(refusal) and "/" not in message, message
    assert urllib.request.urlopen(server, timeout=5).status == 200
    assert set(page_jobs(jobs_dir).iterdir()) == known  # a refused song leaves no job behind


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
    known, before = set(page_jobs(jobs_dir).iterdir()), rss_mb(pid)
    with pytest.raises(AppError, match="120.0 minutes; the limit is 15 minutes"):
        client.predict(handle_file(str(long)), "", "", "", *controls(), api_name="/make_storyboard")
    after = rss_mb(pid)
    print(f"server memory: {before:.0f} MB before the two-hour upload, {after:.0f} MB after")
    assert after - before < 50
    assert set(page_jobs(jobs_dir).iterdir()) == known


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
    video_pipeline_for = one.submit(song, "One", "A", TIMED_LYRICS, *look, api_name="/make_video")
    other = controls(seed=5)  # another seed, as a second person might choose
    storyboard_job = two.submit(song, "Two", "B", TIMED_LYRICS, *other, api_name="/make_storyboard")
    table, video, files, job, status = video_pipeline_for.result(timeout=300)
    assert codecs(video) == ("h264", "aac") and "Done" in status
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


# A client of the page in a process of its own, which the test kills: it submits Make video and waits.
CLIENT = """
import json, sys, time
from gradio_client import Client, handle_file
server, song, lyrics, controls = json.loads(sys.argv[1])
Client(server, verbose=False).submit(handle_file(song), "", "", lyrics, *controls, api_name="/make_video")
time.sleep(600)
"""


def denoising(pid: int, within: float = 60) -> None:
    """Wait until the process `pid` works (over a second of CPU in 3 s): at once where nothing else does, later where
    the other worker's test takes the cores (CI's two)."""
    deadline = time.time() + within
    while True:
        busy = cpu_seconds(pid)
        time.sleep(3)
        if cpu_seconds(pid) - busy > 1.0:
            return
        assert time.time() < deadline, f"the server did not denoise within {within:g} s"


@pytest.mark.slow
@pytest.mark.parametrize("leaves", ["cancels", "is killed"])
def test_a_job_whose_client_cancels_or_is_killed_stops_within_a_step_and_frees_the_models(
    server_process, jobs_dir, leaves
):
    import sys

    from gradio_client import Client, handle_file

    server, process = server_process
    known = set(page_jobs(jobs_dir).iterdir())
    long = controls(steps=150, size="256x256")  # each picture denoises for seconds on this CPU
    if leaves == "cancels":
        job = Client(server, verbose=False).submit(
            handle_file(str(DEMO_SONG)), "", "", TIMED_LYRICS, *long, api_name="/make_video"
        )
    else:
        argv = json.dumps([server, str(DEMO_SONG), TIMED_LYRICS, long])
        job = subprocess.Popen([sys.executable, "-c", CLIENT, argv])
    deadline = time.time() + 120
    while not any((j / "work" / "storyboard.json").exists() for j in set(page_jobs(jobs_dir).iterdir()) - known):
        assert time.time() < deadline, "the render never started"
        time.sleep(0.2)
    try:
        time.sleep(2)  # well inside the first group's denoising loop
        denoising(process.pid)
    finally:  # (and where it never was, the next test's job is not left behind this one's)
        job.cancel() if leaves == "cancels" else job.kill()
    time.sleep(3)  # (a killed client is missed by its next heartbeat, within the second the test's server beats)
    [made] = set(page_jobs(jobs_dir).iterdir()) - known
    drawn, idle = sorted(made.glob("work/*/*.png")), cpu_seconds(process.pid)
    time.sleep(3)
    used = cpu_seconds(process.pid) - idle
    assert used < 0.5, f"the server still worked {used:.1f} s of CPU in the 3 s after its client {leaves}"
    assert sorted(made.glob("work/*/*.png")) == drawn and not list(made.glob("*.mp4"))
    # the models are free: another visitor's storyboard is made now, not after that render's minutes
    table, _, status = Client(server, verbose=False).predict(
        handle_file(str(DEMO_SONG)), "", "", TIMED_LYRICS, *controls(), api_name="/make_storyboard"
    )
    assert "Storyboard ready" in status
