"""The peers, given what musicvid is given: stable-ts (2.19, through its public API: load_model or
load_faster_whisper, then align or transcribe) on the checkpoint musicvid's ASR model was loaded from, in a model
of its own (stable-ts changes the model it wraps), and Whisper's own transcription with word times."""

from __future__ import annotations

import functools

import numpy as np

from musicvid.models.internals import set_alignment_heads


@functools.cache
def stable_ts(backend: str, checkpoint: str, published: str = "base"):
    """stable-ts's model of the checkpoint (a CTranslate2 folder, or an openai-whisper file of Whisper `published`:
    base, tiny.en)."""
    import stable_whisper

    if backend == "faster-whisper":
        return stable_whisper.load_faster_whisper(checkpoint, device="cpu", compute_type="float32")
    model = stable_whisper.load_model(checkpoint, device="cpu")
    set_alignment_heads(model, published)  # a checkpoint file does not carry the heads that align words
    return model


def peer_aligned(
    asr, samples: np.ndarray, texts: list[str], language: str, published: str = "base"
) -> list[list[float]]:
    """stable-ts's start of each known word, line by line: the lines given as its text, kept as lines
    (original_split: each line a segment, as musicvid keeps each a line)."""
    model = stable_ts(asr.backend, asr.name, published)
    result = model.align(samples, "\n".join(texts), language=language, verbose=None, original_split=True)
    return [[word.start for word in segment.words] for segment in result.segments]


def peer_heard(asr, samples: np.ndarray, language: str) -> list[tuple[float, str]]:
    """stable-ts's transcription: each segment's start and text."""
    result = stable_ts(asr.backend, asr.name).transcribe(samples, language=language, verbose=None)
    return [(segment.start, segment.text) for segment in result.segments]


def whisper_heard(asr, samples: np.ndarray, language: str) -> list[tuple[float, str]]:
    """Whisper's own transcription with word times (the backend's transcribe): each segment's first word's
    start and its text."""
    if asr.backend == "faster-whisper":
        segments, _ = asr.model.transcribe(samples, language=language, word_timestamps=True)
        return [(s.words[0].start if s.words else s.start, s.text) for s in segments]
    import whisper

    result = whisper.transcribe(asr.model, samples, language=language, word_timestamps=True, verbose=None)
    return [(s["words"][0]["start"] if s["words"] else s["start"], s["text"]) for s in result["segments"]]
