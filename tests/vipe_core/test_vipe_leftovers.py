"""What a killed run leaves (a temporary, a checkpoint copy, no last/) never confuses the next one: readers
skip it, the next run on the folder removes it, and train resumes from a last/ a kill left beside its place.
Kills are simulated by making what one leaves by hand."""

from __future__ import annotations

import json
import random
import shutil
import zipfile
from dataclasses import asdict

import numpy as np
import pytest
import torch

from vipe_core.canvas import rows_from_canvas
from vipe_core.chat import TeacherConfig
from vipe_core.cli import main
from vipe_core.collect import artist_file, collect
from vipe_core.errors import VipeError
from vipe_core.filters import read_lyrics_dir
from vipe_core.guards import is_checkpoint_copy
from vipe_core.records import COPY_MARKER, mark_copy, write_jsonl
from vipe_core.resume import SAVING, STATE_ARCHIVES, STATE_FILE, TrainState, check_copies, recover_last
from vipe_core.teacher import run_label

from .helpers import ChatServer, make_songs, write_labelled

DEAD = ".musicvid-99999.{name}.abcd_123.json"  # a temporary of `name` whose writer is gone


def _temporaries(folder, name: str, whole: str) -> list:
    """A whole and a cut-short temporary of folder/name, as a kill during the write or before the rename leaves."""
    paths = [folder / DEAD.format(name=name), folder / DEAD.format(name=name).replace("abcd", "efgh")]
    paths[0].write_text(whole)
    paths[1].write_text(whole[:20])
    return paths


def test_build_and_filter_read_no_temporary_or_dotfile(tmp_path):
    canvas = tmp_path / "canvas"
    write_labelled(canvas, make_songs(2))
    rows = rows_from_canvas(canvas)
    _temporaries(canvas, "1001.json", (canvas / "1001.json").read_text())
    (canvas / "._1000.json").write_bytes(b"\x00\x05\x16\x07")  # macOS's copy of a file's attributes
    assert rows_from_canvas(canvas) == rows

    lyrics = tmp_path / "lyrics"
    lyrics.mkdir()
    artist = {"artist": "a", "artist_id": "1", "songs": [{"song_id": "1", "title": "t", "artist": "a", "lyrics": "x"}]}
    (lyrics / "a.json").write_text(json.dumps(artist))
    _temporaries(lyrics, "a.json", json.dumps(artist))
    assert [a.artist for a in read_lyrics_dir(lyrics)] == ["a"]


def test_label_and_collect_remove_the_temporaries_a_killed_run_left(tmp_path):
    canvas, songs = tmp_path / "canvas", make_songs(2)
    write_jsonl(tmp_path / "clean.jsonl", songs)
    write_labelled(canvas, songs)
    (canvas / "partial").mkdir()
    dead = _temporaries(canvas, "1001.json", "{}") + _temporaries(canvas / "partial", "1001.json", "{}")
    mine = canvas / ".musicvid-notes.json"  # a person's dotfile, not shaped like a temporary
    mine.write_text("mine")
    with ChatServer() as server:
        teacher = TeacherConfig(base_url=server.url, model="stand-in", api_key="k")
        summary = run_label(tmp_path / "clean.jsonl", canvas, teacher, progress=False)
    assert summary["already_labelled"] == 2 and not any(p.exists() for p in dead) and mine.exists()

    lyrics = tmp_path / "lyrics"
    write_jsonl(artist_file(lyrics, "Test Artist"), [])  # collected already: no Genius asked
    dead = _temporaries(lyrics, artist_file(lyrics, "Test Artist").name, "{}")
    assert collect(["Test Artist"], lyrics, progress=False)["already_done"] == 1
    assert not any(p.exists() for p in dead)


def _saved_state(folder, step: int, marked: bool = True) -> None:
    """A whole state as save_last writes it (the archives but the random states' only need to be zip files), in a copy
    marked as vipe marks it (first) unless not `marked`: a checkpoint, or a person's copy of one."""
    folder.mkdir()
    if marked:
        mark_copy(folder)
    for name in STATE_ARCHIVES:
        with zipfile.ZipFile(folder / name, "w") as archive:
            archive.writestr("data", "x")
    states = {"random_state": random.getstate(), "numpy_random_seed": np.random.get_state()}
    torch.save({**states, "torch_manual_seed": torch.get_rng_state()}, folder / "random_states_0.pkl")  # (read)
    (folder / STATE_FILE).write_text(json.dumps(asdict(TrainState(step=step))))


def test_the_newest_whole_state_is_put_back_as_last_and_every_copy_removed(tmp_path):
    _saved_state(tmp_path / ".last.old.abcd1234", 4)  # killed between replace_dir's two renames
    _saved_state(tmp_path / ".last.saving", 6)
    _saved_state(tmp_path / ".last.old.zzzz9999", 9)
    (tmp_path / ".last.old.zzzz9999" / "optimizer.bin").write_bytes(b"cut sho")  # damaged: never chosen
    (tmp_path / ".best.x1y2z3w4").mkdir()  # a save of best/ killed midway
    mark_copy(tmp_path / ".best.x1y2z3w4")
    (tmp_path / ".best.x1y2z3w4" / "config.json").write_text("{}")
    (tmp_path / ".best-notes").mkdir()  # a person's
    line = recover_last(tmp_path, used=True)
    assert line == f"restored {tmp_path / 'last'} from .last.saving, which a run killed while saving it left: step 6"
    assert json.loads((tmp_path / "last" / STATE_FILE).read_text())["step"] == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == [".best-notes", "last"]


def test_a_last_in_place_is_kept_and_the_copies_beside_it_removed(tmp_path):
    _saved_state(tmp_path / "last", 2, marked=False)
    _saved_state(tmp_path / ".last.saving", 3)  # killed while saving the next one: last/ is whole
    assert recover_last(tmp_path, used=True) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]
    assert json.loads((tmp_path / "last" / STATE_FILE).read_text())["step"] == 2


@pytest.mark.slow
def test_train_killed_while_swapping_last_resumes_from_it(tmp_path, tiny_base, canvas_parquet, capsys, one_thread):
    out = tmp_path / "ckpt"

    def train_for(steps: int) -> int:
        flags = ["--context", "1", "--batch-size", "16", "--epochs", "2", "--warmup-steps", "2", "-q"]
        return main(
            [
                "train",
                str(canvas_parquet),
                "--base",
                str(tiny_base),
                "--out",
                str(out),
                *flags,
                "--max-steps",
                str(steps),
            ]
        )

    assert train_for(1) == 0
    # What a kill between replace_dir's two renames leaves: last/ moved aside, the new state beside it.
    mark_copy(out / "last", ".last.old.abcd1234")
    (out / "last").rename(out / ".last.old.abcd1234")
    shutil.copytree(out / ".last.old.abcd1234", out / ".last.saving")
    mark_copy(out / ".last.saving")
    shutil.copytree(out / "best", out / ".best.abcd1234")
    mark_copy(out / ".best.abcd1234")
    capsys.readouterr()
    assert train_for(2) == 0
    printed = capsys.readouterr().out
    assert f"restored {out / 'last'} from .last.saving" in printed and "step 1" in printed
    assert f"resuming from {out / 'last'}: epoch 1, step 1" in printed
    assert json.loads((out / "train_result.json").read_text())["steps"] == 2
    assert sorted(p.name for p in out.iterdir()) == [".vipe.lock", "best", "last", "train_result.json"]
    assert not (out / "last" / COPY_MARKER).exists() and not (out / "best" / COPY_MARKER).exists()


def _listed(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_each_kill_in_a_save_leaves_what_the_next_run_cleans(tmp_path):
    """Where replace_dir and atomic_dir can be killed: before the marker (an empty copy), after it, before the
    first rename (the marker in last/), between the renames, after the second, midway through removing a copy."""
    (tmp_path / ".best.emptyaaa").mkdir()  # killed between mkdtemp and the marker
    (tmp_path / SAVING).mkdir()
    (tmp_path / ".best.halfsave").mkdir()  # killed after the marker, mid save_pretrained
    mark_copy(tmp_path / ".best.halfsave")
    (tmp_path / ".best.halfsave" / "config.json").write_text("{}")
    _saved_state(tmp_path / ".last.old.gone1234", 3)
    (tmp_path / ".last.old.gone1234" / STATE_FILE).unlink()  # killed removing it: the marker goes last
    check_copies(tmp_path, used=True)  # an empty .last.saving is a killed run's, not a person's
    assert recover_last(tmp_path, used=True) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == []

    for killed in ("before the first rename", "between the renames", "after the second rename"):
        out = tmp_path / killed.replace(" ", "-")
        out.mkdir()
        _saved_state(out / "last" if killed == "before the first rename" else out / ".last.old.abcd1234", 4)
        _saved_state(out / "last" if killed == "after the second rename" else out / SAVING, 6)
        recover_last(out, used=True)
        assert sorted(p.name for p in out.iterdir()) == ["last"], killed
        assert COPY_MARKER not in _listed(out / "last"), killed
        step = json.loads((out / "last" / STATE_FILE).read_text())["step"]
        assert step == (4 if killed == "before the first rename" else 6), killed


def test_a_persons_copies_of_best_and_last_are_never_removed(tmp_path):
    """A person's dated copies hold only files vipe writes, in a folder vipe runs used; without the marker no
    vipe run made them. One at .last.saving, the name a run saves to, blocks the run: refused, named."""
    (tmp_path / ".vipe.lock").touch()  # as `vipe evaluate` leaves it
    (tmp_path / ".best.20261201").mkdir()
    (tmp_path / ".best.20261201" / "config.json").write_text('{"mine": 1}')
    _saved_state(tmp_path / ".last.old.20261130", 5, marked=False)
    # a person's copy (cp -a) of a last/ a kill left marked as it was moved aside: the marker names another folder
    _saved_state(tmp_path / ".last.old.backup01", 4, marked=False)
    mark_copy(tmp_path / ".last.old.backup01", ".last.old.k1ll3d00")
    before = _listed(tmp_path)
    recover_last(tmp_path, used=True)
    assert _listed(tmp_path) == before
    assert is_checkpoint_copy(tmp_path / ".best.20261201")  # still refused as a model: it has a copy's name
    _saved_state(tmp_path / SAVING, 6, marked=False)
    with pytest.raises(VipeError, match=rf"^{tmp_path / SAVING} is not vipe's, .*choose another --out\.$"):
        check_copies(tmp_path, used=True)
