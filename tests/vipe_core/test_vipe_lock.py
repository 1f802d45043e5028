"""The output folder's lock (vipe_core.guards.hold_folder): it never writes through a link, and never
truncates or writes a file it did not make."""

from __future__ import annotations

import os

import pytest

from vipe_core.errors import VipeError
from vipe_core.guards import LOCK_FILE, hold_folder


def test_a_lock_file_is_made_empty_and_a_second_hold_refused(tmp_path):
    with hold_folder(tmp_path / "out"):
        with pytest.raises(VipeError, match="in use by another vipe run; wait"):
            with hold_folder(tmp_path / "out"):
                pass
    assert (tmp_path / "out" / LOCK_FILE).read_bytes() == b""


def test_an_existing_lock_file_is_held_as_it_is(tmp_path):
    (tmp_path / LOCK_FILE).write_text("12345")  # an earlier run's pid
    with hold_folder(tmp_path):
        pass
    assert (tmp_path / LOCK_FILE).read_text() == "12345"


@pytest.mark.parametrize("link", [os.symlink, os.link])
def test_a_link_at_the_lock_name_is_refused_and_its_file_kept(link, tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("my thesis draft")
    (tmp_path / "out").mkdir()
    link(precious, tmp_path / "out" / LOCK_FILE)
    with pytest.raises(VipeError, match=r"\.vipe\.lock is not vipe's lock file \(a link, or not a plain file\)"):
        with hold_folder(tmp_path / "out"):
            pass
    assert precious.read_text() == "my thesis draft"


def test_a_dangling_symlink_at_the_lock_name_is_refused_and_nothing_made(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / LOCK_FILE).symlink_to(tmp_path / "made-through-the-link")
    with pytest.raises(VipeError, match="not vipe's lock file"):
        with hold_folder(tmp_path / "out"):
            pass
    assert not (tmp_path / "made-through-the-link").exists()


def test_a_fifo_or_folder_at_the_lock_name_is_refused(tmp_path):
    os.mkfifo(tmp_path / LOCK_FILE)  # opened without blocking, then refused
    (tmp_path / "folder" / LOCK_FILE).mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "folder"):
        with pytest.raises(VipeError, match="not vipe's lock file"):
            with hold_folder(folder):
                pass


def test_a_run_that_fails_before_writing_leaves_no_folder_its_hold_made(tmp_path):
    # (evaluate refused a checkpoint as it loaded it, and left evaluation-<name>/ holding its lock file alone)
    (tmp_path / "yours").mkdir()
    for folder, written in ((tmp_path / "new", False), (tmp_path / "yours", False), (tmp_path / "written", True)):
        with pytest.raises(VipeError), hold_folder(folder):
            if written:
                (folder / "result.json").write_text("{}")
            raise VipeError("refused")
        assert folder.exists() == (folder.name != "new")
