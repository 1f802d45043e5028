"""Errors a person can act on: each carries one sentence and the exit code the CLI returns; the signals that stop a
run as Ctrl-C does; and standard streams whose failed writes are told apart from the work's (both command lines,
`vipe` and `musicvid`, take them so)."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
from typing import Callable


class VipeError(Exception):
    """Bad input or usage (a missing token, a file that is not what a stage expects): exit code 2."""

    exit_code = 2


def not_there(path: str | os.PathLike) -> str:
    """How a file that cannot be opened is not there, for a refusal: a symbolic link that leads nowhere is named so."""
    if os.path.islink(path):
        return f"is a link to {os.readlink(path)}, where nothing is"
    return "does not exist"


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
def handled(handler, numbers=(signal.SIGTERM, signal.SIGHUP)):
    """Within it, `handler` handles the signals `numbers` (SIGTERM and SIGHUP). Only the main thread can set a handler
    (elsewhere nothing changes), and a signal the run was started ignoring stays ignored (`nohup` ignores SIGHUP)."""
    kept = {}
    if threading.current_thread() is threading.main_thread():
        for number in numbers:
            if signal.getsignal(number) != signal.SIG_IGN:
                kept[number] = signal.signal(number, handler)
    try:
        yield
    finally:
        for number, before in kept.items():
            if before is not None:  # (None: one set outside Python, which cannot be set back)
                signal.signal(number, before)


STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GIVEN_AGAIN_SECONDS = 0.01  # after a lost stop (stopped_as_interrupted)


@contextlib.contextmanager
def signals_held():
    """Within it, a stopping signal (STOPPING) is held, and at its end, however it ends, given again to whatever
    handled it before (Terminated, KeyboardInterrupt): for a block that runs Python called back from C, where an
    exception a handler raises is printed and lost, and the run goes on (numba compiling through llvmlite's
    callbacks). The run stops when the block ends, not at once. In the main thread only, as handled."""
    held: list[int] = []
    try:
        with handled(lambda number, frame: held.append(number), STOPPING):
            yield
    finally:
        if held:
            signal.raise_signal(held[0])


@contextlib.contextmanager
def stopped_as_interrupted():
    """Within it, SIGTERM and SIGHUP raise Terminated (handled), and a stop (Terminated, or Ctrl-C's
    KeyboardInterrupt) raised where it is lost (in Python that C called back, numba's compile through llvmlite's
    callbacks; in a finalizer) is given again rather than printed: the run stops when Python runs its own code."""
    before = sys.unraisablehook
    sys.unraisablehook = lambda lost: _given_again(lost, before)
    try:
        with handled(_terminated):
            yield
    finally:
        sys.unraisablehook = before


def _given_again(lost, hook) -> None:
    if not isinstance(lost.exc_value, KeyboardInterrupt):
        hook(lost)
        return
    # (raised again from another thread once this hook has returned: its handler runs in the main thread's next
    # Python, and where that is a callback too, it is lost and given again, until the run's own code runs)
    number = getattr(lost.exc_value, "signum", signal.SIGINT)
    again = threading.Timer(GIVEN_AGAIN_SECONDS, signal.raise_signal, (number,))
    again.daemon = True
    again.start()


def stop_said(stopped: KeyboardInterrupt, command: str, ending: str = "") -> int:
    """Say, after `command`'s name (`ending` its sentences' end), what stopped the run and how to go on; its exit
    code: 128 + the signal's number, as a shell reports a process that signal killed."""
    if isinstance(stopped, Terminated):
        how, code = f"stopped ({signal.Signals(stopped.signum).name})", 128 + stopped.signum
    else:
        how, code = "interrupted", 128 + signal.SIGINT
    print(f"{command}: {how}; run the same command again to continue{ending}", file=sys.stderr)
    return code


class OutputLost(OSError):
    """Standard output took no more of what a command printed: its reader went away (`| head`), or its disk is full."""


class Guarded:
    """A standard stream whose failed writes are told apart from the work's own (which fail alike: a full disk):
    standard output's raise OutputLost, and go on raising it (argparse's help takes the first in its stride),
    standard error's are dropped (a line with nowhere to go stops no work). A closed one (`>&-`, None) writes
    nowhere. Once a write failed, the stream's descriptor writes nowhere too, else Python's own flush at exit would
    fail again."""

    def __init__(self, stream, raising: bool):
        self._stream = stream if stream is not None else open(os.devnull, "w")
        self._raising = raising
        self._lost: OSError | None = None

    def write(self, text: str) -> int:
        return self._guarded(self._stream.write, text) or 0

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    def _guarded(self, call, *args):
        if self._lost is None:
            try:
                return call(*args)
            except OSError as error:
                self._lost = error
                self._write_nowhere()
        if self._raising:
            raise OutputLost(self._lost.errno, self._lost.strerror) from self._lost
        return None

    def _write_nowhere(self) -> None:
        try:
            fd = self._stream.fileno()
        except (OSError, ValueError):  # a stream in memory: nothing of it is flushed at exit
            return
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, fd)
        os.close(nowhere)


def started(command: str, load: Callable[[], Callable[[], int]], ending: str = "") -> int:
    """The exit code of the command line `load()` imports and returns, run: Ctrl-C before that command's own handler
    is in place (while its libraries import, a second or two) said as it says it later, in one sentence after
    `command`'s name (`ending` its sentences' end), not as a traceback."""
    try:
        return load()()
    except KeyboardInterrupt as stopped:
        return stop_said(stopped, command, ending)


def run_guarded(run: Callable[[], int], command: str) -> int:
    """`run()`'s exit code, run with standard output and standard error Guarded, and standard output flushed when it
    ends (or exits, as argparse does after its help), so that a failure to write what it printed last is OutputLost
    too: said by output_lost, after `command`'s name."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Guarded(sys.stdout, raising=True), Guarded(sys.stderr, raising=False)
    try:
        try:
            code = run()
        except SystemExit:  # (argparse's --help, its refusals)
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except OutputLost as lost:
        return output_lost(lost, command)
    finally:
        sys.stdout, sys.stderr = streams


def output_lost(lost: OutputLost, command: str) -> int:
    """The exit code of a run whose standard output took no more. A reader that went away ends it quietly with
    141, as a Unix tool that SIGPIPE killed (`yes | head`): what `set -o pipefail` and PIPESTATUS then see, so a
    script can tell output cut short from output all read. A standard output that takes nothing more (/dev/full) is
    said as such, after `command`'s name, not as the disk the work was written to."""
    if lost.errno == errno.EPIPE:
        return 128 + signal.SIGPIPE
    print(f"{command}: the work is done, but standard output cannot take it ({lost.strerror})", file=sys.stderr)
    return 1
