"""Transcribe: Whisper (openai-whisper or faster-whisper) turns the song into timed lyric lines.

Whisper's segments are re-cut into sung lines at the singer's pauses. Known Whisper failures are
cleaned away: segments without words, segments past the end of the audio, the same line hallucinated
again and again over the music at the end, and first words whose time stamps stretch back over the
music before them. A song not in English keeps its original text (for captions) and gets an English
rendering from Whisper's translate task for ViPE.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from musicvid.audio import SAMPLE_RATE
from musicvid.models import ASRModel
from musicvid.progress import Progress
from musicvid.transcript import Line, Transcript, Word, fit_to_duration

# A run of at least this many identical lines at the very end is Whisper looping over the outro.
TRAILING_REPEAT_RUN = 3
# Whisper cuts segments by its 30 s windows and its own sense of sentences, not by sung lines: a
# pause this long between two words is where a line ends.
LINE_PAUSE_SECONDS = 0.5
# A stretch sung without such a pause is cut where Whisper cut it, once it lasts longer than this.
LONGEST_LINE_SECONDS = 10.0
# Whisper's word alignment often stretches a line's first word back over the music before it.
# A first word longer than this and than STRETCH_FACTOR × the line's median word is such a one.
STRETCHED_WORD_SECONDS = 1.0
STRETCH_FACTOR = 3.0


def _normalized(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def drop_trailing_repeats(lines: list[Line]) -> list[Line]:
    """Keep only the first of a run of identical lines at the end of the transcript."""
    if not lines:
        return lines
    last = _normalized(lines[-1].text)
    run = 0
    for line in reversed(lines):
        if _normalized(line.text) != last:
            break
        run += 1
    return lines[: len(lines) - run + 1] if run >= TRAILING_REPEAT_RUN else lines


def trim_stretched_onsets(lines: list[Line]) -> list[Line]:
    """Move the start of a stretched first word (see STRETCHED_WORD_SECONDS) to its end minus twice
    the line's median word length, and the line's start with it: the line then starts near where
    the voice does, not where the music before it did."""
    for line in lines:
        if len(line.words) < 2:
            continue
        first = line.words[0]
        median = float(np.median([w.end - w.start for w in line.words]))
        if first.end - first.start > max(STRETCHED_WORD_SECONDS, STRETCH_FACTOR * median):
            first.start = first.end - 2 * median
            line.start = max(line.start, first.start)
    return lines


def _line(words: list[tuple[int, Word]]) -> Line:
    return Line(words[0][1].start, words[-1][1].end, " ".join(w.text for _, w in words), words=[w for _, w in words])


def lines_at_pauses(segments: list[Line]) -> list[Line]:
    """Re-cut Whisper's segments into sung lines: a new line wherever the singer pauses
    (by the word time stamps); a line sung without a pause keeps Whisper's cuts once it grows long.
    Segments without word time stamps stay as they are."""
    if not segments or not all(s.words for s in segments):
        return segments
    words = [(n, w) for n, s in enumerate(segments) for w in s.words if w.text]
    lines: list[Line] = []
    current = [words[0]]
    for previous, word in zip(words, words[1:]):
        pause = word[1].start - previous[1].end >= LINE_PAUSE_SECONDS
        long_segment_cut = word[0] != previous[0] and word[1].start - current[0][1].start > LONGEST_LINE_SECONDS
        if pause or long_segment_cut:
            lines.append(_line(current))
            current = []
        current.append(word)
    return lines + [_line(current)]


def _openai_whisper(asr: ASRModel, samples: np.ndarray, task: str, language: str | None, show: bool):
    import whisper

    model = asr.model
    torch.manual_seed(0)  # the temperature fallback samples: keep reruns identical
    result = whisper.transcribe(
        model,
        samples,
        task=task,
        language=language,
        word_timestamps=task == "transcribe",
        # Lyrics repeat; conditioning on the previous line makes Whisper loop over choruses.
        condition_on_previous_text=False,
        fp16=next(model.parameters()).dtype == torch.float16 or model.device.type == "cuda",
        verbose=False if show else None,
    )
    lines = [
        Line(
            start=float(s["start"]),
            end=float(s["end"]),
            text=s["text"].strip(),
            words=[Word(float(w["start"]), float(w["end"]), w["word"].strip()) for w in s.get("words", [])],
        )
        for s in result["segments"]
    ]
    return lines, result.get("language") or "en"


def _faster_whisper(asr: ASRModel, samples: np.ndarray, task: str, language: str | None, show: bool):
    segments, info = asr.model.transcribe(
        samples,
        task=task,
        language=language,
        word_timestamps=task == "transcribe",
        condition_on_previous_text=False,
    )
    lines = []
    with Progress(task, total=round(info.duration, 1), unit="s", quiet=not show) as progress:
        for s in segments:  # a generator: recognition happens as it is read
            lines.append(
                Line(
                    start=float(s.start),
                    end=float(s.end),
                    text=s.text.strip(),
                    words=[Word(float(w.start), float(w.end), w.word.strip()) for w in s.words or []],
                )
            )
            progress.set_to(min(round(s.end, 1), progress.total))
    return lines, info.language or "en"


def _recognize(asr: ASRModel, samples: np.ndarray, task: str, language: str | None, show: bool):
    """Lines and detected language; openai-whisper shows its own progress bar, in audio frames."""
    if asr.backend == "faster-whisper":
        return _faster_whisper(asr, samples, task, language, show)
    return _openai_whisper(asr, samples, task, language, show)


def attach_translation(lines: list[Line], translated: list[Line]) -> None:
    """Give each line the English of the translated segments sung over it. Whisper's translation is cut
    into segments of its own, so a segment over several lines is split between them: its words in
    order, each line taking a share as large as its share of the segment's time. A segment that
    overlaps no line goes to the nearest one."""
    if not lines:
        return
    parts: list[list[str]] = [[] for _ in lines]
    for segment in translated:
        overlaps = [max(0.0, min(l.end, segment.end) - max(l.start, segment.start)) for l in lines]
        words = segment.text.split()
        if sum(overlaps) <= 0:
            nearest = min(range(len(lines)), key=lambda i: abs(lines[i].start - segment.start))
            parts[nearest] += words
            continue
        taken, covered = 0, 0.0
        for i, overlap in enumerate(overlaps):
            covered += overlap
            upto = round(len(words) * covered / sum(overlaps))
            parts[i] += words[taken:upto]
            taken = upto
    for line, words in zip(lines, parts):
        line.text_en = " ".join(words) or None


def transcribe(asr: ASRModel, samples: np.ndarray, audio_sha256: str, *, quiet: bool = False) -> Transcript:
    duration = samples.size / SAMPLE_RATE
    segments, language = _recognize(asr, samples, "transcribe", None, not quiet)
    lines = drop_trailing_repeats(fit_to_duration(trim_stretched_onsets(lines_at_pauses(segments)), duration))
    if language != "en" and lines:
        translated, _ = _recognize(asr, samples, "translate", language, not quiet)
        attach_translation(lines, fit_to_duration(translated, duration))
    return Transcript(lines, language, f"{asr.backend}:{asr.name}", audio_sha256)
