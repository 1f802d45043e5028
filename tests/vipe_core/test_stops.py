"""A stop (SIGTERM, SIGHUP, Ctrl-C) is never lost where its exception cannot rise (vipe_core.errors)."""

import ctypes
import os
import signal
import time

import pytest

from vipe_core.errors import Terminated, stopped_as_interrupted


def test_a_stop_raised_in_python_that_c_called_back_is_given_again_not_lost(capsys):
    """A stop whose exception is raised in a callback from C (numba compiling outside a held block; here libc's qsort
    calling its comparison) is printed as ignored and lost, and the run went on to exit 0 (a probe's SIGTERM)."""
    libc = ctypes.CDLL(None)
    comparison = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    sent = []

    def compare(a, b):
        if not sent:
            sent.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # (where the handler runs: in the callback)
        return a[0] - b[0]

    numbers = (ctypes.c_int * 64)(*reversed(range(64)))
    with stopped_as_interrupted(), pytest.raises(Terminated) as stopped:
        libc.qsort(numbers, len(numbers), ctypes.sizeof(ctypes.c_int), comparison(compare))
        for _ in range(500):  # (the stop, given again, is raised here)
            time.sleep(0.01)
    assert sent and stopped.value.signum == signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err
