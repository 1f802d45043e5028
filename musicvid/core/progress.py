"""Progress on stderr for long work: stage, item i of n, time left (tqdm); silent with --quiet."""

from __future__ import annotations

from tqdm.auto import tqdm


class Progress:
    def __init__(self, stage: str, total: float, unit: str = "it", quiet: bool = False):
        self.total = total
        self._bar = tqdm(total=total, desc=stage, unit=unit, disable=quiet, leave=True, dynamic_ncols=True)

    def advance(self, n: float = 1) -> None:
        self._bar.update(n)

    def set_to(self, done: float) -> None:
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self._bar.close()
