"""Whisper's decode of a song, made once per model and song within a test module and aligned from.

Transcribing and aligning both start from musicvid.lyrics.transcribe.hear (Whisper over the whole song,
with no gate): the costly part of either, up to 20 s on a CPU for a song of 90 s. Within a module that
transcribes and aligns one song several times, aligning starts from the decode already made of it;
transcribing always decodes anew, so what it asserts of its own decode (the threads it leaves, what it
hears) stays its own. A copy is handed out each time: aligning moves the words it is given.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import musicvid.lyrics.align
import musicvid.lyrics.transcribe


class Hearing:
    def __init__(self):
        self.made: dict[tuple[int, int], tuple] = {}  # (model, samples) by id: their objects and the decode
        self.real = musicvid.lyrics.transcribe.hear

    def decode(self, asr, samples, quiet):
        """Whisper's decode, anew, kept for aligning."""
        heard = self.real(asr, samples, quiet)
        # the model and the samples are kept with it, so that no other object takes their ids
        self.made[id(asr), id(samples)] = (asr, samples, copy.deepcopy(heard))
        return heard

    def again(self, asr, samples, quiet):
        """The decode already made of these samples by this model, else a new one."""
        made = self.made.get((id(asr), id(samples)))
        return copy.deepcopy(made[2]) if made else self.decode(asr, samples, quiet)


@contextmanager
def heard_once() -> Iterator[Hearing]:
    hearing = Hearing()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(musicvid.lyrics.transcribe, "hear", hearing.decode)
        patch.setattr(musicvid.lyrics.align, "hear", hearing.again)
        yield hearing
