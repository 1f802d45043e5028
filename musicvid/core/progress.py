"""Progress on stderr for long work: stage, item i of n, time left (tqdm); silent with --quiet. On a terminal the bar
is redrawn in place; elsewhere (a log file, a pipe) it is written as plain lines, at the start, every LOGGED_EVERY
seconds and at the end, so that a log holds no carriage returns and stays short."""

from __future__ import annotations

import re
import sys

from tqdm.auto import tqdm

LOGGED_EVERY = 30.0  # seconds between two lines of a bar that is not on a terminal
# What tqdm moves the cursor with, to redraw a line or reach the line of a bar below another
_REDRAW = re.compile(r"\r|\x1b\[[0-9;]*[A-Za-z]")


class Lines:
    """A stream that takes tqdm's redraws of a bar and writes each as a line of its own (the end, drawn again as
    the bar closes, once)."""

    def __init__(self, stream):
        self._stream, self._last = stream, ""

    def write(self, text: str) -> None:
        line = _REDRAW.sub("", text).strip()
        if line and line != self._last:
            self._stream.write(line + "\n")
            self._last = line

    def flush(self) -> None:
        self._stream.flush()


class Progress:
    def __init__(self, stage: str, total: float, unit: str = "it", quiet: bool = False):
        self.total = total
        logged = (
            {}
            if sys.stderr.isatty()
            else dict(file=Lines(sys.stderr), mininterval=LOGGED_EVERY, maxinterval=LOGGED_EVERY)
        )
        self._bar = tqdm(total=total, desc=stage, unit=unit, disable=quiet, leave=True, dynamic_ncols=True, **logged)

    def advance(self, n: float = 1) -> None:
        self._bar.update(n)

    def set_to(self, done: float) -> None:
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self._bar.close()
