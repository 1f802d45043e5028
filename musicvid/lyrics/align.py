"""Align: lyrics a person already knows (plain text, no times), timed against the song by Whisper.

Whisper can align a given text instead of recognizing one: its decoder reads the text token by token
while a few of its cross-attention heads point at the audio frames each token was heard in, and a
dynamic-time-warping path through those weights gives every word a start and an end (openai-whisper's
`find_alignment`, CTranslate2's `align` in faster-whisper), with the probability the model gave each
word. A song is longer than Whisper's 30 s window, so the lines are placed a window at a time, as
stable-ts does: the window starts where the next singing starts (voice activity), the next lines are
aligned in it, and the lines that landed on voice are kept; the rest move on to the next window.
A line that cannot be placed with confidence is kept and flagged, never dropped.

The text aligned at once must fit the decoder's context (448 tokens for the real models, 64 for the
tiny preset's): a window takes the lines that fit, and a line longer than a sung line (a song pasted as
one paragraph) is aligned in pieces cut at word boundaries, whose times are joined again; such a line,
sung for longer than a line lasts, becomes the phrases the singer sang, cut at the pauses.
The model is shared by every render of a process (the page, a batch): an alignment that fails leaves
no hook of its own on it.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import replace
from typing import Callable, Protocol

import numpy as np

from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.progress import Progress
from musicvid.lyrics.anchors import ANCHOR_TOLERANCE, Anchor, anchors
from musicvid.lyrics.singing import CLIP_LEAD, VOICED_SHARE, Voice
from musicvid.lyrics.transcribe import LONGEST_LINE_SECONDS, hear, lines_at_pauses, sung_segments
from musicvid.lyrics.transcript import Line, Transcript, Word, has_words
from musicvid.models.internals import (
    faster_whisper_tokenizer,
    faster_whisper_word_timings,
    text_tokens,
    whisper_tokenizer,
    whisper_word_timings,
)
from musicvid.models.loading import ASRModel

WINDOW_SECONDS = 30.0  # Whisper's
# Lines aligned together in one window: enough to fill it, few enough that lines sung later do not
# crowd the ones sung in it.
LINES_PER_WINDOW = 6
# A line is only kept from a window if it ends this long before the window does (unless the song ends).
WINDOW_MARGIN = 1.0
# A known line longer than a sung line is (SUNG_LINE_WORDS) is aligned in pieces of about as many words as
# each, at most WORDS_PER_PIECE (then joined again): a song pasted as one paragraph is then placed piece by
# piece, window after window, as lines are. A line as long as sung lines are is aligned whole: a piece of a
# word or two has too little to be found by.
SUNG_LINE_WORDS = 16
WORDS_PER_PIECE = 8


class WindowAligner(Protocol):
    most_tokens: int  # text tokens one alignment can take: the decoder's context less its prompt and end

    def tokens(self, text: str) -> list[int]: ...

    def align(self, window: np.ndarray, tokens: list[int]) -> list[tuple[Word, int]]:
        """Each word of `tokens` timed in `window` (seconds from its start), with how many tokens it took."""


class WhisperAligner:
    """A WindowAligner by either backend's tokenizer and word timings (musicvid.models.internals)."""

    def __init__(self, model, language: str, tokenizer: Callable, word_timings: Callable):
        self.model, self.word_timings = model, word_timings
        self.tokenizer, self.most_tokens = tokenizer(model, language)

    def tokens(self, text: str) -> list[int]:
        return text_tokens(self.tokenizer, text)

    def align(self, window: np.ndarray, tokens: list[int]) -> list[tuple[Word, int]]:
        timings = self.word_timings(self.model, self.tokenizer, tokens, window)
        return [(Word(start, end, word.strip(), p), count) for word, start, end, p, count in timings]


def window_aligner(asr: ASRModel, language: str) -> WindowAligner:
    if asr.backend == "faster-whisper":
        return WhisperAligner(asr.model, language, faster_whisper_tokenizer, faster_whisper_word_timings)
    return WhisperAligner(asr.model, language, whisper_tokenizer, whisper_word_timings)


def align_lines(aligner: WindowAligner, window: np.ndarray, offset: float, lines: list[list[int]]) -> list[list[Word]]:
    """The lines' tokens aligned together in `window`, split back into lines, in song time."""
    ends = np.cumsum([len(tokens) for tokens in lines])
    words: list[list[Word]] = [[] for _ in lines]
    position = 0
    for word, count in aligner.align(window, [t for tokens in lines for t in tokens]):
        line = min(int(np.searchsorted(ends, position, side="right")), len(lines) - 1)
        position += count
        if words[line] and not has_words(word.text):  # punctuation is no word sung: it joins the one before
            words[line][-1] = replace(words[line][-1], text=words[line][-1].text + word.text.strip())
            continue
        words[line].append(
            Word(
                round(offset + float(word.start), 3),
                round(offset + float(word.end), 3),
                word.text,
                round(float(word.probability), 3),
            )
        )
    return words


def pieces(text: str, aligner: WindowAligner) -> list[str]:
    """`text` as it is, or, if it is longer than a sung line or its tokens overflow one alignment, cut at
    word boundaries into pieces of as even a length as WORDS_PER_PIECE allows, each fitting one alignment (a
    word longer than an alignment alone is cut to fit)."""
    words = text.split()
    if len(words) <= SUNG_LINE_WORDS and len(aligner.tokens(text)) <= aligner.most_tokens:
        return [text]
    size = math.ceil(len(words) / math.ceil(len(words) / WORDS_PER_PIECE))
    cut, piece = [], []
    for word in words:
        longer = [*piece, word]
        if piece and (len(longer) > size or len(aligner.tokens(" ".join(longer))) > aligner.most_tokens):
            cut.append(" ".join(piece))
            piece = []
        piece.append(word)
    return [*cut, " ".join(piece)]


def sung_phrases(parts: list[Line], text: str, pieces: int, voice: Voice) -> list[Line]:
    """A known line, from its placed parts. A line long enough to be aligned in several pieces and sung
    for longer than a line lasts (lyrics pasted without line breaks) becomes the phrases the singer
    sang, cut at the pauses and breaths (`voice`'s stretches), if every part of it was found; any other
    line stays as the person wrote it."""
    line = joined(parts, text)
    if pieces == 1 or line.end - line.start <= LONGEST_LINE_SECONDS or not all(part.words for part in parts):
        return [line]
    return lines_at_pauses([line], voice)


def joined(parts: list[Line], text: str) -> Line:
    """The pieces of one line, aligned one by one, as that line again."""
    words = [w for part in parts for w in part.words]
    shares = [part.confidence for part in parts if part.confidence is not None]
    return Line(
        parts[0].start,
        max(part.end for part in parts),
        text,
        words=words,
        confidence=round(min(shares), 3) if shares else None,
    )


def timed_line(text: str, words: list[Word], voice: Voice) -> Line:
    """A placed line, from its first sung word: a word the warping path stretched over the music before
    the line has no length left once fitted to the voice (Voice.fit), and is pinned to the first sung
    word instead of taking the line's start back into an instrumental passage. Its confidence is its
    words' mean probability, or 0 where nobody sings under it (Whisper put it there, but it was not
    found)."""
    first_sung = next((w for w in words if w.end > w.start), words[0])
    unsung = words.index(first_sung)
    words = [replace(w, start=first_sung.start, end=first_sung.start) for w in words[:unsung]] + words[unsung:]
    start, end = first_sung.start, words[-1].end
    confidence = (
        float(np.mean([w.probability for w in words])) if voice.voiced_share(start, end) >= VOICED_SHARE else 0.0
    )
    return Line(start, end, text, words=words, confidence=round(confidence, 3))


def align_lyrics(
    asr: ASRModel,
    samples: np.ndarray,
    texts: list[str],
    audio_sha256: str,
    *,
    quiet: bool = False,
    hearing: tuple[str, Voice, list[Line]] | None = None,
) -> Transcript:
    """Time each of `texts` (lyric lines, in the order they are sung) against the song; from `hearing`, the
    song as musicvid.lyrics.transcribe.hear heard it already, where there is one (a song is heard once)."""
    language, silero, heard = hearing or hear(asr, samples, quiet)
    aligner = window_aligner(asr, language)
    split = [pieces(text, aligner) for text in texts]
    owners = [n for n, parts in enumerate(split) for _ in parts]  # the line each piece belongs to
    longer = {k for k, n in enumerate(owners) if len(split[n]) > 1}
    every = [part for parts in split for part in parts]
    kept, voice, trusted = sung_segments(heard, silero, samples.size / SAMPLE_RATE, every)
    found = [anchor if anchor is None or in_voice(anchor, voice, trusted) else None for anchor in anchors(every, kept)]
    placed = place_lines(aligner, samples, every, voice, quiet, longer, found)
    lines = [
        phrase
        for n, parts in itertools.groupby(placed, key=lambda pair: owners[pair[0]])
        for phrase in sung_phrases([line for _, line in parts], texts[n], len(split[n]), voice)
    ]
    return Transcript(lines, language, f"{asr.backend}:{asr.name}", audio_sha256)


def in_voice(anchor: Anchor, voice: Voice, trusted: bool) -> bool:
    """Whether a line may be sung where it was heard: where Silero is trusted, only with voice under it
    (Whisper's timestamps may put a line it heard seconds after it was sung, where nobody sings)."""
    return not trusted or voice.voiced_share(anchor.start, anchor.end) >= VOICED_SHARE


def place_lines(
    aligner: WindowAligner,
    samples: np.ndarray,
    texts: list[str],
    voice: Voice,
    quiet: bool,
    pieces: set[int],
    found: list[Anchor | None],
) -> list[tuple[int, Line]]:
    """Each of `texts` (each fits one alignment) placed in the song, a window at a time, as (its index,
    a placed part of it). A window starts a second before its first line's anchor (`found`), else
    before the next singing. The first line of a window is always placed (flagged if it was not found;
    at its anchor if the warping path put it far from there); the others only if they were found, away
    from the window's end and near their anchors. A piece of a longer line (`pieces`) is cut where the
    person did not cut it: its last words, if the warping path put them where nobody sings or at the
    window's end, move on to the next window as a part of their own."""
    duration = samples.size / SAMPLE_RATE
    todo = deque(enumerate(texts))  # (line, text) still to place
    placed: list[tuple[int, Line]] = []
    cursor = 0.0
    with Progress("align", total=len(texts), unit="line", quiet=quiet) as progress:
        while todo and (start := window_start(todo[0], texts, found, voice, cursor)) is not None:
            end = min(duration, start + WINDOW_SECONDS)
            last_time = end - WINDOW_MARGIN if end < duration else duration
            tokens = lines_that_fit(
                [aligner.tokens(text) for _, text in itertools.islice(todo, LINES_PER_WINDOW)], aligner.most_tokens
            )
            window = samples[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)]
            before = len(placed)
            for n, words in enumerate(align_lines(aligner, window, start, tokens)):
                owner, text = todo[0]
                words = voice.fit_phrase(words)  # the warping path fills gaps in the singing with the words beside them
                heard = [w.end <= last_time and voice.voiced_share(w.start, w.end) >= VOICED_SHARE for w in words]
                in_time = (
                    words[: max((k + 1 for k, ok in enumerate(heard) if ok), default=0)] if owner in pieces else words
                )
                line = timed_line(text, words, voice) if words else None
                anchor = anchor_of(owner, text, texts, found)
                misplaced = anchor is not None and (
                    line is None or not line.confidence or abs(line.start - anchor.start) > ANCHOR_TOLERANCE
                )
                cut_short = line is not None and line.end > last_time
                if n and (cut_short or len(in_time) < len(words) or line is None or not line.confidence or misplaced):
                    break
                todo.popleft()
                if misplaced:  # the lines after it were aligned against it: each gets a window of its own
                    placed.append((owner, anchor.line(text)))
                    break
                if len(in_time) < len(words):  # at the window's end: what is sung after it, next window
                    todo.appendleft((owner, " ".join(w.text for w in words[len(in_time) :])))
                    if in_time:
                        placed.append((owner, timed_line(" ".join(w.text for w in in_time), in_time, voice)))
                    break
                placed.append((owner, line or Line(start, start, text, confidence=0.0)))
            # nothing placed: the first line is sung after this window, which its words crowded the end of
            cursor = max(placed[-1][1].end, start + 0.5) if len(placed) > before else last_time
            progress.set_to(len(texts) - len({owner for owner, _ in todo}))
    return placed + the_rest(list(todo), cursor, duration)


def anchor_of(owner: int, text: str, texts: list[str], found: list[Anchor | None]) -> Anchor | None:
    """A line's anchor; a part of it left over from a window has none of its own."""
    return found[owner] if text == texts[owner] else None


def window_start(
    first: tuple[int, str], texts: list[str], found: list[Anchor | None], voice: Voice, cursor: float
) -> float | None:
    """Where the window of the next line to place starts: a second before its anchor, else before the
    next singing after `cursor` (a stretch of voice with a typical word's time left in it after the
    line before); None where no singing is left for it."""
    anchor = anchor_of(*first, texts, found)
    if anchor is not None:
        return max(cursor, anchor.start - CLIP_LEAD)
    onsets = [a for a, b in voice.stretches if b > cursor + voice.word]  # with room for a word left in it
    return max(cursor, onsets[0] - CLIP_LEAD) if onsets else None


def lines_that_fit(tokens: list[list[int]], most_tokens: int) -> list[list[int]]:
    """The first lines' tokens to align together in one window: no more than one alignment takes (at
    least one line, cut to fit: a lone word can be longer)."""
    fit, total = [tokens[0][:most_tokens]], len(tokens[0])
    for more in tokens[1:]:
        if total + len(more) > most_tokens:
            break
        fit.append(more)
        total += len(more)
    return fit


def the_rest(todo: list[tuple[int, str]], after: float, duration: float) -> list[tuple[int, Line]]:
    """Lines no singing was left for: spread over the rest of the song, flagged (confidence 0)."""
    start = min(after, duration)
    step = (duration - start) / max(1, len(todo))
    return [
        (owner, Line(start + n * step, start + (n + 1) * step, text, confidence=0.0))
        for n, (owner, text) in enumerate(todo)
    ]
