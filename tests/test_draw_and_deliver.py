"""Where the pictures are drawn on a GPU, the video is delivered while they are drawn
(deliver.draw_and_deliver): each frame goes to ffmpeg as soon as its picture is written, the video comes
out the same as one delivered afterwards (the CPU's way), and a drawing that stops takes the delivery with
it, leaving no video, temporary or ffmpeg behind."""

import threading

import numpy as np
import psutil
import pytest

import musicvid.delivery.deliver
import musicvid.pipeline
from musicvid.core.errors import Cancelled, RenderError
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.pictures.frames import HANDED, PendingPictures
from musicvid.settings.presets import PRESETS
from musicvid.settings.resolve import resolve_render_settings
from musicvid.settings.song import SongRequest
from tests.helpers import make_tone, probe

LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def test_a_reader_waits_for_a_pending_picture_until_it_is_saved_or_the_drawing_ends(tmp_path):
    kept, drawn, never = tmp_path / "kept.png", tmp_path / "drawn.png", tmp_path / "never.png"
    pending = PendingPictures({drawn, never})
    pending.wait(kept)  # not pending: on disk already

    read = threading.Event()
    reader = threading.Thread(target=lambda: (pending.wait(drawn), read.set()))
    reader.start()
    assert not read.wait(0.2)  # still waiting
    pending.saved(drawn)
    assert read.wait(5)
    reader.join()

    failures = []
    reader = threading.Thread(target=lambda: failures.append(pytest.raises(RenderError, pending.wait, never)))
    reader.start()
    pending.close()
    reader.join(5)
    assert not reader.is_alive() and "the drawing ended before never.png was drawn" in str(failures[0].value)
    pending.wait(drawn)  # what was saved stays readable after the end

    # a picture saved with its pixels hands them to the reader, once (then it reads the PNG), and only so many ahead
    handed = [tmp_path / f"{k}.png" for k in range(HANDED + 1)]
    pending = PendingPictures(set(handed))
    pixels = np.zeros((4, 4, 3), np.uint8)
    for path in handed:
        pending.saved(path, pixels)
    assert pending.wait(handed[0]) is pixels and pending.wait(handed[0]) is None
    assert pending.wait(handed[-1]) is None  # past the bound: read from its PNG


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    path = make_tone(tmp_path_factory.mktemp("song") / "song.mp3", 6.03)
    path.with_suffix(".lrc").write_text(LYRICS)
    return path


def make(song, workdir, stop=None):
    registry = ModelRegistry(PRESETS["tiny"], "cpu")
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=workdir, quiet=True)
    timings = Timings()
    settings = resolve_render_settings(PRESETS["tiny"], {})
    video = musicvid.pipeline.make_video(
        request, settings, registry, output=workdir.parent / f"{workdir.name}.mp4", timings=timings, stop=stop
    )
    return video, timings


@pytest.fixture
def beside_the_drawing(monkeypatch):
    """The delivery beside the drawing, as on a GPU (on the CPU it waits for the drawing to end)."""
    monkeypatch.setattr(musicvid.delivery.deliver, "delivers_while_drawing", lambda device: True)


@pytest.mark.slow
def test_the_delivery_runs_while_the_pictures_are_drawn_and_makes_the_video_the_cpu_makes_after_them(
    song, tmp_path, monkeypatch, beside_the_drawing
):
    video, timings = make(song, tmp_path / "w")
    (mux,) = [(start, end) for stage, start, end in timings.intervals if stage == "mux"]
    # the keyframes are picked (drawn and scored) first: the frames between start from the kept seeds
    picked = max(end for stage, start, end in timings.intervals if stage == "score keyframes")
    drawing = [(start, end) for stage, start, end in timings.intervals if stage in ("denoise", "decode")]
    between = [(start, end) for start, end in drawing if start > picked]
    assert picked < mux[0] < between[0][0] and between[-1][1] < mux[1]  # delivering from before the frames between
    # its time is its own work, without its waits for the pictures
    assert 0 < timings.seconds["mux"] < mux[1] - mux[0] - sum(end - start for start, end in drawing) / 2
    assert probe(video.video)["frames"] == video.frames == 60

    # the same video as the CPU's way: drawn first, then delivered
    monkeypatch.setattr(musicvid.delivery.deliver, "delivers_while_drawing", lambda device: False)
    after, timings = make(song, tmp_path / "after")
    (mux,) = [start for stage, start, end in timings.intervals if stage == "mux"]
    assert mux > max(end for stage, start, end in timings.intervals if stage == "decode")  # after the drawing
    assert after.pictures_drawn == video.pictures_drawn
    assert after.video.read_bytes() == video.video.read_bytes()


@pytest.mark.slow
def test_a_drawing_stopped_midway_ends_the_delivery_and_leaves_no_video(
    song, tmp_path, monkeypatch, beside_the_drawing
):
    stop = threading.Event()

    class StopAfterFive(PendingPictures):
        def saved(self, path, pixels=None):
            super().saved(path, pixels)
            self.count = getattr(self, "count", 0) + 1
            if self.count == 5:
                stop.set()

    monkeypatch.setattr(musicvid.delivery.deliver, "PendingPictures", StopAfterFive)
    threads, processes = set(threading.enumerate()), set(psutil.Process().children(recursive=True))
    with pytest.raises(Cancelled):
        make(song, tmp_path / "w", stop=stop)
    assert set(threading.enumerate()) <= threads  # the delivery's thread is gone
    assert (
        set(psutil.Process().children(recursive=True)) <= processes
    )  # and its ffmpeg (a page another test serves stays)
    assert not (tmp_path / "w.mp4").exists() and not (tmp_path / "w" / "video.mp4").exists()
    assert [p for p in (tmp_path / "w").rglob(".*.mp4")] == []  # no half-written video
    assert 5 <= len(list((tmp_path / "w").glob("*/*.png"))) < 60  # what was drawn stays, for a resume
