"""The transcript: timed lyric lines, however they were obtained (Whisper, or a user's lyrics file)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vipe_core.files import write_json

# A line whose confidence is below this may be misheard or misplaced: it is flagged for the person to
# check (in the storyboard, the table and the page), never dropped.
UNSURE_BELOW = 0.5


@dataclass
class Word:
    start: float
    end: float
    text: str
    probability: float | None = None  # the recognizer's (or aligner's) confidence in the word, 0..1


@dataclass
class Line:
    start: float
    end: float
    text: str
    # An English rendering for ViPE when the song is in another language; `text` stays original.
    text_en: str | None = None
    words: list[Word] = field(default_factory=list)
    confidence: float | None = None  # mean probability of its words, 0..1; None: no recognizer gave one

    @property
    def english(self) -> str:
        return self.text_en or self.text


@dataclass
class Transcript:
    lines: list[Line]
    language: str
    model: str  # what produced it: "openai-whisper:large", "lyrics:song.lrc", ...
    audio_sha256: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Transcript":
        lines = [
            Line(
                start=float(raw["start"]),
                end=float(raw["end"]),
                text=str(raw["text"]),
                text_en=raw.get("text_en"),
                words=[
                    Word(float(w["start"]), float(w["end"]), str(w["text"]), w.get("probability"))
                    for w in raw.get("words") or []
                ],
                confidence=raw.get("confidence"),
            )
            for raw in data["lines"]
        ]
        return cls(lines, data.get("language", "en"), data.get("model", ""), data.get("audio_sha256", ""))

    def save(self, path: Path) -> None:
        write_json(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> "Transcript":
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))


def has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def fit_to_duration(lines: list[Line], duration: float) -> list[Line]:
    """Lines sorted by start, inside [0, duration], each with words in it."""
    kept = []
    for line in sorted(lines, key=lambda other: (other.start, other.end)):
        if not has_words(line.text) or line.start >= duration:
            continue
        line.start = max(0.0, line.start)
        line.end = min(max(line.end, line.start), duration)
        kept.append(line)
    return kept
