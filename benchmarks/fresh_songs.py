"""Songs made fresh for the lyric matrix (benchmarks/lyrics.py) and its tests: each of the hard kinds, with
its texts, timings, singer, tempo and band drawn from a seed, so that no rule is tuned to one song.

The kinds (issue 51): an instrumental intro of 20 s; gaps of 10, 17 and 25 s between lines; a refrain
sung three times; a band louder than the voice; a 150 s song. Every line is sung by espeak-ng
(benchmarks/songs.py) at a time drawn for it, so where each line starts is known to the sample.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from benchmarks.songs import RATE, Singer, band, voice, write_song

KINDS = ("intro", "gaps", "refrain", "loud", "long")
LONG_SECONDS = 150.0
# espeak-ng voices Whisper tiny.en understands when they sing (slowly, high or low)
VOICES = ("en-us+f3", "en-us+m3", "en+f2", "en-gb+m1", "en-us+f4", "en+m5", "en-us+m1", "en+f1")
SUBJECTS = ("the morning sun", "my heart", "the night", "a silver river", "the stars", "the wind", "your voice",
            "the city", "an empty road", "the quiet town", "the summer rain", "a burning candle", "the ocean",
            "my shadow", "the golden light", "a lonely bird", "the winter sky", "our old house")  # fmt: skip
VERBS = ("is rising", "is falling", "keeps on turning", "is calling", "is singing", "is burning", "is fading",
         "is running", "is waiting", "is dancing", "is shining", "is breaking", "keeps on dreaming")  # fmt: skip
PLACES = ("over the hills", "down the empty road", "on the quiet town", "to the sea", "in the sky",
          "through the trees", "across the water", "into the night", "beneath the rain", "along the river",
          "behind the mountain", "around the fire", "inside my head", "under the bridge")  # fmt: skip


@dataclass(frozen=True)
class FreshSong:
    """A song to be made: what is sung when (start and end in seconds, text), by whom, over what band."""

    kind: str
    seed: int
    seconds: float
    sung: tuple[tuple[float, float, str], ...]
    singer: Singer
    bpm: float
    voice_level: float
    drums: float

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.seed}"

    def make(self, folder: Path) -> Path:
        """The song as a WAV file in `folder`."""
        mix = band(self.seconds, self.seed, bpm=self.bpm, drums=self.drums)
        lines = [(start, text) for start, _, text in self.sung]
        return write_song(folder / f"{self.name}.wav", mix, lines, self.voice_level, self.singer)


def texts(rng: random.Random, count: int) -> list[str]:
    """`count` different lines: a subject, what it does, and where."""
    lines: list[str] = []
    while len(lines) < count:
        line = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(PLACES)}"
        if line not in lines:
            lines.append(line)
    return lines


def gaps_of(kind: str, rng: random.Random, count: int) -> list[float]:
    """The instrumental gaps after each of `count` lines but the last (seconds)."""
    gaps = [rng.uniform(0.4, 3.0) for _ in range(count - 1)]
    if kind == "gaps":  # the long gaps go after lines drawn at random, in a random order
        for at, gap in zip(rng.sample(range(count - 1), 3), rng.sample([10.0, 17.0, 25.0], 3)):
            gaps[at] = gap
    elif kind == "long":  # a passage of 12 to 20 s after one of the first lines, and gaps of up to 8 s
        gaps = [rng.uniform(0.4, 8.0) for _ in gaps]
        gaps[rng.randrange(3, 12)] = rng.uniform(12.0, 20.0)
    return gaps


def fresh_song(kind: str, seed: int, folder: Path) -> FreshSong:
    """The song of `kind` drawn from `seed`; its lines are sung once in `folder` to learn how long they
    last (the next line starts after the one before it ends)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rng = random.Random(f"{kind}:{seed}")
    singer = Singer(rng.choice(VOICES), rng.randint(100, 140), rng.randint(35, 80))
    count = {"intro": 6, "gaps": 7, "refrain": 5, "loud": 6, "long": 40}[kind]  # a long song: as many as fit
    lines = texts(rng, count)
    if kind == "refrain":  # verses, then one line three times
        lines = lines[:-1] + [lines[-1]] * 3
    start = 20.0 if kind == "intro" else rng.uniform(1.5, 6.0)
    sung = []
    for text, gap in zip(lines, [*gaps_of(kind, rng, len(lines)), 0.0]):
        length = len(voice(text, folder, singer)) / RATE
        if kind == "long" and start + length > LONG_SECONDS - 3.0:
            break
        sung.append((round(start, 2), round(start + length, 2), text))
        start += length + gap
    seconds = LONG_SECONDS if kind == "long" else round(start + rng.uniform(3.0, 8.0), 1)
    loud = kind == "loud"
    return FreshSong(
        kind,
        seed,
        seconds,
        tuple(sung),
        singer,
        bpm=round(rng.uniform(80.0, 160.0), 1),
        voice_level=rng.uniform(0.35, 0.45) if loud else rng.uniform(0.55, 0.9),
        drums=rng.uniform(1.4, 1.8) if loud else rng.uniform(0.6, 1.2),
    )
