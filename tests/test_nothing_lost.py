"""Nothing a person owns is lost, and every check comes before the work: outputs are never inputs, `-o`
names a video, one run holds a work directory, and bad files, pictures, upscalers and transcripts are
refused (exit 2, one sentence) before any transcription or drawing."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.core.files import VIDEO_SUFFIXES
from musicvid.core.workdir import Workdir
from musicvid.delivery.mux import encode_video
from musicvid.lyrics.known import read_lyrics
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import TINY_QUIET, digest, make_tone, quick, run


def video_frames(path: Path) -> int:
    with av.open(str(path)) as container:
        return sum(1 for _ in container.decode(video=0))


@pytest.mark.parametrize("case", ["the song", "its subtitles are the lyrics", "a hard link to the song"])
def test_an_output_that_is_an_input_is_refused_before_any_work(capsys, tmp_path, case):
    song = make_tone(tmp_path / "song.mp3", 2)
    lyrics = tmp_path / "song.srt"
    lyrics.write_text("1\n00:00:00,500 --> 00:00:01,500\na light in the storm\n")
    link = tmp_path / "link.mp4"
    os.link(song, link)
    output = {"the song": song, "its subtitles are the lyrics": tmp_path / "song.mp4", "a hard link to the song": link}
    kept = {path: digest(path) for path in (song, lyrics)}
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--lyrics", lyrics, "--workdir", tmp_path / "w", "-o", output[case]
    )
    assert code == 2 and "would write over it" in err and err.count("\n") == 1
    assert {path: digest(path) for path in kept} == kept
    assert not (tmp_path / "w").exists()  # nothing was decoded, nothing transcribed


def test_the_default_name_steps_aside_from_lyrics_beside_the_song(tmp_path):
    from musicvid.run import default_output
    from musicvid.settings.render import RenderSettings
    from musicvid.settings.song import SongRequest

    song = tmp_path / "song.mp3"
    lyrics = tmp_path / "song.srt"
    assert default_output(SongRequest(song=song), RenderSettings()) == tmp_path / "song.mp4"
    assert default_output(SongRequest(song=song, lyrics_file=lyrics), RenderSettings()) == tmp_path / "song.video.mp4"
    clip = tmp_path / "clip.mp4"
    preview = RenderSettings(preview=True)
    assert default_output(SongRequest(song=clip), preview) == tmp_path / "clip.preview.mp4"


def test_o_takes_only_video_names(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "-o", tmp_path / "v.srt")
    assert code == 2 and "must name a video file ending in .mp4" in err
    assert not (tmp_path / "v.srt").exists()


@pytest.mark.parametrize("suffix", VIDEO_SUFFIXES)
def test_every_name_o_takes_is_written_as_a_video(tmp_path, suffix):
    frames = [np.full((64, 64, 3), level, np.uint8) for level in (0, 128, 255)]
    output = tmp_path / f"v{suffix}"
    encode_video(frames, width=64, height=64, fps=10, audio=None, output=output)
    with av.open(str(output)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
    assert video_frames(output) == 3


@pytest.mark.slow
def test_a_second_run_on_a_held_work_directory_is_refused_and_the_first_keeps_the_song(capsys, tmp_path):
    song = make_tone(tmp_path / "clip.mp4", 2)  # a common download: AAC in an MP4, no video
    before = digest(song)
    workdir, go = tmp_path / "w", tmp_path / "go"
    # the first run (no -o) is paused with its video encoded under a temporary name, about to be
    # renamed: the moment a second run's sweep of leftovers would take it away
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.killer",
            "--pause-until",
            go,
            "*/w/video.mp4",
            "1",
            "--",
            *quick(song, "--workdir", workdir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not Path(f"{go}.paused").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert list(workdir.glob(".musicvid-*.video.mp4.*")), (
            first.stderr.read().decode() if first.poll() is not None else ""
        )
        code, out, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "second.mp4"))
        assert code == 2 and "is in use by another musicvid run" in err and err.count("\n") == 1
    finally:
        go.touch()  # the first run goes on, whatever the second did (a test that failed leaves no process)
    try:
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 0, err.decode()
    # the video does not take the song's name: clip.mp4 is still the song
    video = tmp_path / "clip.video.mp4"
    assert out.decode().strip() == str(video) and video_frames(video) == 4
    assert digest(song) == before and (tmp_path / "clip.video.srt").exists()
    assert not (tmp_path / "second.mp4").exists()


def test_a_run_that_waits_gets_the_work_directory_once_the_other_lets_it_go(tmp_path):
    taken, order = threading.Event(), []

    def other() -> None:
        with Workdir(tmp_path / "w").held():
            taken.set()
            time.sleep(0.5)
            order.append("other done")

    thread = threading.Thread(target=other)
    thread.start()
    taken.wait()
    with pytest.raises(UserError, match="in use"):
        with Workdir(tmp_path / "w").held():
            pass
    with Workdir(tmp_path / "w").held(wait=True):
        order.append("waited")
    thread.join()
    assert order == ["other done", "waited"]


def test_a_song_shorter_than_one_frame_is_refused(capsys, tmp_path):
    song = make_tone(tmp_path / "blip.wav", 0.3)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--fps", "1", "--workdir", tmp_path / "w")
    assert code == 2 and "not one frame of video" in err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("upscaler", ["/etc/passwd", "random.pth"])
def test_a_file_that_is_no_upscaler_is_named_before_any_work(capsys, tmp_path, upscaler):
    (tmp_path / "random.pth").write_bytes(np.random.default_rng(0).bytes(4096))
    path = upscaler if upscaler.startswith("/") else tmp_path / upscaler
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--workdir", tmp_path / "w", "--resolution", "720p", "--upscaler", path
    )
    assert code == 2 and "is not an upscaler spandrel can load" in err and "--models tiny" not in err
    assert not (tmp_path / "w").exists()  # refused before the transcription and the drawing


def test_an_upscaler_without_a_resolution_is_refused(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--upscaler", "lanczos")
    assert code == 2 and "--upscaler only acts with --resolution" in err


@pytest.mark.parametrize("size", [(30000, 30000), (10000, 10000)])
def test_a_pinned_picture_too_big_is_refused_from_its_header(capsys, tmp_path, size):
    picture = tmp_path / "huge.png"
    Image.new("1", size).save(picture)  # a few hundred KB on disk, gigabytes decoded
    song = make_tone(tmp_path / "song.wav", 2)
    scene = Scene(0, "intro", 0.0, 2.0, prompt="a lighthouse", seed=1, picture=str(picture))
    storyboard = Storyboard(SongAudio(2.0, str(song), ""), scenes=[scene])
    storyboard.save(tmp_path / "storyboard.json")
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--storyboard", tmp_path / "storyboard.json", "--workdir", tmp_path / "w"
    )
    assert code == 2 and "more than the 40 megapixels a picture may have" in err
    assert not (tmp_path / "w").exists()


def test_a_work_directory_that_is_a_file_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "w").write_text("not a folder")
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", tmp_path / "w")
    assert code == 2 and "is a file: give --workdir a folder" in err


@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) runs the command as another user")
@pytest.mark.slow
def test_a_read_only_work_directory_is_refused_before_any_work(demo_song):
    # as root every folder is writable: the run is made as nobody, for whom this one is read-only
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        folder.chmod(0o777)
        song = shutil.copyfile(demo_song, folder / "song.mp3")
        (folder / "locked").mkdir(mode=0o555)
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "musicvid"]
        command += ["render", str(song), "--models", "tiny", "-q", "--workdir", str(folder / "locked" / "w")]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HOME": str(folder)})
    assert done.returncode == 2, done.stderr
    assert "cannot be written" in done.stderr and "is read-only" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "change,field",
    [
        ({"confidence": "high"}, "lines[0].confidence must be a number"),
        ({"text_en": 123}, "lines[0].text_en must be a string"),
        ({"start": None}, "lines[0].start must be a number"),
        ({"words": [{"start": 1, "end": 2}]}, "lines[0].words[0].text must be a string"),
        ({"end": 0.5}, "lines[0].end (0.5) is before its start (1.0)"),
    ],
)
def test_a_bad_transcript_json_names_its_field_and_leaves_nothing(capsys, tmp_path, change, field):
    song = make_tone(tmp_path / "song.wav", 3)
    lyrics = tmp_path / "t.json"
    lyrics.write_text(json.dumps({"lines": [{"start": 1.0, "end": 2.0, "text": "a light", **change}]}))
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and field in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()  # a refused run leaves no empty work directory
    assert not (tmp_path / "song.mp4").exists()


def test_a_storyboard_its_loader_would_refuse_is_never_saved(tmp_path):
    scene = Scene(0, "lyric", 0.0, 2.0, "a light", "a lighthouse", 1, confidence="high")
    storyboard = Storyboard(SongAudio(2.0), scenes=[scene])
    with pytest.raises(UserError, match=r"scenes\[0\].confidence must be a number"):
        storyboard.save(tmp_path / "storyboard.json")
    assert not (tmp_path / "storyboard.json").exists()


@pytest.mark.parametrize(
    "cue,reason",
    [
        ("00:00:02,000 --> 00:00:01,000", "cue 2 ends before it starts (00:00:02,000 --> 00:00:01,000)"),
        ("-00:00:01,000 --> 00:00:01,000", "cue 2 has a negative time"),
    ],
)
def test_srt_cues_with_impossible_times_are_named(tmp_path, cue, reason):
    lyrics = tmp_path / "song.srt"
    lyrics.write_text(f"1\n00:00:00,500 --> 00:00:01,000\nfirst\n\n2\n{cue}\nsecond\n")
    with pytest.raises(UserError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        read_lyrics(lyrics, 10.0)
