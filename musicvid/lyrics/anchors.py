"""Known lyrics anchored to what Whisper heard: before a line is aligned, its words are matched, as text,
to the words Whisper recognized over the whole song (musicvid.lyrics.singing keeps them), and a line
enough of whose words were heard is anchored there.

Whisper's forced alignment (musicvid.lyrics.align) reads the known words against 30 s of audio; over a
loud band its attention is weak, and the warping path may stretch a word over 20 s of music or crowd a
line into the window's first frames, and every line after it then lands one line late. Recognition over
the whole song is sturdier: it mishears words but rarely misplaces the ones it hears. So a line's window
starts at its anchor (not at the next voice Silero heard, which a band may hide), and an aligned line
that lands far from its anchor takes the anchor's times instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from musicvid.lyrics.transcript import Line, Word

# A line is anchored where at least this share of its words (and two, or all of a shorter line) was heard.
MATCHED_SHARE = 1 / 3
# A segment Whisper heard is a hearing of known lyrics where at least this share of its words are theirs.
HEARD_IN_SHARE = 1 / 2
# An aligned line that starts further than this from its anchor was misplaced by the warping path.
ANCHOR_TOLERANCE = 1.5
# The word grid compared (known words × heard words) is kept in memory: 4 million cells are 16 MB, a
# song's lyrics against what was heard of it many times over.
MAX_CELLS = 4_000_000


def spoken(text: str) -> list[str]:
    """A line's words as they are compared: lower case, letters, digits and apostrophes."""
    return [w for w in (re.sub(r"[^\w']+", "", word.lower()) for word in text.split()) if w]


@dataclass(frozen=True)
class Anchor:
    """Where a known line was heard: its words timed by recognition (a word not heard takes the time
    of the heard word before it), and their mean probability."""

    words: list[Word]
    confidence: float

    @property
    def start(self) -> float:
        return self.words[0].start

    @property
    def end(self) -> float:
        return self.words[-1].end

    def line(self, text: str) -> Line:
        return Line(self.start, self.end, text, words=self.words, confidence=round(self.confidence, 3))


def anchors(texts: list[str], heard: list[Line]) -> list[Anchor | None]:
    """Each known line's anchor among the words Whisper heard, in order (None: too few of its words
    were heard)."""
    heard_words = [w for segment in heard for w in segment.words if spoken(w.text)]
    known = [(n, word) for n, text in enumerate(texts) for word in text.split() if spoken(word)]
    matched = matched_words([spoken(w)[0] for _, w in known], [spoken(w.text)[0] for w in heard_words])
    found: list[Anchor | None] = []
    position, last_hit = 0, -1
    for n, text in enumerate(texts):
        count = sum(1 for line, _ in known if line == n)
        hits = [matched.get(p) for p in range(position, position + count)]
        position += count
        heard_here = [h for h in hits if h is not None]
        if not heard_here or len(heard_here) < min(count, max(2, MATCHED_SHARE * count)):
            found.append(None)
            continue
        # the words before the first one heard were misheard as the heard words just before it
        leading = hits.index(heard_here[0])
        first = heard_words[max(heard_here[0] - leading, last_hit + 1)]
        words, last = [], None
        for word, hit in zip([w for w in text.split() if spoken(w)], hits):
            at = heard_words[hit] if hit is not None else None
            last = at or last
            times = (at.start, at.end) if at else (last.end, last.end) if last else (first.start, first.start)
            words.append(Word(*times, word, at.probability if at else 0.0))
        probabilities = [heard_words[h].probability or 0.0 for h in heard_here]
        found.append(Anchor(words, sum(probabilities) / len(probabilities)))
        last_hit = heard_here[-1]
    return found


def heard_in(texts: list[str], heard: list[Line]) -> list[Line]:
    """The segments Whisper heard the known lines in: those at least half of whose words are the lines' words
    (matched as `anchors` matches them). A segment of sampled nonsense shares a word or two with any lyrics."""
    known = [spoken(word)[0] for text in texts for word in text.split() if spoken(word)]
    words = [(n, spoken(w.text)[0]) for n, segment in enumerate(heard) for w in segment.words if spoken(w.text)]
    matched = [words[at][0] for at in matched_words(known, [word for _, word in words]).values()]
    return [s for n, s in enumerate(heard) if matched.count(n) >= HEARD_IN_SHARE * sum(m == n for m, _ in words) > 0]


def matched_words(known: list[str], heard: list[str]) -> dict[int, int]:
    """The known words that are heard words, by their places, as the fewest edits turning one sequence
    into the other pair them (a refrain sung again is matched to its own return, in order, where the
    longest common run would pull every line after it to a later chorus). Empty where the grid would
    be too large."""
    if not known or not heard or len(known) * len(heard) > MAX_CELLS:
        return {}
    ids = {word: n for n, word in enumerate(dict.fromkeys(known + heard))}
    a, b = np.array([ids[w] for w in known]), np.array([ids[w] for w in heard])
    steps = np.arange(len(b) + 1)
    cost = np.empty((len(a) + 1, len(b) + 1), dtype=np.int32)
    cost[0] = steps
    for i in range(1, len(a) + 1):  # a row at once: its left-to-right dependency is a running minimum
        base = np.minimum(cost[i - 1] + 1, np.concatenate(([i], cost[i - 1, :-1] + (a[i - 1] != b))))
        cost[i] = np.minimum.accumulate(base - steps) + steps
    pairs, i, j = {}, len(a), len(b)
    while i and j:
        if a[i - 1] == b[j - 1] and cost[i, j] == cost[i - 1, j - 1]:
            pairs[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif cost[i, j] == cost[i - 1, j] + 1:
            i -= 1
        elif cost[i, j] == cost[i, j - 1] + 1:
            j -= 1
        else:
            i, j = i - 1, j - 1
    return pairs
