"""Reruns in one work directory (a probe's findings, round 10): a storyboard whose title or artist a person edited
is built on, not made anew; one made by ViPE in another dtype, or from a transcript made in another, is made anew;
`score` measures only the frames of the render it scores; the .ass an earlier run wrote beside the video goes with
--captions none (any other stays, said); a picture's name that holds a folder is refused before any work."""

import dataclasses
import errno
import logging
import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from PIL import Image

from musicvid.core.errors import UserError, out_of_room
from musicvid.core.outputs import write_output
from musicvid.core.workdir import Workdir
from musicvid.delivery.deliver import stale_script
from musicvid.lyrics.transcript import Transcript
from musicvid.models.drawing import Drawing
from musicvid.models.precision import Precision
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.pictures.cache import save_picture
from musicvid.pictures.draw import Pictures
from musicvid.pictures.grouping import Picture
from musicvid.pictures.schedule import frame_schedule
from musicvid.review.checks import check_pictures
from musicvid.review.run_report import run_summary
from musicvid.review.score import drawn_morphs, morph_smoothness
from musicvid.settings.presets import PRESETS
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, parse_storyboard
from musicvid.storyboard.make import _same_making, asr_dtype, get_transcript, made_with_of, transcript_source
from tests.helpers import make_tone, quick, run, valid_board, work_directory
from vipe_core.atomic import write_json

TINY = PRESETS["tiny"]
CPU = torch.device("cpu")
FASTER = dataclasses.replace(TINY, asr_backend="faster-whisper")


def made(precision: str = "auto", title: str = "Song", artist: str = "Band"):
    """What a storyboard of a song titled `title` by `artist` is made with on this CPU, in `precision`."""
    registry = ModelRegistry(TINY, "cpu", precision=precision)
    transcript = Transcript([], "en", "lyrics:song.lrc", "song")
    return made_with_of(SongRequest(song=Path("song.mp3")), registry, transcript, title, artist)


def saved(making, **fields) -> Storyboard:
    """The storyboard.json `making` made, read back, with `fields` of it edited (its settings' too: `settings`)."""
    return parse_storyboard(valid_board() | {"title": "Song", "artist": "Band", "settings": making.to_json()} | fields)


def test_a_title_or_artist_edited_in_the_storyboard_is_an_edit_not_another_making():
    making = made()
    edited = saved(making, title="Song (live)", artist="The Band")
    assert (edited.settings.title, edited.settings.artist) == ("Song", "Band")  # what it was made for, read back
    assert _same_making(edited, making)  # the same flags: built on, the edits kept
    assert not _same_making(edited, made(title="Song (live)")) and not _same_making(edited, made(artist="Other"))
    # one made before the title it was made for was recorded: judged by its own title and artist, as it was then
    before = {k: v for k, v in making.to_json().items() if k not in ("title", "artist")}
    assert _same_making(saved(making, settings=before), making)
    assert not _same_making(saved(making, title="Song (live)", settings=before), making)


def test_a_storyboard_records_the_dtype_vipe_computed_in_and_another_makes_it_anew():
    auto, float32, bfloat16 = made("auto"), made("float32"), made("bfloat16")
    assert auto.models["vipe_dtype"] == float32.models["vipe_dtype"] == "float32"  # auto on a CPU is float32
    assert bfloat16.models["vipe_dtype"] == "bfloat16"
    assert _same_making(saved(auto), float32) and not _same_making(saved(auto), bfloat16)
    assert not _same_making(saved(bfloat16), auto)
    before = auto.to_json()  # made before the dtype was recorded: kept, edits and all
    before["models"] = {k: v for k, v in before["models"].items() if k != "vipe_dtype"}
    assert _same_making(saved(auto, settings=before), bfloat16)


@pytest.mark.parametrize(
    "backend, device, precision, dtype",
    [
        ("faster-whisper", "cpu", "auto", "int8"),
        ("faster-whisper", "cpu", "float32", "float32"),
        ("faster-whisper", "cuda", "auto", "float16"),
        ("openai-whisper", "cpu", "auto", "float32"),
        ("openai-whisper", "cuda", "bfloat16", "float16"),
        ("openai-whisper", "cuda", "float32", "float32"),
    ],
)
def test_the_transcripts_source_names_the_dtype_the_asr_model_computes_in(backend, device, precision, dtype):
    models = dataclasses.replace(TINY, asr_backend=backend)
    assert asr_dtype(models, Precision.resolve(precision, torch.device(device))) == dtype
    assert transcript_source(models, False, None, dtype) == f"{backend}:{TINY.asr} in {dtype}"


class Transcribes(Exception):
    """What a run that would transcribe the song again raises here, where it goes on past the cache."""


def transcript_run(path: Path, precision: str, side: bool = False) -> SimpleNamespace:
    """What get_transcript takes of a run of a song without lyrics by faster-whisper (FASTER), its transcript cached
    at `path` (heard by its `side`: musicvid.core.audio.heard_mix)."""

    def go_on():
        raise Transcribes

    registry = SimpleNamespace(models=FASTER, precision=Precision.resolve(precision, CPU))
    return SimpleNamespace(
        request=SimpleNamespace(separate_vocals=False, language=None),
        registry=registry,
        timings=None,
        audio=SimpleNamespace(info=SimpleNamespace(duration=4.0, sha256="song"), samples=None, side=side),
        lyrics=None,
        timed_lyrics=None,
        workdir=Workdir(path.parent),  # (its transcript.json: path)
        go_on=go_on,
    )


def test_a_transcript_made_in_another_asr_dtype_is_made_anew_and_one_made_before_it_was_recorded_kept(tmp_path):
    path = tmp_path / "transcript.json"
    for source in (transcript_source(FASTER, False, None, "float32"), transcript_source(FASTER, False, None)):
        Transcript([], "en", source, "song").save(path)
        assert get_transcript(transcript_run(path, "float32")).model == source  # kept
    Transcript([], "en", transcript_source(FASTER, False, None, "float32"), "song").save(path)
    with pytest.raises(Transcribes):  # auto on a CPU: faster-whisper's int8
        get_transcript(transcript_run(path, "auto"))


def test_a_transcript_of_a_cancelled_mix_is_made_anew_once_the_song_is_heard_by_its_side(tmp_path):
    """A song whose channels cancel in its mono mix was heard as silence before heard_mix: its hash is the same."""
    path = tmp_path / "transcript.json"
    Transcript([], "en", transcript_source(FASTER, False, None, "float32"), "song").save(path)
    with pytest.raises(Transcribes):
        get_transcript(transcript_run(path, "float32", side=True))
    Transcript([], "en", source := transcript_source(FASTER, False, None, "float32", side=True), "song").save(path)
    assert get_transcript(transcript_run(path, "float32", side=True)).model == source  # kept, heard so again


# --- score: only the frames of the render it scores -------------------------------------------------


def draw(picture: Picture, value: int) -> None:
    save_picture(picture.path, np.full((8, 8, 3), value, dtype=np.uint8), picture.key)


def drawn_render(workdir: Workdir, schedule, preview: bool) -> dict:
    """A render's timings.json as run_summary writes it, its pictures on disk: the keyframes, and the frames
    between them unless a `preview`."""
    keyframes = [Picture(workdir.keyframe(s), f"key {s}", s, None, 0.0) for s in schedule.shown_scenes]
    segments = [s for s in schedule.segments if s.target is not None]
    between = [(k, s) for s in segments for k in range(s.first + 1, s.end)]  # each frame between, by its morph
    frames = [Picture(workdir.frame(k), f"frame {k}", s.scene, s.target, 0.5) for k, s in between]
    for picture in keyframes + ([] if preview else frames):
        draw(picture, 40 * picture.scene + (picture.path.parent.name == "frames") * 10)
    groups = [keyframes] if preview else [keyframes, frames]
    scenes = tuple(Scene(i, "lyric", float(i), i + 1.0, prompt=f"prompt {i}") for i in range(3))
    pictures = Pictures(Storyboard(SongAudio(3.0), scenes=scenes), schedule, Drawing(), groups, [], set(), None)
    render = SimpleNamespace(
        registry=SimpleNamespace(device=CPU), timings=Timings(), settings=SimpleNamespace(fps=4, video_fps=4, batch=1)
    )
    summary = run_summary(SimpleNamespace(**vars(render), workdir=workdir), pictures, 0, 0, None, time.perf_counter())
    write_json(workdir.timings, summary)
    return summary


def test_score_measures_only_the_frames_the_render_drew(tmp_path):
    schedule = frame_schedule([0.0, 1.0, 2.0], 3.0, 4)  # two morphs of 4 steps, 3 frames between each
    workdir, fresh = Workdir(work_directory(tmp_path / "w")), Workdir(work_directory(tmp_path / "fresh"))
    drawn_render(workdir, schedule, preview=False)
    full = morph_smoothness(workdir, schedule, drawn_morphs(workdir))
    assert len(full) == 2 and all(row["mean_step"] > 0 for row in full)
    # a preview rerun: the frames the full render left are no part of it, as in a fresh preview
    assert drawn_render(workdir, schedule, preview=True)["morph_keys"] == {}
    drawn_render(fresh, schedule, preview=True)
    preview = morph_smoothness(workdir, schedule, drawn_morphs(workdir))
    assert preview == morph_smoothness(fresh, schedule, drawn_morphs(fresh))
    assert [row["missing_frames"] for row in preview] == [3, 3]
    workdir.frame(2).write_bytes(b"damaged")  # not read: not the render's
    check_pictures(workdir, schedule, drawn_morphs(workdir))
    # the full render again, then keyframe 1 redrawn (storyboard --keyframes): both morphs touching it are stale
    drawn_render(workdir, schedule, preview=False)
    draw(Picture(workdir.keyframe(1), "key 1, its prompt edited", 1, None, 0.0), 200)
    stale = morph_smoothness(workdir, schedule, drawn_morphs(workdir))
    assert [row.get("stale_frames") for row in stale] == [3, 3] and not any("mean_step" in row for row in stale)
    assert "mean_step" in morph_smoothness(workdir, schedule, None)[0]  # a render made before keys were recorded


# --- the .ass beside the video, and a picture's name that holds a folder ----------------------------


def test_the_ass_a_run_wrote_goes_without_captions_and_any_other_stays_said(tmp_path, caplog):
    workdir = Workdir(work_directory(tmp_path / "w"))
    video = tmp_path / "out" / "v.mp4"
    ass, render = video.with_suffix(".ass"), SimpleNamespace(output=video, workdir=workdir)
    write_output(workdir, ass, False, "[Script Info]\nTitle: karaoke\n")  # an earlier run's, with captions
    stale_script(render)
    assert not ass.exists()
    write_output(workdir, ass, False, "[Script Info]\nTitle: karaoke\n")
    ass.write_text("[Script Info]\nTitle: karaoke, my timing fixed\n")  # edited since: a person's now
    other = tmp_path / "out" / "w.mp4"  # a person's own .ass beside another video, that no run wrote
    other.with_suffix(".ass").write_text("[Script Info]\n")
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        stale_script(render)
        stale_script(SimpleNamespace(output=other, workdir=workdir))
        stale_script(SimpleNamespace(output=tmp_path / "out" / "none.mp4", workdir=workdir))  # nothing there
    assert ass.read_text().endswith("my timing fixed\n") and other.with_suffix(".ass").is_file()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all("\n" not in line and "is left as it is" in line for line in said)
    assert said[0].startswith(str(ass)) and said[1].startswith(str(other.with_suffix(".ass")))


@pytest.mark.parametrize("picture", ["frames/000009.png", "keyframes/0002.png"])
def test_a_pictures_name_that_holds_a_folder_is_refused_before_any_work_and_kept(capsys, tmp_path, picture):
    song = make_tone(tmp_path / "song.wav", 2)
    workdir = work_directory(tmp_path / "w")
    (workdir / picture / "a person's").mkdir(parents=True)
    code, _, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "v.mp4"))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{workdir / picture} is a folder, where musicvid keeps a file" in err
    assert (workdir / picture / "a person's").is_dir() and not (tmp_path / "v.mp4").exists()


def test_only_a_pictures_own_name_is_refused_and_a_pipe_is_too(tmp_path):
    workdir = Workdir(work_directory(tmp_path / "w"))
    for name in ("frames/12.png", "frames/old", "keyframes/00001.png"):  # names no picture is written to
        (workdir.root / name).mkdir(parents=True)
    workdir.check()
    os.mkfifo(workdir.frame(3))
    with pytest.raises(UserError, match=f"{workdir.frame(3)} is a special file, where musicvid keeps a file"):
        workdir.check()


def test_a_picture_that_fills_the_disk_names_itself(tmp_path, monkeypatch):
    # PIL's close raises ENOSPC naming no file: the full disk is said with the picture being written
    def full(image, fp, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Image.Image, "save", full)
    path = tmp_path / "keyframes" / "0003.png"
    with pytest.raises(OSError) as raised:
        save_picture(path, np.zeros((8, 8, 3), np.uint8), "key")
    assert str(out_of_room(raised.value)).startswith(f"the disk is full, where {path} was being written;")
    assert list(path.parent.iterdir()) == []  # (no temporary left)
