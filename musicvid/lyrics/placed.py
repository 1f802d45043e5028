"""Placed: known lines from the words the walk through the song placed (musicvid.lyrics.align), in their order.
A line is heard where the window's audio gave it at least HEARD nats of evidence a word; a line heard takes its
time from the path, a line unheard the time its neighbours leave it, and no line starts before the one before it
ends, nor is one dropped."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from musicvid.lyrics.openings import Openings
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.spacing import sung_words
from musicvid.lyrics.transcript import Line, Word
from musicvid.lyrics.windows import TimedWord

HEARD = 1.0  # nats a word: the window's audio makes the line's words e times likelier than silence does


def placed_line(text: str, timed: list[TimedWord]) -> Line:
    """A known line from its placed words. Its confidence is their mean probability where the audio gave
    evidence for it, else 0 (flagged)."""
    confidence = float(np.mean([w.probability for w in timed])) if heard(timed) else 0.0
    kept = [Word(w.start, w.end, word, w.probability) for w, word in zip(timed, sung_words(text))]
    return Line(kept[0].start, kept[-1].end, text, words=kept, confidence=round(confidence, 3))


def spread_line(text: str, start: float, end: float) -> Line:
    """A known line the walk did not place: its words spread evenly over [start, end], confidence 0 (flagged)."""
    words = sung_words(text)
    step_ = (end - start) / len(words)
    spans = [(start + k * step_, start + (k + 1) * step_) for k in range(len(words))]
    timed = [Word(round(a, 3), round(b, 3), w, 0.0) for (a, b), w in zip(spans, words)]
    return Line(start, end, text, words=timed, confidence=0.0)


def heard(words: list[TimedWord]) -> bool:
    """Whether the window's audio gave a placed line's words at least HEARD nats each, on average."""
    return float(np.mean([w.evidence for w in words])) >= HEARD


def in_order(placed: list[list[TimedWord] | None]) -> list[list[TimedWord] | None]:
    """`placed`, where an unheard line starts before the line placed before it ends, with the unheard lines since the
    last heard one as not placed: the path had no evidence to place them by, and they are spread evenly between the
    heard lines either side (a window at a clip's end, or a model that hears nothing, may place text over a line
    before it)."""
    kept = list(placed)
    end, last_heard = 0.0, -1  # where the last line kept placed ends; the last heard line
    for n, words in enumerate(placed):
        if words is None:
            continue
        if heard(words):
            end, last_heard = words[-1].end, n
        elif words[0].start < end:
            kept[last_heard + 1 : n + 1] = [None] * (n - last_heard)
            end = placed[last_heard][-1].end if last_heard >= 0 else 0.0
        else:
            end = words[-1].end
    return kept


def known_lines(texts: list[str], placed: list[list[TimedWord] | None], voice: Voice, openings: Openings) -> list[Line]:
    """The lines in order, each placed (its opening `opened`), or spread between the placed lines either side of
    it (`in_order`). A line the audio gave no evidence for takes no time from a heard line after it: the heard
    line's opening is bounded by the last heard line alone, and the unheard lines before it end where it starts."""
    lines: list[Line] = []
    heard_end = 0.0  # where the last heard line ends
    placed = in_order(placed)
    for n, text in enumerate(texts):
        after = lines[-1].end if lines else 0.0
        if placed[n] is None:
            upto = next((p[0].start for p in placed[n + 1 :] if p is not None), voice.duration)
            missing = next((k for k in range(n + 1, len(texts)) if placed[k] is not None), len(texts)) - n
            lines.append(spread_line(text, after, after + max(0.0, upto - after) / missing))
            continue
        heard_line = heard(placed[n])
        bound = heard_end if heard_line else after
        line = placed_line(text, openings.opened(placed[n], sung_words(text)[0], bound, voice))
        if heard_line:
            lines, heard_end = ended_by(lines, line.start), line.end
        lines.append(line)
    return lines


def ended_by(lines: list[Line], start: float) -> list[Line]:
    """`lines`, the unheard ones at their end (confidence 0) ending by `start` where a heard line begins: each
    word clipped to it."""
    kept = list(lines)
    for k in range(len(kept) - 1, -1, -1):
        line = kept[k]
        if line.confidence != 0.0 or line.end <= start:
            break
        words = [replace(w, start=min(w.start, start), end=min(w.end, start)) for w in line.words]
        kept[k] = replace(line, start=min(line.start, start), end=min(line.end, start), words=words)
    return kept


def crowded_tail(lines: list[Line], word: float) -> str | None:
    """What to tell where lines after the last one heard (confidence 0; all lines where none was) are each given less
    than `word` (a typical word's seconds): the song ends before they could be sung (a clip given a whole song's
    lyrics, another version's lyrics). They keep their order and their time, and pass in a flash."""
    heard = [k for k, line in enumerate(lines) if line.confidence]
    crowded = [line for line in lines[heard[-1] + 1 if heard else 0 :] if line.end - line.start < word]
    if not crowded:
        return None
    return (
        f"{len(crowded)} of the {len(lines)} lines given were not heard, and the end of the song leaves them less than"
        " a word's time each: they pass in a flash (is the song cut short, or are the lyrics another version's?)"
    )
