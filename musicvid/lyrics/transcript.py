"""The transcript: timed lyric lines, however they were obtained (Whisper, or a user's lyrics file)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from musicvid.core.files import invalid, json_number, json_share, json_string, parse_json, read_text
from vipe_core.atomic import write_json

# A line whose confidence is below this may be misheard or misplaced: it is flagged for the person to
# check (in the storyboard, the table and the page), never dropped.
UNSURE_BELOW = 0.5


@dataclass(frozen=True)
class Word:
    start: float
    end: float
    text: str
    probability: float | None = None  # the recognizer's (or aligner's) confidence in the word, 0..1


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Transcript:
    lines: list[Line]
    language: str
    model: str  # what produced it: "openai-whisper:large", "lyrics:song.lrc", ...
    audio_sha256: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, document: str = "transcript") -> "Transcript":
        """A transcript from its JSON (a list of lines alone is one too), every field checked like a
        storyboard's: the field and the reason of the first that breaks a rule."""
        if isinstance(data, list):
            data = {"lines": data}
        if not isinstance(data, dict) or not isinstance(data.get("lines"), list):
            raise invalid(document, "lines", "must be a list of lines (objects with start, end and text)")
        lines = []
        for i, raw in enumerate(data["lines"]):
            at = f"lines[{i}]"
            if not isinstance(raw, dict):
                raise invalid(document, at, "must be an object with start, end and text")
            for key in ("start", "end", "text"):
                if key not in raw:
                    raise invalid(document, f"{at}.{key}", "is missing")
            words = raw.get("words") or []
            if not isinstance(words, list):
                raise invalid(document, f"{at}.words", "must be a list")
            text_en = raw.get("text_en")
            lines.append(
                Line(
                    start=json_number(raw["start"], document, f"{at}.start"),
                    end=json_number(raw["end"], document, f"{at}.end"),
                    text=json_string(raw["text"], document, f"{at}.text"),
                    text_en=None if text_en is None else json_string(text_en, document, f"{at}.text_en"),
                    words=[_word(w, document, f"{at}.words[{j}]") for j, w in enumerate(words)],
                    confidence=json_share(raw.get("confidence"), document, f"{at}.confidence"),
                )
            )
        fields = {
            key: data.get(key, default) for key, default in (("language", "en"), ("model", ""), ("audio_sha256", ""))
        }
        for key, value in fields.items():
            json_string(value, document, key)
        return cls(lines, **fields)

    def save(self, path: Path) -> None:
        """Written only if its own loader would take it back."""
        data = self.to_json()
        Transcript.from_json(data, str(path))
        write_json(path, data)

    @classmethod
    def load(cls, path: Path) -> "Transcript":
        return cls.from_json(parse_json(read_text(path, "transcript"), f"transcript {path}"), f"transcript {path}")


def _word(raw: Any, document: str, at: str) -> Word:
    if not isinstance(raw, dict):
        raise invalid(document, at, "must be an object with start, end and text")
    return Word(
        json_number(raw.get("start"), document, f"{at}.start"),
        json_number(raw.get("end"), document, f"{at}.end"),
        json_string(raw.get("text"), document, f"{at}.text"),
        json_share(raw.get("probability"), document, f"{at}.probability"),
    )


def has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def fit_to_duration(lines: list[Line], duration: float) -> list[Line]:
    """New lines: those of `lines` with words in them that start before `duration`, sorted by start, their
    times inside [0, duration] (their words' times as they were)."""
    kept = []
    for line in sorted(lines, key=lambda other: (other.start, other.end)):
        if not has_words(line.text) or line.start >= duration:
            continue
        start = max(0.0, line.start)
        kept.append(replace(line, start=start, end=min(max(line.end, start), duration)))
    return kept
