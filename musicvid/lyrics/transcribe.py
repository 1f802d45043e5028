"""Transcribe: Whisper (openai-whisper or faster-whisper) turns the song into timed lyric lines.

Recognition runs only where someone sings. Silero's voice activity detector (bundled with
faster-whisper) finds the voiced stretches, and Whisper decodes each as a clip of its own: it cannot
invent lines over an instrumental passage, nor stretch a word across one. Whisper's segments are
re-cut into sung lines at the singer's pauses, a word reaching out of its voiced stretch is cut back
to it, and a line with too little voice under it goes: silence, not repetition, is the sign of a
hallucination, so a refrain sung three times stays three lines. The language is detected on voiced
audio (not on the first 30 s, often an instrumental intro). A song not in English keeps its original
text (for captions) and gets an English rendering from Whisper's translate task for ViPE.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from musicvid.audio import SAMPLE_RATE
from musicvid.lyrics.transcript import Line, Transcript, Word, fit_to_duration
from musicvid.models.loading import ASRModel
from musicvid.progress import Progress

# Whisper cuts segments by its 30 s windows and its own sense of sentences, not by sung lines: a
# pause this long between two words is where a line ends.
LINE_PAUSE_SECONDS = 0.5
# A stretch sung without such a pause is cut where Whisper cut it, once it lasts longer than this.
LONGEST_LINE_SECONDS = 10.0
# Silero, a little more sensitive than its default (0.5): singing under a band scores lower than speech.
VAD_OPTIONS = {"threshold": 0.35, "min_silence_duration_ms": 300, "speech_pad_ms": 0}
# Silero hears a sung line 0.1-0.7 s after it begins (measured on the test songs), and its ends are
# accurate: Whisper decodes each voiced stretch from a second before it to a little after it ...
CLIP_LEAD = 1.0
CLIP_TAIL = 0.3
# ... and a word may begin at most this long before Silero hears it (Whisper's tiny models put a line's
# first word up to 0.6 s early, over the music before it).
WORD_LEAD = 0.5
# A line with voice under less than this share of its time is not sung.
VOICED_SHARE = 0.5


@dataclass(frozen=True)
class Voice:
    """Where someone sings: Silero's voiced stretches, (start, end) in seconds, in order."""

    stretches: list[tuple[float, float]]
    duration: float

    @classmethod
    def detect(cls, samples: np.ndarray) -> "Voice":
        from faster_whisper.vad import VadOptions, get_speech_timestamps

        found = get_speech_timestamps(samples, VadOptions(**VAD_OPTIONS), sampling_rate=SAMPLE_RATE)
        return cls([(c["start"] / SAMPLE_RATE, c["end"] / SAMPLE_RATE) for c in found], samples.size / SAMPLE_RATE)

    def widened(self) -> list[tuple[float, float]]:
        """The stretches with their lead and tail, merged where they meet: the clips Whisper decodes."""
        merged: list[list[float]] = []
        for start, end in self.stretches:
            start, end = max(0.0, start - CLIP_LEAD), min(self.duration, end + CLIP_TAIL)
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return [(start, end) for start, end in merged]

    def voiced_share(self, start: float, end: float) -> float:
        if end <= start:
            return 0.0
        return sum(max(0.0, min(end, b) - max(start, a)) for a, b in self.widened()) / (end - start)

    def sung(self, lines: list[Line]) -> list[Line]:
        """The lines with voice under them; the others are Whisper's inventions over the music."""
        return [line for line in lines if self.voiced_share(line.start, line.end) >= VOICED_SHARE]

    def fit(self, word: Word) -> None:
        """Keep a word inside the stretch it is sung in (the one it overlaps most, else the nearest):
        Whisper's alignment stretches words over the music next to them, and a stretched word hides
        the pause after a line."""
        if not self.stretches:
            return

        def closeness(stretch: tuple[float, float]) -> float:  # overlap, or minus the distance
            return min(word.end, stretch[1]) - max(word.start, stretch[0])

        start, end = max(self.stretches, key=closeness)
        word.start = min(max(word.start, start - WORD_LEAD), word.end)
        word.end = max(word.start, min(word.end, end + CLIP_TAIL))


def _line(words: list[tuple[int, Word]]) -> Line:
    probabilities = [w.probability for _, w in words if w.probability is not None]
    confidence = round(sum(probabilities) / len(probabilities), 3) if probabilities else None
    text = " ".join(w.text for _, w in words)
    return Line(words[0][1].start, words[-1][1].end, text, words=[w for _, w in words], confidence=confidence)


def lines_at_pauses(segments: list[Line]) -> list[Line]:
    """Re-cut Whisper's segments into sung lines: a new line wherever the singer pauses
    (by the word time stamps); a line sung without a pause keeps Whisper's cuts once it grows long.
    Without any word time stamps, Whisper's segments stay as they are."""
    words = [(n, w) for n, s in enumerate(segments) for w in s.words if w.text]
    if not words:
        return segments
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


def _word(start: float, end: float, text: str, probability: float | None) -> Word:
    return Word(float(start), float(end), text.strip(), None if probability is None else round(float(probability), 3))


def _options(task: str, language: str, clips: list[float], asr: ASRModel) -> dict:
    """What both backends are asked: word times when transcribing, and no conditioning on the line
    before (lyrics repeat, and conditioning on them makes Whisper loop over choruses)."""
    return dict(
        task=task,
        language=language,
        clip_timestamps=clips,
        word_timestamps=task == "transcribe",
        condition_on_previous_text=False,
        temperature=list(asr.temperatures),
    )


def _openai_whisper(asr: ASRModel, samples: np.ndarray, options: dict, show: bool):
    import whisper

    model = asr.model
    torch.manual_seed(0)  # the temperature fallback samples: keep reruns identical
    fp16 = next(model.parameters()).dtype == torch.float16 or model.device.type == "cuda"
    result = whisper.transcribe(model, samples, **options, fp16=fp16, verbose=False if show else None)
    return [
        Line(
            float(s["start"]),
            float(s["end"]),
            s["text"].strip(),
            words=[_word(w["start"], w["end"], w["word"], w.get("probability")) for w in s.get("words", [])],
        )
        for s in result["segments"]
    ]


def _faster_whisper(asr: ASRModel, samples: np.ndarray, options: dict, show: bool):
    segments, info = asr.model.transcribe(samples, **options)
    lines = []
    with Progress(options["task"], total=round(info.duration, 1), unit="s", quiet=not show) as progress:
        for s in segments:  # a generator: recognition happens as it is read
            words = [_word(w.start, w.end, w.word, w.probability) for w in s.words or []]
            lines.append(Line(float(s.start), float(s.end), s.text.strip(), words=words))
            progress.set_to(min(round(s.end, 1), progress.total))
    return lines


@contextmanager
def _torch_threads_kept():
    """openai-whisper times words with numba, whose thread pool, once started, sets the OpenMP thread
    count that torch shares to numba's own (the cores). Pictures drawn with another thread count differ
    in their last bits, so a render that recognized the song would not match its own resume, which
    does not: torch keeps the count it had."""
    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _recognize(asr: ASRModel, samples: np.ndarray, task: str, language: str, clips: list[float], show: bool):
    """Whisper's segments for the clips; openai-whisper shows its own progress bar, in audio frames."""
    recognize = _faster_whisper if asr.backend == "faster-whisper" else _openai_whisper
    with _torch_threads_kept():
        return recognize(asr, samples, _options(task, language, clips, asr), show)


def detect_language(asr: ASRModel, voiced: np.ndarray) -> str:
    """The language of the first 30 s of singing ("en" for English-only models)."""
    if asr.backend == "faster-whisper":
        if not asr.model.model.is_multilingual:
            return "en"
        language, _, _ = asr.model.detect_language(voiced)
        return language
    import whisper

    model = asr.model
    if not model.is_multilingual:
        return "en"
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(voiced), model.dims.n_mels).to(model.device)
    _, probabilities = model.detect_language(mel.to(next(model.parameters()).dtype))
    return max(probabilities, key=probabilities.get)


def attach_translation(lines: list[Line], translated: list[Line]) -> None:
    """Give each line the English of the translated segments sung over it. Whisper's translation is cut
    into segments of its own, so a segment over several lines is split between them: its words in
    order, each line taking a share as large as its share of the segment's time. A segment that
    overlaps no line goes to the nearest one."""
    if not lines:
        return
    parts: list[list[str]] = [[] for _ in lines]
    for segment in translated:
        overlaps = [max(0.0, min(line.end, segment.end) - max(line.start, segment.start)) for line in lines]
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
    source = f"{asr.backend}:{asr.name}"
    voice = Voice.detect(samples)
    if not voice.stretches:  # an instrumental: nobody sings
        return Transcript([], "en", source, audio_sha256)
    clips = [t for clip in voice.widened() for t in clip]
    voiced = np.concatenate([samples[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] for a, b in voice.stretches])
    language = detect_language(asr, voiced)
    segments = _recognize(asr, samples, "transcribe", language, clips, not quiet)
    for word in (w for s in segments for w in s.words):
        voice.fit(word)
    lines = voice.sung(fit_to_duration(lines_at_pauses(segments), duration))
    if language != "en" and lines:
        translated = _recognize(asr, samples, "translate", language, clips, not quiet)
        attach_translation(lines, fit_to_duration(translated, duration))
    return Transcript(lines, language, source, audio_sha256)
