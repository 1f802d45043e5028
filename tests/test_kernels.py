"""librosa's numba kernels are compiled by one process at a time (musicvid.core.kernels): two renders started
together on a fresh install had mixed numba's cache files, and every later process crashed loading them."""

import fcntl
import os
import signal
import threading
import time

import librosa
import pytest

from musicvid.core import kernels
from vipe_core.errors import Terminated, stopped_as_interrupted


def held_elsewhere() -> bool:
    """Whether another holder has the lock on librosa's module file: tried from a file opened anew (flock's locks
    belong to an open file, so this one contends with a block's even in its own process)."""
    with open(librosa.__file__, "rb") as module:
        try:
            fcntl.flock(module, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    """A process that has compiled no kernels, beside a cache marked as holding none."""
    monkeypatch.setattr(kernels, "_COMPILED", set())
    monkeypatch.setattr(kernels, "_marks_folder", lambda: tmp_path)


def test_a_process_first_block_of_kernels_holds_the_lock_every_process_of_the_install_shares(monkeypatch):
    with kernels.kernels_compiled("beats"):
        assert held_elsewhere()
    assert not held_elsewhere()  # let go when done
    with kernels.kernels_compiled("beats"):  # compiled in this process now: no lock
        assert not held_elsewhere()
    with kernels.kernels_compiled("sound"):  # another set of kernels: its first block holds it
        assert held_elsewhere()
    monkeypatch.setattr(kernels, "_COMPILED", set())  # another process, once the cache is marked: no lock
    with kernels.kernels_compiled("beats"):
        assert not held_elsewhere()


def test_a_block_that_fails_lets_the_lock_go_and_holds_it_again_next_time():
    with pytest.raises(RuntimeError), kernels.kernels_compiled("beats"):
        raise RuntimeError("numba")
    assert not held_elsewhere()
    with kernels.kernels_compiled("beats"):
        assert held_elsewhere()


def test_a_process_that_waits_for_the_lock_says_so(caplog):
    said = "waiting for another musicvid process to finish compiling librosa's kernels"

    def analyse():
        with kernels.kernels_compiled("beats"):
            pass

    waiter = threading.Thread(target=analyse)
    with caplog.at_level("WARNING", logger="musicvid"), open(librosa.__file__, "rb") as module:
        fcntl.flock(module, fcntl.LOCK_EX)
        waiter.start()
        for _ in range(600):  # (until it has tried: it says so, then waits)
            if said in caplog.text:
                break
            waiter.join(timeout=0.1)
        assert said in caplog.text and waiter.is_alive()
    waiter.join()  # let go: it goes on


def test_a_stop_during_a_first_compile_is_held_to_the_blocks_end_not_lost():
    """numba compiles through llvmlite's callbacks from C, where an exception a signal's handler raises is printed
    and lost, and the run went on: the stop is held while the kernels compile, then raised."""
    went_on = False
    with stopped_as_interrupted(), pytest.raises(Terminated) as stopped, kernels.kernels_compiled("beats"):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # (where a handler would have run)
        went_on = True
    assert went_on and stopped.value.signum == signal.SIGTERM
    assert not held_elsewhere()
