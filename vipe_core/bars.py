"""Progress bars on stderr, for both packages: on a terminal tqdm's bar, redrawn in place; elsewhere (a log file, a
pipe) written as plain lines, at the start, every LOGGED_EVERY seconds and at the end, so that a log holds no
carriage returns and stays short."""

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


def on_terminal() -> bool:
    """Whether stderr, where the bars go, is a terminal: a bar is redrawn in place only there."""
    return sys.stderr.isatty()


def progress_bar(iterable=None, **options) -> tqdm:
    """tqdm's bar over `iterable` with tqdm's `options`, on stderr: as tqdm draws it on a terminal, as plain lines
    LOGGED_EVERY seconds apart elsewhere."""
    if not on_terminal():
        options |= dict(file=Lines(sys.stderr), mininterval=LOGGED_EVERY, maxinterval=LOGGED_EVERY)
    return tqdm(iterable, **options)
