"""A person's edits to the work directory's storyboard.json stay theirs once a run built on them and wrote them back
(with its picks): a later run that replaces them with anything else (a storyboard made anew for other settings,
another --storyboard) sets them aside first, however many reruns came between. A storyboard nobody edited, and one
rendered from a --storyboard file (the page's way: its edits are that file's), is replaced without a copy. What tells
them apart is on disk: outputs.json records every version written, those holding edits marked.

The runs here call the storyboard stage's functions directly: a storyboard built on is reused without models, and
one made anew is written as storyboard_in writes it (ViPE's prompts are not what is tested)."""

import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from musicvid.core.files import file_sha256
from musicvid.core.outputs import Version, last_written, written_here
from musicvid.storyboard import kept
from musicvid.storyboard.board import SongAudio, Storyboard
from musicvid.storyboard.kept import save_picks, write_storyboard
from musicvid.storyboard.make import get_transcript, made_with_of, storyboard_in
from musicvid.storyboard.scenes import scenes_from_lines
from tests.helpers import make_tone
from tests.test_storyboard_edits_kept import LYRICS, edit, prepared, prompt_of

MINE = "a red lighthouse on a cliff, oil painting"


@pytest.fixture
def song(tmp_path):
    (tmp_path / "song.lrc").write_text(LYRICS)
    return make_tone(tmp_path / "song.wav", 4.0)


def run_of(song, workdir, **request):
    return prepared(song, workdir, lyrics_file=song.with_suffix(".lrc"), title="Lighthouse", artist="Tiny", **request)


def made_for(run_) -> Storyboard:
    """The storyboard storyboard_in makes for `run_`'s settings, its prompts and sections filled in."""
    info, transcript = run_.audio.info, get_transcript(run_)
    scenes = scenes_from_lines(transcript.lines, info.duration, run_.request.break_seconds)
    sections = {"intro": "intro", "lyric": "verse", "break": "break", "outro": "outro"}
    scenes = [replace(s, prompt=f"made {run_.request.seed} {s.index}", section=sections[s.kind]) for s in scenes]
    return Storyboard(
        audio=SongAudio(info.duration, str(Path(info.path).resolve()), info.sha256),
        title="Lighthouse",
        artist="Tiny",
        settings=made_with_of(run_.request, run_.registry, transcript, "Lighthouse", "Tiny"),
        scenes=scenes,
    )


def made_anew(run_) -> Storyboard:
    """As storyboard_in writes a storyboard made anew (built on nothing)."""
    with run_.workdir.held():
        made = made_for(run_)
        write_storyboard(run_, made)
    return made


def built_on(run_) -> Storyboard:
    """As a rerun with the same settings builds on the work directory's storyboard.json and writes it back."""
    with run_.workdir.held():
        return storyboard_in(run_)


def asides(workdir: Path) -> list[str]:
    return sorted(p.name for p in workdir.glob("storyboard.edited-*.json"))


def test_edits_written_back_with_picks_are_set_aside_by_a_storyboard_made_anew(song, tmp_path, caplog):
    workdir = tmp_path / "wd"
    first = run_of(song, workdir)
    made_anew(first)
    board = workdir / "storyboard.json"
    edited = edit(board, lambda b: b["scenes"][1].update(prompt=MINE))
    built = built_on(first)
    assert built_on(run_of(song, workdir)).scenes[1].prompt == MINE  # built on twice, written back each time
    # the picks, saved over the run's own version of the edits: saved, and still the person's
    with first.workdir.held(), caplog.at_level(logging.WARNING, logger="musicvid"):
        picked = built.with_scenes({1: replace(built.scenes[1], seed=12345)})
        save_picks(first, picked)
    assert board.read_text() == picked.text() and "edited while" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        made_anew(run_of(song, workdir, seed=1))
    assert asides(workdir) == ["storyboard.edited-1.json"]
    aside = json.loads((workdir / "storyboard.edited-1.json").read_text())
    assert aside["scenes"][1] == edited["scenes"][1] | {"seed": 12345} and "storyboard.edited-1.json" in caplog.text
    assert prompt_of(board, 1) == "made 1 1"
    made_anew(run_of(song, workdir, seed=2))  # nobody edited what seed 1 made: replaced, no copy
    assert asides(workdir) == ["storyboard.edited-1.json"] and prompt_of(board, 1) == "made 2 1"


def test_an_edit_of_a_written_back_storyboard_made_while_a_run_draws_is_not_saved_over(song, tmp_path, caplog):
    workdir = tmp_path / "wd"
    made_anew(run_of(song, workdir))
    edit(workdir / "storyboard.json", lambda b: b["scenes"][1].update(prompt=MINE))
    rerun = run_of(song, workdir)
    built = built_on(rerun)
    again = edit(workdir / "storyboard.json", lambda b: b["scenes"][0].update(prompt="edited while it drew"))
    with rerun.workdir.held(), caplog.at_level(logging.WARNING, logger="musicvid"):
        save_picks(rerun, built)
    assert json.loads((workdir / "storyboard.json").read_text()) == again and "edited while" in caplog.text


def test_a_written_back_edit_is_recorded_marked_and_only_what_the_run_wrote_last_takes_its_picks(
    song, tmp_path, caplog
):
    workdir = tmp_path / "wd"
    made = made_anew(run_of(song, workdir))
    board = workdir / "storyboard.json"
    edit(board, lambda b: b["scenes"][1].update(prompt=MINE))
    rerun = run_of(song, workdir)
    built = built_on(rerun)
    # on disk, not in the process: outputs.json holds the write-back, marked, after musicvid's own (unmarked)
    versions = json.loads(rerun.workdir.outputs.read_text())["written"][str(board.resolve())]
    assert versions[0] == [len(made.text().encode()), hashlib.sha256(made.text().encode()).hexdigest()]
    assert versions[-1] == [board.stat().st_size, file_sha256(board), {"edits": True}]
    assert not written_here(board, rerun.workdir) and not hasattr(kept, "_last_written")
    picked = built.with_scenes({1: replace(built.scenes[1], seed=7)})
    with rerun.workdir.held():
        save_picks(rerun, picked)
    assert board.read_text() == picked.text()
    assert last_written(board, rerun.workdir) == Version(file_sha256(board), True)  # the picks, still the person's
    # musicvid's own first version put back while the run draws: a version it wrote, but not the one this run wrote
    board.write_text(made.text())
    with rerun.workdir.held(), caplog.at_level(logging.WARNING, logger="musicvid"):
        save_picks(rerun, picked)
    assert board.read_text() == made.text() and "edited while" in caplog.text


def test_a_storyboard_file_rendered_into_the_work_directory_is_musicvids_and_sets_edits_aside(song, tmp_path):
    workdir = tmp_path / "wd"
    made = made_anew(run_of(song, workdir))
    board = workdir / "storyboard.json"
    edit(board, lambda b: b["scenes"][1].update(prompt=MINE))
    built_on(run_of(song, workdir))
    other = tmp_path / "other.json"
    other.write_text(made.text())
    built_on(prepared(song, workdir, storyboard_file=other))  # another storyboard: the edits built on go aside
    assert asides(workdir) == ["storyboard.edited-1.json"]
    assert prompt_of(workdir / "storyboard.edited-1.json", 1) == MINE and prompt_of(board, 1) == "made 0 1"
    # the page's way: each render's file is the work directory's storyboard with the table's edits; nothing is set
    # aside, nor when one is made anew (the edits are the page's file's)
    page = tmp_path / "storyboard.edited.json"
    for prompt in ("the page's edit", "the page's second edit"):
        table = json.loads(board.read_text())
        table["scenes"][1]["prompt"] = prompt
        page.write_text(json.dumps(table))
        built_on(prepared(song, workdir, storyboard_file=page))
        assert prompt_of(board, 1) == prompt
    made_anew(run_of(song, workdir, seed=1))
    assert asides(workdir) == ["storyboard.edited-1.json"]


def as_older_musicvids_left_it(workdir: Path) -> None:
    """outputs.json as a musicvid before edit marks (551c7eb's parent) wrote it back over a person's edits: the
    storyboard.json built on them recorded as its own, [size, sha256], and no format mark. (A musicvid of that age
    run on a newer work directory rewrites the record so too, its edit mark and format mark dropped.)"""
    board = workdir / "storyboard.json"
    record = {str(board.resolve()): [[board.stat().st_size, file_sha256(board)]]}
    (workdir / "outputs.json").write_text(json.dumps({"written": record}, indent=2) + "\n")


@pytest.mark.parametrize("built_on_first", [False, True])
def test_edits_an_older_musicvid_recorded_as_its_own_are_set_aside_by_a_storyboard_made_anew(
    song, tmp_path, caplog, built_on_first
):
    workdir = tmp_path / "wd"
    made_anew(run_of(song, workdir))
    edited = edit(workdir / "storyboard.json", lambda b: b["scenes"][1].update(prompt=MINE))
    as_older_musicvids_left_it(workdir)
    if built_on_first:  # this version builds on them first: recorded as the person's from now on
        built_on(run_of(song, workdir))
        assert json.loads((workdir / "outputs.json").read_text())["format"] == 2
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        made_anew(run_of(song, workdir, seed=1))
    assert asides(workdir) == ["storyboard.edited-1.json"] and "storyboard.edited-1.json" in caplog.text
    assert json.loads((workdir / "storyboard.edited-1.json").read_text())["scenes"][1] == edited["scenes"][1]
    assert prompt_of(workdir / "storyboard.json", 1) == "made 1 1"
    made_anew(run_of(song, workdir, seed=2))  # what seed 1 made, recorded by this version: replaced, no copy
    assert asides(workdir) == ["storyboard.edited-1.json"]
