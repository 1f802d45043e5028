"""`musicvid batch` against careless and hostile playlists: report.json never replaces an input or a file
musicvid did not write, a playlist's rows are capped, the report's writes are bounded, and mistakes are
told at planning, before any render. No song is rendered here: the rows are repeats, refused, or of
songs that are not there."""

import json
import os
import re
import time
from pathlib import Path

import pytest
from PIL import Image

from musicvid.batch import command as batch
from musicvid.batch import engines, playlist
from musicvid.batch import report as batch_report
from musicvid.settings.model_choice import ModelChoice
from musicvid.storyboard import kernels
from tests.helpers import make_tone, ray_node, referencing_board, run, valid_board
from tests.test_batch_plan import planned

TINY = ModelChoice(models="tiny")


def run_batch(capsys, songs: Path, out: Path, *options):
    """`musicvid batch SONGS -o OUT --models tiny -q OPTIONS`: its exit code and stderr."""
    code, _, err = run(capsys, "batch", songs, "-o", out, "--models", "tiny", "-q", *options)
    return code, err


def report_of(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def lyrics_in_o(tmp_path: Path, out: Path) -> str:
    (out / "report.json").write_text('{"language": "en", "lines": []}\n')  # a transcript.json, as lyrics
    return "path,lyrics\na.wav,out/report.json\n"


def storyboard_linked(tmp_path: Path, out: Path) -> str:
    (tmp_path / "board.json").write_text(json.dumps(valid_board()))
    os.link(tmp_path / "board.json", out / "report.json")  # one file, two names
    return "path,storyboard\na.wav,board.json\n"


def picture_pinned(tmp_path: Path, out: Path) -> str:
    board = valid_board()
    board["scenes"][1]["picture"] = "out/report.json"  # relative to the storyboard's folder
    (tmp_path / "board.json").write_text(json.dumps(board))
    Image.new("RGB", (8, 8)).save(out / "report.json", format="PNG")  # a picture, whatever its name
    return "path,storyboard\na.wav,board.json\n"


def playlist_linked(tmp_path: Path, out: Path) -> str:
    (tmp_path / "s.csv").write_text("path\na.wav\n")
    os.link(tmp_path / "s.csv", out / "report.json")
    return "path\na.wav\n"


@pytest.mark.parametrize(
    "make, named, options",
    [
        (lyrics_in_o, "song 1 (a.wav): its lyrics file is", []),
        (lyrics_in_o, "song 1 (a.wav): its lyrics file is", ["--overwrite"]),  # never replaced
        (storyboard_linked, "song 1 (a.wav): its storyboard is", []),
        (picture_pinned, "song 1 (a.wav): its pinned picture of scene 1 is", ["--overwrite"]),
        (playlist_linked, "the playlist", ["--overwrite"]),
    ],
)
def test_a_report_path_that_is_an_input_is_refused_before_any_render(tmp_path, capsys, make, named, options):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "s.csv").write_text(make(tmp_path, out))
    before = (out / "report.json").read_bytes()
    code, err = run_batch(capsys, tmp_path / "s.csv", out, *options)
    assert code == 2 and named in err and "where the batch writes its report" in err and err.count("\n") == 1
    assert (out / "report.json").read_bytes() == before and sorted(p.name for p in out.iterdir()) == ["report.json"]


@pytest.mark.parametrize("text", ['{"mine": 1}\n', "notes, not JSON\n", '[{"playlist": 1}]\n'])
def test_a_file_musicvid_did_not_write_is_replaced_only_with_overwrite(tmp_path, capsys, text):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text(text)
    (tmp_path / "s.csv").write_text("path\na.wav\n")  # a song that is not there: reported as failed
    code, err = run_batch(capsys, tmp_path / "s.csv", out)
    assert code == 2 and "report.json exists and is no report of a musicvid batch" in err and "--overwrite" in err
    assert err.count("\n") == 1 and (out / "report.json").read_text() == text
    code, err = run_batch(capsys, tmp_path / "s.csv", out, "--overwrite")
    assert code == 1 and report_of(out)["made_by"] == "musicvid batch"


def test_a_report_of_an_earlier_batch_is_replaced_without_overwrite(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    earlier = {"playlist": "old.csv", "total": 1, "songs": [{"song": "b.wav", "status": "done"}]}
    (out / "report.json").write_text(json.dumps(earlier))  # the shape batches wrote before the mark
    (tmp_path / "s.csv").write_text("path\na.wav\n")
    for _ in range(2):  # then over a report with the mark
        code, err = run_batch(capsys, tmp_path / "s.csv", out)
        report = report_of(out)
        assert code == 1 and report["made_by"] == "musicvid batch"
        assert [song["status"] for song in report["songs"]] == ["failed"] and "a.wav" in report["songs"][0]["song"]


@pytest.mark.parametrize("kind", ["csv", "m3u", "folder"])
def test_too_many_rows_are_refused_before_the_jobs_are_made(tmp_path, capsys, monkeypatch, kind):
    def no_jobs(*args):
        raise AssertionError("jobs made")

    monkeypatch.setattr(batch, "jobs_of", no_jobs)
    rows = playlist.MAX_ROWS + 1
    if kind == "csv":
        songs = tmp_path / "s.csv"
        songs.write_text("path\n" + "a.wav\n" * rows)
    elif kind == "m3u":
        songs = tmp_path / "s.m3u"
        songs.write_text("#EXTM3U\n" + "".join(f"#EXTINF:1,Band - Song {n}\n{n}.mp3\n" for n in range(rows)))
    else:
        songs = tmp_path / "songs"
        songs.mkdir()
        for n in range(rows):
            (songs / f"{n}.mp3").touch()
    code, err = run_batch(capsys, songs, tmp_path / "out")
    assert code == 2 and f"has more than {playlist.MAX_ROWS} songs" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    (tmp_path / "s.csv").write_text("path\n" + "a.wav\n" * playlist.MAX_ROWS)  # as many as it takes
    assert len(playlist.read_playlist(tmp_path / "s.csv")) == playlist.MAX_ROWS


def test_a_playlist_too_big_to_be_one_is_not_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(playlist, "MAX_PLAYLIST_BYTES", 1000)
    (tmp_path / "s.m3u").write_text("#" * 1001)
    code, err = run_batch(capsys, tmp_path / "s.m3u", tmp_path / "out")
    assert code == 2 and "is over" in err and err.count("\n") == 1


def counted_writes(monkeypatch) -> list[int]:
    """The number of rows of each report.json written from now on."""
    rows, write = [], batch_report.write_json

    def counting(path, data):
        rows.append(len(data["songs"]))
        write(path, data)

    monkeypatch.setattr(batch_report, "write_json", counting)
    return rows


def test_the_reports_writes_are_bounded_and_the_last_holds_every_row(tmp_path, capsys, monkeypatch):
    rows = 600  # written after every row, as before, they took 2.5 s; a few writes take a few ms
    (tmp_path / "s.csv").write_text("path\n" + "a.wav\n" * rows)  # one song, not there: failed, then repeats
    writes = counted_writes(monkeypatch)
    started = time.monotonic()
    code, _ = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    seconds = time.monotonic() - started
    assert code == 1 and len(writes) <= 2 + seconds / batch_report.WRITE_INTERVAL_SECONDS and writes[-1] == rows
    report = report_of(tmp_path / "out")
    assert report["total"] == rows and len(report["songs"]) == rows
    assert [song["status"] for song in report["songs"]] == ["failed"] * rows  # its repeats failed with it


def test_rows_that_finish_between_writes_are_written_by_the_timer_and_when_the_batch_is_stopped(
    tmp_path, capsys, monkeypatch
):
    writes = counted_writes(monkeypatch)
    monkeypatch.setattr(batch_report, "WRITE_INTERVAL_SECONDS", 0.2)
    writer = batch_report.ReportWriter(tmp_path / "report.json", tmp_path / "s.csv", 3)
    for number in (1, 2):
        writer.add(number, batch_report.Result("a.wav", "repeat", "a.mp4", same_as=1))
    assert writes == [1]  # the second row waits for the interval
    time.sleep(0.5)
    assert writes == [1, 2]  # written by the timer, without another row
    writer.close()
    assert writes == [1, 2]  # nothing new to write

    # A batch stopped in its first render (Ctrl-C) still reports the rows finished before it.
    monkeypatch.chdir(tmp_path)  # the song's work directory, looked at before the render: musicvid-work/
    monkeypatch.setattr(batch_report, "WRITE_INTERVAL_SECONDS", 60.0)

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "render_locally", stopped)
    (tmp_path / "a.wav").write_bytes(b"x" * 100)  # a file, so that it is rendered (never decoded)
    (tmp_path / "s.csv").write_text("path,seed\nb.wav,1\na.wav,1\nb.wav,1\na.wav,1\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 130 and "interrupted" in err
    # (a repeat of the row stopped in its render is not reported: that row made nothing)
    report = report_of(tmp_path / "out")["songs"]
    assert [(song["status"], song["same_as"]) for song in report] == [("failed", None), ("failed", 1)]


def test_a_rows_lyrics_of_another_kind_are_refused_at_planning(tmp_path, capsys):
    (tmp_path / "words.doc").write_text("one\ntwo\n")
    (tmp_path / "s.csv").write_text("path,lyrics\na.wav,\nb.wav,words.doc\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 2 and "song 2 (b.wav)" in err and "must be .lrc, .srt" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_csv_with_a_header_and_no_rows_says_it_has_no_songs(tmp_path, capsys):
    (tmp_path / "s.csv").write_text("path,title\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 2 and "no songs in it" in err and "'path' column" not in err and err.count("\n") == 1


def test_a_rows_subtitles_made_by_hand_are_not_replaced_without_overwrite(capsys, tmp_path):
    from tests.helpers import make_tone

    make_tone(tmp_path / "a.wav", 2)
    (tmp_path / "s.csv").write_text("path\na.wav\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.srt").write_text("hand-made")  # beside the row's video, a.mp4, which is not there yet
    code, err = run_batch(capsys, tmp_path / "s.csv", out, "--workdir", tmp_path / "w")
    assert code == 2 and "song 1 (a.wav): " in err and f"{out / 'a.srt'} exists and no run in" in err
    assert (out / "a.srt").read_text() == "hand-made" and not (tmp_path / "w").exists()


def test_a_playlist_entry_that_is_a_url_fails_its_row_named_as_written(tmp_path, capsys):
    urls = ["http://127.0.0.1:9/a.mp3", "https://example.org/songs//b.flac", "file://nas/c.mp3", "s3://bucket/d.wav"]
    for url in urls:
        (tmp_path / "list.m3u").write_text(f"#EXTM3U\n#EXTINF:12,Band - Song\n{url}\n")
        code, err = run_batch(capsys, tmp_path / "list.m3u", tmp_path / "out")
        assert code == 1 and f"list.m3u line 3: {url} is a URL" in err, err
        (tmp_path / "list.csv").write_text(f"path,title\nsong.wav,A\n{url},B\n")
        code, err = run_batch(capsys, tmp_path / "list.csv", tmp_path / "out")
        assert code == 1 and f"list.csv line 3: {url} is a URL" in err, err
        assert f"] {url}: failed" in err  # the progress line and the report name the row as written, not as a path
        assert [(row["status"], row["song"]) for row in report_of(tmp_path / "out")["songs"]][1] == ("failed", url)
    assert not list((tmp_path / "out").glob("*.mp4"))


def test_a_video_in_o_is_skipped_only_where_musicvid_wrote_it_for_the_rows_song(capsys, tmp_path, monkeypatch):
    from musicvid.core.files import file_sha256
    from musicvid.core.outputs import remember
    from musicvid.core.workdir import Workdir
    from tests.helpers import make_tone, work_directory

    monkeypatch.chdir(tmp_path)  # where the songs' work directories are: musicvid-work/
    (tmp_path / "sub").mkdir()
    song, other = make_tone(tmp_path / "a.wav", 2), make_tone(tmp_path / "sub" / "a.wav", 3)
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.mp4").write_bytes(b"a.wav's video")
    (out / "a.srt").write_bytes(b"a.wav's subtitles")
    (out / "gone.mp4").write_bytes(b"a person's video")
    workdir = Workdir(work_directory(Workdir.for_song(song, file_sha256(song)).root))
    for made in ("a.mp4", "a.srt"):  # as a render of a.wav records its outputs (none is made here)
        remember(workdir, out / made, out / made)
    (tmp_path / "a.m3u").write_text("a.wav\n")
    [job] = planned(tmp_path / "a.m3u")  # and as a batch's report records them, made with these settings
    row = batch_report.Result(str(song), "done", str(out / "a.mp4"), made_with=batch_report.made_with(job, TINY, {}))
    batch_report.ReportWriter(out / "report.json", tmp_path / "a.m3u", 1).add(1, row)
    assert run_batch(capsys, tmp_path / "a.m3u", out)[0] == 0
    assert [s["status"] for s in report_of(out)["songs"]] == ["skipped"]
    # another song of that name, a song that is not there, a skipped row's missing lyrics: not skipped
    (tmp_path / "sub.m3u").write_text(f"{other}\n")
    code, err = run_batch(capsys, tmp_path / "sub.m3u", out)
    assert code == 2 and f"{out / 'a.mp4'} exists and no run in" in err and err.count("\n") == 1
    (tmp_path / "gone.m3u").write_text("gone.wav\n")
    assert run_batch(capsys, tmp_path / "gone.m3u", out)[0] == 1
    assert [s["status"] for s in report_of(out)["songs"]] == ["failed"]
    (tmp_path / "s.csv").write_text("path,lyrics\na.wav,missing.lrc\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", out)
    assert code == 2 and "lyrics file not found" in err and err.count("\n") == 1
    assert (out / "a.mp4").read_bytes() == b"a.wav's video" and (out / "gone.mp4").read_bytes() == b"a person's video"


def test_a_device_on_ray_is_one_its_workers_have_not_one_of_this_machine(tmp_path, capsys, monkeypatch):
    """A Ray cluster's head may have no GPU its workers have: --device cuda is checked against the cluster's GPUs
    and what each worker asks for, refused in one sentence before any song where they have none."""
    from musicvid.core.errors import UserError

    for device, cluster, each in (("cuda", 4, 1.0), ("cuda:1", 4, 2.0), ("cpu", 0, 0.0), ("auto", 0, 0.0)):
        engines.check_device_on_ray(device, cluster, each)
    for device, cluster, each, said in (
        ("cuda", 0, 0.0, "needs GPUs for its workers: the cluster has 0"),
        ("cuda", 4, 0.0, "each worker asks for 0"),
        ("cuda:1", 4, 1.0, "a Ray worker sees its own 1 GPU(s) only"),
    ):
        with pytest.raises(UserError, match=re.escape(said)):
            engines.check_device_on_ray(device, cluster, each)
    import ray

    class Started(Exception):  # what the head does once the device is checked
        pass

    def start_workers(*args, **kwargs):
        raise Started

    # this machine has no GPU, the cluster two: the head goes on to start the workers
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "nodes", lambda: [ray_node(2.0)])
    monkeypatch.setattr(ray, "remote", start_workers)
    monkeypatch.setattr(kernels, "compile_librosa", lambda: None)  # (numba's compilation: not needed here)
    make_tone(tmp_path / "a.wav", 1)
    code, err = run_batch(capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--device", "cuda")
    assert code == 1 and "failed: Started" in err, err
    # each worker asking for none: refused before any song
    code, err = run_batch(
        capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--device", "cuda", "--gpus-per-song", "0"
    )
    assert code == 2 and err.count("\n") == 1 and "--device cuda on Ray needs GPUs" in err, err


def test_what_a_row_is_made_with_follows_a_model_folder_and_a_storyboards_pictures_by_their_contents(tmp_path):
    """A model folder fine-tuned again under its name, or a picture a storyboard names drawn again: a rerun skipped
    the row, keeping its video of the old weights or picture."""
    song = make_tone(tmp_path / "a.wav", 2)
    board = referencing_board(tmp_path, song, 2.0)
    (tmp_path / "s.csv").write_text(f"path,storyboard\na.wav,{board}\n")
    [job] = planned(tmp_path / "s.csv")
    vipe = tmp_path / "vipe"
    vipe.mkdir()
    (vipe / "config.json").write_text("{}")
    choice = ModelChoice(models="tiny", vipe=str(vipe))
    made = [batch_report.made_with(job, choice, {}), batch_report.made_with(job, choice, {})]
    (vipe / "config.json").write_text('{"n_layer": 2}')  # saved again under its name
    made.append(batch_report.made_with(job, choice, {}))
    (vipe / "README.md").write_text("no part of the model")
    made.append(batch_report.made_with(job, choice, {}))
    Image.new("RGB", (64, 64), (10, 200, 90)).save(tmp_path / "ref.png")  # the storyboard's picture drawn again
    made.append(batch_report.made_with(job, choice, {}))
    assert made[0] == made[1] != made[2] == made[3] != made[4]
