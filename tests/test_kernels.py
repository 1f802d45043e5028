"""librosa's numba kernels are compiled by one process at a time (musicvid.storyboard.kernels): two renders started
together on a fresh install had mixed numba's cache files, and every later process crashed loading them."""

import fcntl
import threading

import librosa
import pytest

from musicvid.storyboard import kernels


def held_elsewhere() -> bool:
    """Whether another holder has the lock on librosa's module file: tried from a file opened anew (flock's locks
    belong to an open file, so this one contends with the warm-up's even in its own process)."""
    with open(librosa.__file__, "rb") as module:
        try:
            fcntl.flock(module, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def test_the_kernels_are_compiled_holding_the_lock_every_process_of_the_install_shares(monkeypatch):
    seen = []
    monkeypatch.setattr(kernels, "find_beats", lambda samples: seen.append(("beats", held_elsewhere())))
    monkeypatch.setattr(kernels, "mood", lambda sound, start, end: seen.append(("mood", held_elsewhere())))
    monkeypatch.setattr(kernels.SongSound, "of", staticmethod(lambda samples: None))
    kernels.compile_librosa.__wrapped__()  # (the once-a-process cache left as it is)
    assert seen == [("beats", True), ("mood", True)]
    assert not held_elsewhere()  # let go when done


def test_a_failing_warm_up_lets_the_lock_go(monkeypatch):
    def crash(samples):
        raise RuntimeError("numba")

    monkeypatch.setattr(kernels, "find_beats", crash)
    with pytest.raises(RuntimeError):
        kernels.compile_librosa.__wrapped__()
    assert not held_elsewhere()


def test_a_process_that_waits_for_the_lock_says_so(monkeypatch, caplog):
    monkeypatch.setattr(kernels, "find_beats", lambda samples: None)
    monkeypatch.setattr(kernels, "mood", lambda sound, start, end: None)
    monkeypatch.setattr(kernels.SongSound, "of", staticmethod(lambda samples: None))
    said = "waiting for another musicvid process to finish compiling librosa's kernels"
    waiter = threading.Thread(target=kernels.compile_librosa.__wrapped__)
    with caplog.at_level("WARNING", logger="musicvid"), open(librosa.__file__, "rb") as module:
        fcntl.flock(module, fcntl.LOCK_EX)
        waiter.start()
        for _ in range(600):  # (until it has tried: it says so, then waits)
            if said in caplog.text:
                break
            waiter.join(timeout=0.1)
        assert said in caplog.text and waiter.is_alive()
    waiter.join()  # let go: it goes on
