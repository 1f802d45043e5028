"""`musicvid batch` against hostile input: a second batch on one -o, a preview named as another row's video, Ray
options out of range or beyond the cluster, entries that name no file, malformed CSVs. Each is refused in one
sentence before any render (no song is rendered here), and a Ray job leaves this machine with absolute paths."""

import fcntl
import random
import socket
import unicodedata

import pytest

from musicvid.batch import engines, playlist
from musicvid.batch.report import OUTPUT_LOCK
from musicvid.core.errors import UserError
from musicvid.storyboard import kernels
from tests.helpers import make_tone, ray_node, run
from tests.test_batch_plan import planned


def run_batch(capsys, songs, out, *options):
    """`musicvid batch SONGS -o OUT --models tiny -q OPTIONS`: its exit code and stderr."""
    code, _, err = run(capsys, "batch", songs, "-o", out, "--models", "tiny", "-q", *options)
    return code, err


def test_a_second_batch_on_one_o_is_refused_while_the_first_holds_it(tmp_path, capsys, caplog):
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "a.lrc").write_text("[00:00.10]la\n")  # (a line would name it)
    (tmp_path / "p.csv").write_text("path,fps\na.wav,0\n")  # (a row's check would say more, later)
    out = tmp_path / "out"
    out.mkdir()
    with open(out / OUTPUT_LOCK, "w") as held:  # the first batch's lock, as its process holds it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for songs in (tmp_path, tmp_path / "p.csv"):  # before the rows' checks, which a long playlist pays
            code, err = run_batch(capsys, songs, out)
            assert code == 2 and "is in use by another musicvid batch" in err and err.count("\n") == 1, err
    assert not caplog.messages  # (the playlist's line naming the lyrics beside a song: not said first)
    assert not (out / "report.json").exists()


def test_a_preview_and_another_rows_video_of_one_file_are_told_apart_at_planning(tmp_path, capsys):
    make_tone(tmp_path / "x.wav", 1)
    make_tone(tmp_path / "x.preview.wav", 1)
    (tmp_path / "n.csv").write_text("path,preview,output\nx.wav,yes,x\nx.wav,no,x.preview.mp4\n")
    code, err = run_batch(capsys, tmp_path / "n.csv", tmp_path / "out")
    assert code == 2 and "would both write x.preview.mp4" in err and err.count("\n") == 1, err
    (tmp_path / "a.csv").write_text("path,preview\nx.wav,yes\nx.preview.wav,no\n")  # automatic names: hashed
    names = [job.output.name.casefold() for job in planned(tmp_path / "a.csv")]
    assert len(set(names)) == 2 and "x.preview.mp4" not in names, names


def test_two_songs_named_alike_but_for_the_form_of_an_accent_get_files_of_their_own(tmp_path):
    """ "Café" as one character and as "e" and its accent are one name on macOS: the rows' videos are told apart."""
    composed, decomposed = "Caf\u00e9", "Cafe\u0301"
    make_tone(tmp_path / f"{composed}.wav", 1)
    make_tone(tmp_path / f"{decomposed}.wav", 1)
    (tmp_path / "a.csv").write_text(f"path\n{composed}.wav\n{decomposed}.wav\n")
    names = [unicodedata.normalize("NFC", job.output.name).casefold() for job in planned(tmp_path / "a.csv")]
    assert len(set(names)) == 2, names


def test_a_ray_job_leaves_this_machine_with_every_path_absolute(tmp_path, monkeypatch):
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "a.lrc").write_text("[00:00.50]hello\n")
    (tmp_path / "s.csv").write_text("path,lyrics\na.wav,a.lrc\n")
    monkeypatch.chdir(tmp_path)
    [job] = planned(tmp_path / "s.csv")
    job.request = job.request.__class__(**{**vars(job.request), "song": job.entry.path.relative_to(tmp_path)})
    job.output = job.output.relative_to(tmp_path)
    sent = engines.sent(job)
    paths = [sent.request.song, sent.request.lyrics_file, sent.request.workdir, sent.output]
    assert all(path.is_absolute() and path.is_relative_to(tmp_path) for path in paths), paths
    assert sent.request.lyrics_file.is_file() and sent.request.song.is_file()


def test_a_ray_worker_gets_the_models_named_by_this_machine_s_files_as_absolute_paths(tmp_path, monkeypatch):
    from musicvid.settings.model_choice import ModelChoice

    monkeypatch.chdir(tmp_path)
    (tmp_path / "wm").mkdir()  # a faster-whisper folder, named relative to the folder the batch was started in
    (tmp_path / "auto").mkdir()  # (a folder of a musicvid name's does not make the name a path)
    choice = ModelChoice(models="tiny", asr_model="wm", upscaler="auto", vipe="org/vipe", device="cpu")
    sent = engines.sent_choice(choice)
    assert sent.asr_model == str(tmp_path / "wm")
    assert (sent.upscaler, sent.vipe, sent.models, sent.device) == ("auto", "org/vipe", "tiny", "cpu")


@pytest.mark.parametrize(
    "options, said",
    [
        (["--engine", "ray", "--gpus-per-song", "nan"], "--gpus-per-song nan: give a number of GPUs of 0 or more"),
        (["--engine", "ray", "--gpus-per-song", "inf"], "--gpus-per-song inf"),
        (["--engine", "ray", "--gpus-per-song", "-1"], "--gpus-per-song -1"),
        (["--engine", "ray", "--workers", "0"], "needs at least one worker"),
        (["--engine", "ray", "--address", " "], "--address is empty: name the Ray cluster to join"),
        (["--workers", "2"], "--workers is a Ray option"),
        (["--gpus-per-song", "1"], "--gpus-per-song is a Ray option"),
        (["--engine", "local", "--address", "auto"], "--address is a Ray option"),
    ],
)
def test_ray_options_are_checked_before_any_work(tmp_path, capsys, options, said):
    make_tone(tmp_path / "a.wav", 1)
    code, err = run_batch(capsys, tmp_path, tmp_path / "out", *options)
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_a_cluster_without_the_gpus_asked_or_out_of_reach_is_refused_before_o_is_made(tmp_path, capsys, monkeypatch):
    import ray

    monkeypatch.setattr(kernels, "compile_librosa", lambda: None)  # (numba's compilation: not needed here)
    monkeypatch.setattr(ray, "nodes", lambda: [ray_node(1.0), ray_node(1.0), ray_node(4.0, alive=False)])
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    make_tone(tmp_path / "a.wav", 1)
    code, err = run_batch(capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--gpus-per-song", "2")
    assert code == 2 and "no node of the Ray cluster has that many GPUs (its nodes have 1, 1)" in err, err
    assert err.count("\n") == 1

    code, err = run_batch(capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--workers", "3")
    assert code == 2 and "--workers 3: the Ray cluster can run 2 at once (each takes a CPU and 1 GPU(s))" in err, err

    def unreachable(**kwargs):
        raise ConnectionError("Failed to connect to Ray cluster at 10.1.1.1:6399.\nmore")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", unreachable)
    code, err = run_batch(capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--address", "auto")
    assert code == 2 and "Ray cannot be joined there (Failed to connect" in err and err.count("\n") == 1, err
    with socket.socket() as closed:  # a port nothing listens on: refused at once, not after Ray's minute of retries
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    code, err = run_batch(capsys, tmp_path, tmp_path / "out", "--engine", "ray", "--address", f"127.0.0.1:{port}")
    assert code == 2 and f"Ray cannot be joined there (nothing answers at 127.0.0.1:{port}: " in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["a\0b.wav", "x" * 300 + ".wav", "d/" * 2100 + "a.wav"])
@pytest.mark.parametrize("kind", ["m3u", "csv"])
def test_an_entry_that_names_no_file_is_refused_naming_its_line(tmp_path, capsys, name, kind):
    make_tone(tmp_path / "a.wav", 1)
    text = f"a.wav\n{name}\n" if kind == "m3u" else f"path\na.wav\n{name}\n"
    (tmp_path / f"s.{kind}").write_text(text)
    code, err = run_batch(capsys, tmp_path / f"s.{kind}", tmp_path / "out")
    line = 2 if kind == "m3u" else 3
    assert code == 2 and f"s.{kind} line {line}:" in err and "names no file" in err and err.count("\n") == 1, err


def test_a_header_with_spaces_or_capitals_is_read_rows_of_empty_cells_are_blank_and_a_big_cell_is_read(tmp_path):
    # as a spreadsheet saves one: its header capitalised, its trailing rows empty cells
    (tmp_path / "s.csv").write_text("Path, Title , FPS\r\na.wav,Hello,5\r\n,,\r\n , ,,,\r\nb.wav,,\r\n,,\r\n")
    entries = playlist.read_playlist(tmp_path / "s.csv")
    assert [(e.path.name, e.title, e.overrides) for e in entries] == [
        ("a.wav", "Hello", {"fps": "5"}),
        ("b.wav", None, {}),
    ]
    (tmp_path / "b.csv").write_text("path,title\na.wav," + "x" * 200_000 + "\n")
    assert len(playlist.read_playlist(tmp_path / "b.csv")[0].title) == 200_000


@pytest.mark.parametrize("mark, first", [(";", ""), ("\t", ""), (";", "sep=;\r\n"), ("\t", "sep=\t\r\n")])
def test_a_csv_parted_by_semicolons_or_tabs_as_excel_saves_one_in_europe_is_read(tmp_path, mark, first):
    # (Excel's first line "sep=;" names the mark: the header's own may hold another, as "Ça, et là" does)
    text = first + 'Path;Title;Artist;fps\r\na.wav;"Hello; World";Ça, et là;5\r\nb.wav;;;\r\n'.replace(";", mark)
    (tmp_path / "s.csv").write_text(text, encoding="utf-8-sig")
    entries = playlist.read_playlist(tmp_path / "s.csv")
    assert [(e.path.name, e.title, e.artist, e.overrides) for e in entries] == [
        ("a.wav", f"Hello{mark} World", "Ça, et là", {"fps": "5"}),
        ("b.wav", None, None, {}),
    ]


@pytest.mark.parametrize(
    "text, said",
    [
        ("path,title,output\na.wav,Hello, World,x.mp4\n", "line 2: more cells than the header has columns"),
        ("path,fps,fps\na.wav,5,7\n", "line 1: the header names the column 'fps' twice"),
        ("path,,fps\na.wav,,7\n", "line 1: the header has a column with no name"),
        ('path,title\na.wav,x\n"b.wav,Hello\n', "line 3: not a well-formed CSV"),
        ("sep=;\npath;fps;fps\na.wav;5;7\n", "line 2: the header names the column 'fps' twice"),  # (Excel's line 1)
        ("sep=;\npath;title\na.wav;x;y\n", "line 3: more cells than the header has columns"),
    ],
)
def test_a_malformed_csv_is_refused_naming_its_line(tmp_path, text, said):
    (tmp_path / "s.csv").write_text(text)
    with pytest.raises(UserError, match=said):
        playlist.read_playlist(tmp_path / "s.csv")


@pytest.mark.parametrize("kind", ["m3u", "csv"])
def test_latin1_is_read_as_latin1_but_utf8_with_a_stray_byte_is_refused(tmp_path, kind):
    header = "" if kind == "m3u" else "path,title\n"
    latin = tmp_path / f"latin.{kind}"
    latin.write_bytes((header + "Beyoncé.wav\nCafé del Mar.wav\n").encode("latin-1"))
    assert [e.path.name for e in playlist.read_playlist(latin)] == ["Beyoncé.wav", "Café del Mar.wav"]
    stray = tmp_path / f"stray.{kind}"  # UTF-8, but one name typed on a Latin-1 terminal
    stray.write_bytes((header + "Beyoncé.wav\n").encode() + "Café.wav\n".encode("latin-1"))
    line = 2 if kind == "m3u" else 3
    with pytest.raises(UserError, match=f"stray.{kind} line {line}: byte 0xe9 is not UTF-8, though the rest"):
        playlist.read_playlist(stray)
    noise = tmp_path / f"noise.{kind}"  # random bytes: some of them UTF-8 by chance, far more control bytes
    noise.write_bytes(random.Random(3).randbytes(3000).replace(b"\0", b"x"))
    with pytest.raises(UserError, match=f"noise.{kind} is no text \\(control bytes all through it\\)"):
        playlist.read_playlist(noise)


@pytest.mark.parametrize("under", ["", "sub"])
def test_an_o_through_a_symbolic_link_to_nowhere_is_refused_before_any_work(tmp_path, capsys, under):
    (tmp_path / "songs").mkdir()
    make_tone(tmp_path / "songs" / "a.wav", 1)
    (tmp_path / "videos").symlink_to(tmp_path / "gone")  # (its folder's files moved, a disk not mounted)
    out = tmp_path / "videos" / under
    code, err = run_batch(capsys, tmp_path / "songs", out)
    assert code == 2 and err.count("\n") == 1 and "is a symbolic link to" in err and "where nothing is" in err, err
    code, _, err = run(capsys, "render", tmp_path / "songs" / "a.wav", "-o", out / "v.mp4", "--models", "tiny", "-q")
    assert code == 2 and "is a symbolic link to" in err and not (tmp_path / "gone").exists(), err


def test_a_playlist_that_is_a_loop_of_links_is_said_so_and_a_missing_one_not_found(tmp_path):
    (tmp_path / "l2.m3u").symlink_to(tmp_path / "l1.m3u")
    (tmp_path / "l1.m3u").symlink_to(tmp_path / "l2.m3u")
    with pytest.raises(UserError, match="l1.m3u leads into a loop of symbolic links"):
        playlist.read_playlist(tmp_path / "l1.m3u")
    with pytest.raises(UserError, match="playlist not found: .*none.m3u"):
        playlist.read_playlist(tmp_path / "none.m3u")
