"""A person's edits to the work directory's storyboard.json are never lost (a probe's findings): a storyboard made
anew for other settings sets them aside and says where; a person's own keys (notes) are written back; an edit made
while a run draws is not saved over; a --storyboard file saved again after the check has its pictures checked."""

import json
import logging
import os
import shutil
from dataclasses import replace
from types import SimpleNamespace

import pytest

from musicvid.core.workdir import Workdir
from musicvid.models.registry import ModelRegistry
from musicvid.prepare import prepare
from musicvid.review.timing import lyric_timing
from musicvid.settings.presets import PRESETS
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import load_storyboard
from musicvid.storyboard.kept import save_picks
from musicvid.storyboard.make import _same_vipe, heard_before, storyboard_in, transcript_source
from tests.helpers import TINY_QUIET, make_tone, run

LYRICS = "[00:00.50]the sky is burning\n[00:02.50]rivers made of glass\n"


@pytest.fixture
def song(tmp_path):
    (tmp_path / "song.lrc").write_text(LYRICS)
    return make_tone(tmp_path / "song.wav", 4.0)


def storyboard(capsys, song, workdir, *options):
    code, _, err = run(
        capsys, "storyboard", song, "--lyrics", song.with_suffix(".lrc"), "--workdir", workdir, *TINY_QUIET, *options
    )
    assert code == 0, err
    return err


def edit(path, change) -> dict:
    board = json.loads(path.read_text())
    change(board)
    path.write_text(json.dumps(board, indent=4))
    return board


def prepared(song, workdir, **request):
    """The Run of a storyboard of `song` with the tiny models, every check passed."""
    return prepare(
        SongRequest(song=song, workdir=workdir, quiet=True, **request), ModelRegistry(PRESETS["tiny"], "cpu")
    )


def prompt_of(path, scene: int) -> str:
    return json.loads(path.read_text())["scenes"][scene]["prompt"]


def test_edits_made_for_other_settings_are_set_aside_and_said(capsys, song, tmp_path, caplog):
    workdir = tmp_path / "wd"
    storyboard(capsys, song, workdir)
    board = workdir / "storyboard.json"
    edited = edit(board, lambda b: b["scenes"][1].update(prompt="a red lighthouse on a cliff, oil painting"))
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        storyboard(capsys, song, workdir, "--title", "Lighthouse (live)")  # a storyboard made anew
    aside = workdir / "storyboard.edited-1.json"
    assert json.loads(aside.read_text()) == edited and str(aside) in caplog.text
    assert prompt_of(board, 1) != "a red lighthouse on a cliff, oil painting"
    # what the run wrote is its own: made anew again, nothing more is set aside, nothing set aside is replaced
    storyboard(capsys, song, workdir, "--title", "Lighthouse")
    assert sorted(p.name for p in workdir.glob("storyboard*.json")) == ["storyboard.edited-1.json", "storyboard.json"]
    assert json.loads(aside.read_text()) == edited
    # another storyboard rendered into the work directory sets edits aside too
    edit(board, lambda b: b["scenes"][1].update(prompt="mine again"))
    (tmp_path / "other.json").write_text(aside.read_text())
    code, _, err = run(
        capsys, "storyboard", song, "--storyboard", tmp_path / "other.json", "--workdir", workdir, *TINY_QUIET
    )
    assert code == 0, err
    assert prompt_of(workdir / "storyboard.edited-2.json", 1) == "mine again"


def test_edits_built_on_are_kept_with_a_persons_own_keys(capsys, song, tmp_path):
    workdir = tmp_path / "wd"
    storyboard(capsys, song, workdir)
    board = workdir / "storyboard.json"

    def noted(b):
        b["scenes"][1].update(prompt="a red lighthouse", note="keep this red!")
        b["my_notes"] = {"client": "warmer colours"}
        b["audio"]["source"], b["settings"]["comment"] = "bought on bandcamp", "the second try"
        b["scenes"][0]["prompt"] = ""  # emptied: ViPE writes it again

    edit(board, noted)
    storyboard(capsys, song, workdir)  # the same settings: the edits are built on
    again = json.loads(board.read_text())
    assert again["scenes"][1]["prompt"] == "a red lighthouse" and again["scenes"][1]["note"] == "keep this red!"
    assert again["my_notes"] == {"client": "warmer colours"} and again["scenes"][0]["prompt"].strip()
    assert (again["audio"]["source"], again["settings"]["comment"]) == ("bought on bandcamp", "the second try")
    assert not list(workdir.glob("storyboard.edited-*.json"))


def test_an_edit_made_while_a_run_draws_is_not_saved_over(song, tmp_path, caplog):
    run_ = prepared(song, tmp_path / "wd", lyrics_file=song.with_suffix(".lrc"))
    with run_.workdir.held():
        made = storyboard_in(run_)
        save_picks(run_, made)  # its own file: saved
        board = run_.workdir.storyboard
        edited = edit(board, lambda b: b["scenes"][1].update(prompt="edited while it drew"))
        with caplog.at_level(logging.WARNING, logger="musicvid"):
            for _ in range(3):  # the picks, saved as the drawing goes on
                save_picks(run_, made)
    assert json.loads(board.read_text()) == edited
    assert caplog.text.count("was edited while this run drew") == 1


def test_a_storyboard_file_is_read_once_its_checked_version_drawn_whatever_is_saved_since(song, tmp_path):
    made = prepared(song, tmp_path / "wd", lyrics_file=song.with_suffix(".lrc"))
    with made.workdir.held():
        storyboard_in(made)
    storyboard_file = tmp_path / "mine.json"
    storyboard_file.write_text(made.workdir.storyboard.read_text())
    checked = prepared(song, tmp_path / "wd2", storyboard_file=storyboard_file)
    os.mkfifo(tmp_path / "pin.png")  # an editor saves the file with a pipe as a pin, once the run has begun
    edit(storyboard_file, lambda b: b["scenes"][1].update(picture="pin.png"))
    with checked.workdir.held():
        drawn = storyboard_in(checked)
    assert drawn.scenes[1].picture is None and drawn == checked.storyboard


def test_a_slip_in_the_work_directorys_storyboard_is_refused_before_any_work(capsys, song, tmp_path, monkeypatch):
    workdir = tmp_path / "wd"
    storyboard(capsys, song, workdir)
    board = workdir / "storyboard.json"
    board.write_text(board.read_text().replace('"start": 0.0', '"start": 0.0,,', 1))

    def heard(*args, **kwargs):
        raise AssertionError("the song was decoded before the storyboard was read")

    monkeypatch.setattr("musicvid.prepare.load_audio", heard)
    code, _, err = run(capsys, "storyboard", song, "--workdir", workdir, *TINY_QUIET)
    assert code == 2 and "is not valid JSON" in err and err.count("\n") == 1


def test_a_storyboard_of_another_recording_as_long_is_said(capsys, caplog, song, tmp_path):
    """A storyboard made of another song of the same length rendered silently, its scenes timed to that song."""
    storyboard(capsys, song, tmp_path / "wd")
    board = tmp_path / "wd" / "storyboard.json"
    other = make_tone(tmp_path / "other.wav", 4.0, "-af", "volume=0.5")  # as long, not the same bytes
    code, _, err = run(capsys, "storyboard", other, "--storyboard", board, "--workdir", tmp_path / "w2", *TINY_QUIET)
    assert code == 0 and f"storyboard {board} was made of another recording than {other}" in caplog.text, err
    caplog.clear()
    code, _, err = run(capsys, "storyboard", song, "--storyboard", board, "--workdir", tmp_path / "w3", *TINY_QUIET)
    assert code == 0 and "another recording" not in caplog.text, err


def test_the_same_lyrics_and_vipe_under_other_paths_keep_the_edits(capsys, song, tmp_path, monkeypatch):
    """Lyrics renamed or saved with Windows line ends, and a ViPE folder given by another path or copied, are the same
    inputs (a probe's findings: the storyboard was made anew, its edits set aside); other lines are other lyrics."""
    from musicvid.models.tiny import tiny_vipe

    folder, vipe = tmp_path / "vp", tiny_vipe()
    vipe.model.save_pretrained(folder)
    vipe.tokenizer.save_pretrained(folder)
    workdir, board = tmp_path / "wd", tmp_path / "wd" / "storyboard.json"
    storyboard(capsys, song, workdir, "--vipe", folder)
    edit(board, lambda b: b["scenes"][1].update(prompt="a red lighthouse"))
    renamed = tmp_path / "other name.lrc"
    renamed.write_bytes(LYRICS.replace("\n", "\r\n").encode())
    monkeypatch.chdir(tmp_path)
    copied = shutil.copytree(folder, tmp_path / "copy")
    for lyrics, vipe_folder in [(renamed, "vp"), (song.with_suffix(".lrc"), copied)]:
        code, _, err = run(
            capsys, "storyboard", song, "--lyrics", lyrics, "--vipe", vipe_folder, "--workdir", "wd", *TINY_QUIET
        )
        assert code == 0, err
        assert prompt_of(board, 1) == "a red lighthouse" and not list(workdir.glob("storyboard.edited-*.json"))
    # a storyboard made before ViPE's weights were recorded is the same only under the same name
    made = {"vipe": "./vp", "vipe_weights": "folder 0123", "vipe_dtype": "float32"}
    assert _same_vipe({"vipe": "vp", "vipe_weights": "folder 0123"}, made) and not _same_vipe({"vipe": "hub/X"}, made)
    # (so is an ASR model's folder: its transcript is reused)
    assert (
        len({transcript_source(replace(PRESETS["tiny"], asr=str(f)), False, None) for f in (folder, copied, "vp")}) == 1
    )
    renamed.write_text(LYRICS.replace("glass", "stone"))
    storyboard(capsys, song, workdir, "--vipe", folder, "--lyrics", renamed)  # (the last --lyrics is taken)
    assert prompt_of(workdir / "storyboard.edited-1.json", 1) == "a red lighthouse"


def test_an_edited_transcript_is_set_aside_said_and_heard_again(capsys, song, tmp_path, caplog):
    workdir = tmp_path / "wd"
    heard = ["storyboard", song, "--workdir", workdir, *TINY_QUIET]  # no lyrics: Whisper's transcript is written
    assert run(capsys, *heard)[0] == 0
    transcript = workdir / "transcript.json"
    made = transcript.read_text()
    assert run(capsys, *heard)[0] == 0 and not list(workdir.glob("transcript.edited-*"))  # its own: kept
    line = '{"start": 1.0, "end": 2.0, "text": "my hand typed lyric"}'
    for n, edited in enumerate([made.replace('"lines": []', f'"lines": [{line}]'), made.replace("[]", "[NaN]")], 1):
        transcript.write_text(edited)  # a valid edit, then one its loader refuses: neither is read, nor lost
        with caplog.at_level(logging.WARNING, logger="musicvid"):
            assert run(capsys, *heard)[0] == 0
        assert f"{transcript} held edits; they are kept in {workdir / f'transcript.edited-{n}.json'}" in caplog.text
        assert (workdir / f"transcript.edited-{n}.json").read_text() == edited and transcript.read_text() == made
    # nor is one edited read by what reads it without making it (karaoke beside --storyboard, the score)
    heard = SimpleNamespace(info=SimpleNamespace(sha256=json.loads(made)["audio_sha256"]))
    song_run = SimpleNamespace(workdir=Workdir(workdir), audio=heard)
    assert heard_before(song_run) is not None
    transcript.write_text(made.replace('"lines": []', f'"lines": [{line}]'))
    board = load_storyboard(workdir / "storyboard.json")
    assert heard_before(song_run) is None and "edited" in lyric_timing(song_run.workdir, board)["missing"]


def test_a_copied_work_directory_reads_its_own_files_versions(capsys, song, tmp_path, caplog):
    # outputs.json keys its files by their resolved paths: a copy (`cp -r`) read none as recorded, so as an older
    # musicvid's, and its edited transcript was read as heard
    heard = ["storyboard", song, *TINY_QUIET]
    assert run(capsys, *heard, "--workdir", tmp_path / "wd")[0] == 0
    for name, root in (
        ("copy", ...),
        ("rootless", None),
        ("slashed", f"{tmp_path / 'wd'}/"),
        ("parent", str(tmp_path)),
    ):
        shutil.copytree(tmp_path / "wd", copy := tmp_path / name)
        if root is not ...:  # (a record from before it named its root, or with another: read from its own files' keys)
            record = {k: v for k, v in json.loads((copy / "outputs.json").read_text()).items() if k != "root"}
            (copy / "outputs.json").write_text(json.dumps(record | ({"root": root} if root else {})))
        made = (copy / "transcript.json").read_text()
        edited = made.replace('"lines": []', '"lines": [{"start": 1, "end": 2, "text": "x"}]')
        (copy / "transcript.json").write_text(edited)
        with caplog.at_level(logging.WARNING, logger="musicvid"):
            assert run(capsys, *heard, "--workdir", copy)[0] == 0
        assert (copy / "transcript.edited-1.json").read_text() == edited and (
            copy / "transcript.json"
        ).read_text() == made
        assert f"{copy / 'transcript.edited-1.json'}" in caplog.text
        assert str(tmp_path / "wd") not in (copy / "outputs.json").read_text()  # its keys are its own from now on
    assert not list((tmp_path / "wd").glob("*.edited-*"))
