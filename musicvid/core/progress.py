"""Progress on stderr for long work: stage, item i of n, time left (tqdm; plain lines where stderr is no terminal:
vipe_core.bars); silent with --quiet. And a time taken, said as a person reads it (seconds_text)."""

from __future__ import annotations

from vipe_core.bars import progress_bar


def seconds_text(seconds: float) -> str:
    """A time taken as a person reads it: 12.3 s, and under a tenth of a second in milliseconds (a render that
    found everything made takes a few), never "0.0 s"."""
    if seconds >= 0.1:
        return f"{seconds:.1f} s"
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.0005 else "under 1 ms"


class Progress:
    def __init__(self, stage: str, total: float, unit: str = "it", quiet: bool = False):
        self.total = total
        self._bar = progress_bar(total=total, desc=stage, unit=unit, disable=quiet, leave=True, dynamic_ncols=True)

    def advance(self, n: float = 1) -> None:
        self._bar.update(n)

    def set_to(self, done: float) -> None:
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self._bar.close()
