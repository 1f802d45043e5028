"""What Whisper believed of what it heard: how sure it was of each segment's words, against the song's own belief, and
which segments may be sung by Whisper's own signals (musicvid.lyrics.inventions) and that belief. A guess over the
music must not decide where the voice is (musicvid.lyrics.singing)."""

from __future__ import annotations

import numpy as np

from musicvid.lyrics.inventions import invented, loops
from musicvid.lyrics.transcript import Line

# A segment is a guess where the mean probability of its words is under this share of the song's (the mean
# over all the words heard in it): tiny.en's guesses at sounds ("=== The Ber Theo" over guitars) get a tenth of
# what it gives the lines it hears, and large-v2's are as far below its own. Over a band Whisper also
# barely makes out words that are sung, amid lines it hears well: a guess stands where Whisper believed
# something it heard this near it.
GUESSED_SHARE = 0.4
BELIEVED_WITHIN_SECONDS = 10.0


def belief(line: Line) -> float | None:
    """How much Whisper believed the words it heard: their mean probability (None: it gave none)."""
    probabilities = [w.probability for w in line.words if w.probability is not None]
    return sum(probabilities) / len(probabilities) if probabilities else None


def guessed(line: Line, typical: float) -> bool:
    """Whether Whisper barely believed the words it heard, against the song's `typical` segment."""
    believed = belief(line)
    return believed is not None and believed < GUESSED_SHARE * typical


def typical_belief(segments: list[Line]) -> float:
    """How much Whisper believes the song's words: the mean probability of every word it heard in the
    segments (0 where none has one: then nothing is a guess)."""
    probabilities = [w.probability for s in segments for w in s.words if w.probability is not None]
    return float(np.mean(probabilities)) if probabilities else 0.0


def may_be_sung(heard: list[Line]) -> list[Line]:
    """The segments Whisper heard that may be sung: not inventions by their own signals (`invented`), nor
    its loops (`loops`), and not guesses (against the song's own segments) far from anything it believed
    it heard."""
    looped = set(loops(heard))
    plausible = [segment for n, segment in enumerate(heard) if invented(segment) is None and n not in looped]
    typical = typical_belief(plausible)
    believed = [segment for segment in plausible if not guessed(segment, typical)]

    def near_belief(segment: Line) -> bool:
        return any(max(segment.start - b.end, b.start - segment.end) <= BELIEVED_WITHIN_SECONDS for b in believed)

    return [segment for segment in plausible if not guessed(segment, typical) or near_belief(segment)]


def believed(kept: list[Line]) -> list[Line]:
    """What Whisper believed of the segments it kept: its guesses aside (a guess over the music must not make
    Silero look deaf), unless all are guesses."""
    typical = typical_belief(kept)
    return [line for line in kept if not guessed(line, typical)] or kept
