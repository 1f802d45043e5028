"""Align: lyrics a person already knows (plain text, no times), timed against the song by Whisper.

Whisper can align a given text instead of recognizing one: its decoder reads the text token by token
while a few of its cross-attention heads point at the audio frames each token was heard in, and a
dynamic-time-warping path through those weights gives every word a start and an end (openai-whisper's
`find_alignment`, CTranslate2's `align` in faster-whisper), with the probability the model gave each
word. A song is longer than Whisper's 30 s window, so the lines are placed a window at a time, as
stable-ts does: the window starts where the next singing starts (voice activity), the next lines are
aligned in it, and the lines that landed on voice are kept; the rest move on to the next window.
A line that cannot be placed with confidence is kept and flagged, never dropped.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from musicvid.audio import SAMPLE_RATE
from musicvid.models import ASRModel
from musicvid.progress import Progress
from musicvid.transcribe import CLIP_LEAD, VOICED_SHARE, Voice, detect_language
from musicvid.transcript import Line, Transcript, Word

WINDOW_SECONDS = 30.0  # Whisper's
# Lines aligned together in one window: enough to fill it, few enough that lines sung later do not
# crowd the ones sung in it.
LINES_PER_WINDOW = 6
# A line is only kept from a window if it ends this long before the window does (unless the song ends).
WINDOW_MARGIN = 1.0


class WindowAligner(Protocol):
    def tokens(self, text: str) -> list[int]: ...

    def align(self, window: np.ndarray, tokens: list[int]) -> list[tuple[Word, int]]:
        """Each word of `tokens` timed in `window` (seconds from its start), with how many tokens it took."""


class OpenAIWhisperAligner:
    def __init__(self, model, language: str):
        import whisper

        self.model = model
        self.tokenizer = whisper.tokenizer.get_tokenizer(
            model.is_multilingual, num_languages=model.num_languages, language=language, task="transcribe"
        )

    def tokens(self, text: str) -> list[int]:
        return self.tokenizer.encode(" " + text.strip())

    def align(self, window: np.ndarray, tokens: list[int]) -> list[tuple[Word, int]]:
        import whisper
        from whisper.audio import HOP_LENGTH, N_FRAMES
        from whisper.timing import find_alignment

        model = self.model
        mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(window), model.dims.n_mels)[:, :N_FRAMES]
        mel = mel.to(model.device, next(model.parameters()).dtype)
        timings = find_alignment(model, self.tokenizer, tokens, mel, min(N_FRAMES, len(window) // HOP_LENGTH))
        return [(Word(t.start, t.end, t.word.strip(), t.probability), len(t.tokens)) for t in timings]


class FasterWhisperAligner:
    def __init__(self, model, language: str):
        from faster_whisper.tokenizer import Tokenizer

        self.model = model
        self.tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language
        )

    def tokens(self, text: str) -> list[int]:
        return self.tokenizer.encode(" " + text.strip())

    def align(self, window: np.ndarray, tokens: list[int]) -> list[tuple[Word, int]]:
        from faster_whisper.audio import pad_or_trim

        features = self.model.feature_extractor(window)
        frames = min(len(window) // self.model.feature_extractor.hop_length, self.model.feature_extractor.nb_max_frames)
        encoded = self.model.encode(pad_or_trim(features[:, :frames]))
        [timings] = self.model.find_alignment(self.tokenizer, [tokens], encoded, frames)
        return [(Word(t["start"], t["end"], t["word"].strip(), t["probability"]), len(t["tokens"])) for t in timings]


def window_aligner(asr: ASRModel, language: str) -> WindowAligner:
    if asr.backend == "faster-whisper":
        return FasterWhisperAligner(asr.model, language)
    return OpenAIWhisperAligner(asr.model, language)


def align_lines(aligner: WindowAligner, window: np.ndarray, offset: float, lines: list[list[int]]) -> list[list[Word]]:
    """The lines' tokens aligned together in `window`, split back into lines, in song time."""
    ends = np.cumsum([len(tokens) for tokens in lines])
    words: list[list[Word]] = [[] for _ in lines]
    position = 0
    for word, count in aligner.align(window, [t for tokens in lines for t in tokens]):
        line = min(int(np.searchsorted(ends, position, side="right")), len(lines) - 1)
        words[line].append(
            Word(
                round(offset + float(word.start), 3),
                round(offset + float(word.end), 3),
                word.text,
                round(float(word.probability), 3),
            )
        )
        position += count
    return words


def timed_line(text: str, words: list[Word], voice: Voice) -> Line:
    """A placed line; its confidence is its words' mean probability, or 0 where nobody sings under it
    (Whisper put it there, but it was not found)."""
    start, end = words[0].start, words[-1].end
    confidence = (
        float(np.mean([w.probability for w in words])) if voice.voiced_share(start, end) >= VOICED_SHARE else 0.0
    )
    return Line(start, end, text, words=words, confidence=round(confidence, 3))


def align_lyrics(
    asr: ASRModel, samples: np.ndarray, texts: list[str], audio_sha256: str, *, quiet: bool = False
) -> Transcript:
    """Time each of `texts` (lyric lines, in the order they are sung) against the song."""
    duration = samples.size / SAMPLE_RATE
    voice = Voice.detect(samples)
    voiced = [samples[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] for a, b in voice.stretches]
    language = detect_language(asr, np.concatenate(voiced)) if voiced else "en"
    aligner = window_aligner(asr, language)
    tokens = [aligner.tokens(text) for text in texts]
    lines: list[Line] = []
    cursor = 0.0
    with Progress("align", total=len(texts), unit="line", quiet=quiet) as progress:
        while len(lines) < len(texts):
            onsets = [a for a, b in voice.stretches if b > cursor]
            if not onsets:
                break  # no singing left for the remaining lines
            start = max(cursor, onsets[0] - CLIP_LEAD)
            end = min(duration, start + WINDOW_SECONDS)
            batch = range(len(lines), min(len(texts), len(lines) + LINES_PER_WINDOW))
            window = samples[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)]
            placed = align_lines(aligner, window, start, [tokens[i] for i in batch])
            for n, (i, words) in enumerate(zip(batch, placed)):
                for word in words:  # the warping path fills gaps in the singing with the words next to them
                    voice.fit(word)
                line = timed_line(texts[i], words, voice) if words else None
                # the first line of a window is always placed (flagged if it was not found); the
                # others only if they were found, away from the window's end
                cut_short = line is not None and line.end > end - WINDOW_MARGIN and end < duration
                if n and (line is None or cut_short or not line.confidence):
                    break
                lines.append(line or Line(start, start, texts[i], confidence=0.0))
            cursor = max(lines[-1].end, start + 0.5)
            progress.set_to(len(lines))
    place_the_rest(lines, texts, cursor, duration)
    return Transcript(lines, language, f"{asr.backend}:{asr.name}", audio_sha256)


def place_the_rest(lines: list[Line], texts: list[str], after: float, duration: float) -> None:
    """Lines no singing was left for: spread over the rest of the song, flagged (confidence 0)."""
    rest = texts[len(lines) :]
    start = min(after, duration)
    step = (duration - start) / max(1, len(rest))
    for n, text in enumerate(rest):
        lines.append(Line(start + n * step, start + (n + 1) * step, text, confidence=0.0))
