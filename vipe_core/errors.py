"""Errors a person can act on: each carries one sentence and the exit code the CLI returns; and the signals that
stop a run as Ctrl-C does (both command lines, `vipe` and `musicvid`, take them so)."""

from __future__ import annotations

import contextlib
import signal
import threading


class VipeError(Exception):
    """Bad input or usage (a missing token, a file that is not what a stage expects): exit code 2."""

    exit_code = 2


class StageError(VipeError):
    """Good input, but the work failed (a service kept failing, training diverged): exit code 1."""

    exit_code = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM (a `kill`, a service stopped) or SIGHUP (the terminal closed, ssh dropped), raised where the run is,
    so that it ends as Ctrl-C ends it: its temporaries and children gone."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminated(signum, frame):
    raise Terminated(signum)


@contextlib.contextmanager
def stopped_as_interrupted():
    """Within it, SIGTERM and SIGHUP raise Terminated. Only the main thread can set a handler (elsewhere nothing
    changes), and a signal the run was started ignoring stays ignored (`nohup` ignores SIGHUP)."""
    kept = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(number) != signal.SIG_IGN:
                kept[number] = signal.signal(number, _terminated)
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)


def stop_said(stopped: KeyboardInterrupt) -> tuple[str, int]:
    """How a stopped run says what stopped it, and its exit code: 128 + the signal's number, as a shell reports a
    process that signal killed."""
    if isinstance(stopped, Terminated):
        return f"stopped ({signal.Signals(stopped.signum).name})", 128 + stopped.signum
    return "interrupted", 128 + signal.SIGINT
