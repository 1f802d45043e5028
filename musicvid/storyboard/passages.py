"""Passages without words, cut with the music: a music video changes picture with the music's phrases, not
once per instrumental. A passage (an intro, a break, the outro: a run of scenes of one kind without words)
is cut first where the music changes (musicvid.storyboard.form), then into scenes of at most a few bars each (the
`bars_per_scene` setting; more bars, a calmer video), every cut on a bar line at the tempo librosa hears.
Each scene so cut is a scene like any other: its own seed, its own mood and its own prompt from ViPE,
which reads the passage's context (the song and the lines sung before it) with that mood. The scene
records why it starts where it does (`cut`), for the storyboard's table and the contact sheet.
docs/storyboard.md, "Passages without words".
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from musicvid.core.audio import Beats
from musicvid.storyboard.board import Scene
from musicvid.storyboard.scenes import numbered

# Nearly every song a music video is made for is in 4/4: a bar is four beats.
BEATS_PER_BAR = 4
# Where librosa hears no pulse (too few beats to tell a bar: an ambient drone, silence), bars of 120 bpm.
NO_PULSE_BAR_SECONDS = 2.0
# The music's changes cut a passage no nearer than this to its ends (the scene before or after would be
# a flash); a bar line this near a passage's end or a cut already made is no place for another cut.
MIN_CUT_SECONDS = 4.0
MIN_SCENE_BARS = 0.5


@dataclass(frozen=True)
class Bars:
    """Where the song's bars begin (s), and a bar's length at the tempo heard."""

    lines: tuple[float, ...]
    seconds: float

    @classmethod
    def of(cls, beats: Beats, chroma: np.ndarray, hop_seconds: float, duration: float) -> Bars:
        """The bar lines of the beats librosa tracked: every fourth beat, from the beat of the four where the
        harmony changes most (`chroma`, one column per `hop_seconds`: chords change on a bar's first beat,
        where a backbeat's snare would be the loudest onset), continued at the same length before the first
        beat and after the last; bars of 120 bpm from 0 where there is no pulse."""
        times = np.asarray(beats.seconds)
        if times.size < 2 * BEATS_PER_BAR:
            return cls(tuple(np.arange(0.0, duration, NO_PULSE_BAR_SECONDS).tolist()), NO_PULSE_BAR_SECONDS)
        change = harmony_change(chroma, (times / hop_seconds).astype(int))
        phase = int(np.argmax([change[p::BEATS_PER_BAR].mean() for p in range(BEATS_PER_BAR)]))
        tracked = times[phase::BEATS_PER_BAR]
        bar = float(np.median(np.diff(times))) * BEATS_PER_BAR
        before = tracked[0] - bar * np.arange(math.floor(tracked[0] / bar), 0, -1)
        after = tracked[-1] + bar * np.arange(1, math.floor((duration - tracked[-1]) / bar) + 1)
        lines = np.concatenate([before, tracked, after])
        return cls(tuple(float(t) for t in lines if 0.0 <= t < duration), bar)

    def counted(self, time: float) -> float:
        """Bars from the first bar line to `time`, as the bar lines count them (a bar's length past them)."""
        lines = self.lines
        if not lines or time <= lines[0]:
            return (time - (lines[0] if lines else 0.0)) / self.seconds
        if time >= lines[-1]:
            return len(lines) - 1 + (time - lines[-1]) / self.seconds
        return float(np.interp(time, lines, np.arange(len(lines))))

    def nearest(self, time: float) -> float:
        """The bar line nearest `time`."""
        return min(self.lines, key=lambda line: abs(line - time), default=time)


def harmony_change(chroma: np.ndarray, at: np.ndarray) -> np.ndarray:
    """At each beat (`at`: chroma columns), how much the harmony of the beat after it differs from the beat
    before it: one less the cosine of their mean chroma."""
    edges = np.clip(np.concatenate([[0], at, [chroma.shape[1]]]), 0, chroma.shape[1])
    means = [chroma[:, a:b].mean(axis=1) if b > a else np.zeros(chroma.shape[0]) for a, b in zip(edges, edges[1:])]
    unit = [m / max(float(np.linalg.norm(m)), 1e-9) for m in means]
    return np.array([1.0 - float(unit[n] @ unit[n + 1]) for n in range(len(at))])


def cut_with_the_music(scenes: list[Scene], changes: Sequence[float], bars: Bars, bars_per_scene: int) -> list[Scene]:
    """The scenes with each passage without words cut again: cut where the music `changes` (moved onto
    the nearest bar line; none nearer than MIN_CUT_SECONDS to the passage's ends), then each part into
    scenes of at most `bars_per_scene` bars, cut on bar lines; numbered anew. Lyric scenes stay."""
    scenes_cut: list[Scene] = []
    for kind, run in itertools.groupby(scenes, key=lambda scene: scene.kind):
        run = list(run)
        if kind == "lyric":
            scenes_cut += run
            continue
        start, end = run[0].start, run[-1].end
        moved = sorted({bars.nearest(t) for t in changes})
        inside = [t for t in moved if start + MIN_CUT_SECONDS <= t <= end - MIN_CUT_SECONDS]
        bounds = [start, *inside, end]
        for n, (first, last) in enumerate(zip(bounds, bounds[1:])):
            cuts = in_bars(first, last, bars, bars_per_scene)
            scenes_cut += [
                Scene(-1, kind, a, b, cut="music" if n and k == 0 else "bars" if k else None)
                for k, (a, b) in enumerate(cuts)
            ]
    return numbered(scenes_cut)


def in_bars(start: float, end: float, bars: Bars, most: int) -> list[tuple[float, float]]:
    """[start, end) as the fewest scenes of at most `most` bars each (as the bar lines count them), cut on
    bar lines as evenly as they allow (no scene shorter than MIN_SCENE_BARS), or in equal parts where no
    bar lines serve."""
    length = bars.counted(end) - bars.counted(start)
    lines = [
        t for t in bars.lines if MIN_SCENE_BARS <= bars.counted(t) - bars.counted(start) <= length - MIN_SCENE_BARS
    ]
    for count in range(max(1, math.ceil(length / most - 1e-9)), len(lines) + 2):
        targets = [bars.counted(start) + i * length / count for i in range(1, count)]
        cuts = (
            sorted({min(lines, key=lambda line: abs(bars.counted(line) - target)) for target in targets})
            if lines
            else []
        )
        bounds = [start, *cuts, end]
        if len(cuts) == count - 1 and all(
            bars.counted(b) - bars.counted(a) <= most + 1e-6 for a, b in zip(bounds, bounds[1:])
        ):
            return list(zip(bounds, bounds[1:]))
    count = max(1, math.ceil((end - start) / (most * bars.seconds) - 1e-9))
    bounds = [start + i * (end - start) / count for i in range(count)] + [end]
    return list(zip(bounds, bounds[1:]))
