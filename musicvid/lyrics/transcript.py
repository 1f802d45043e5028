"""The transcript: timed lyric lines, however they were obtained (Whisper, or a user's lyrics file)."""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_TEXT_CHARS, JsonFields, check_json, invalid, parse_json, read_text
from musicvid.core.paths import TEXT_CONTROL, code_point, control_at, printable
from vipe_core.atomic import write_text

log = logging.getLogger("musicvid")

# A line whose confidence is below this may be misheard or misplaced: it is flagged for the person to
# check (in the storyboard, the table and the page), never dropped.
UNSURE_BELOW = 0.5
# Between the lines of one caption sung at once (a duet's two singers): "I will stay / And I will go"
TOGETHER = " / "
# A transcript's JSON as musicvid.core.files.check_json checks it before Transcript.from_json reads it: a word's
# every field is read (an absent one as null); a transcript's language, model and song's hash may be left out
# (TRANSCRIPT_DEFAULTS), not null.
LINE_OR_WORD = "must be an object with start, end and text"
WORD_FIELDS = JsonFields(
    {"start": "number", "end": "number", "text": "string", "probability": "share"}, refused=LINE_OR_WORD
)
LINE_FIELDS = JsonFields(
    {
        "start": "number",
        "end": "number",
        "text": "string",
        "text_en": "string?",
        "words": [WORD_FIELDS],
        "confidence": "share",
    },
    required=("start", "end", "text"),
    refused=LINE_OR_WORD,
)
# A lyric holding a control character (musicvid.core.paths.TEXT_CONTROL) is refused where it is read (lyrics file,
# transcript, storyboard).
TRANSCRIPT_DEFAULTS = {"language": "en", "model": "", "audio_sha256": ""}
TRANSCRIPT_FIELDS = JsonFields({"lines": [LINE_FIELDS], **dict.fromkeys(TRANSCRIPT_DEFAULTS, "string")})
# What no lyric shows, dropped from every line (fit_to_duration) and every plain lyric: what a copy from a web page
# brings unseen (a zero-width space, a word joiner, a byte order mark: "[Chorus]" followed by one is still a heading)
# or turns around (a bidi override, U+202D and U+202E: no lyric is written backwards). The zero-width joiners and
# the marks and isolates of direction stay: scripts and emoji are written with them.
UNSEEN = re.compile("[\u200b\u2060\ufeff\u202d\u202e]")


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
    model: str  # what produced it: "openai-whisper:large", "lyrics:timed 1a2b3c4d5e6f", ...
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
        data = TRANSCRIPT_DEFAULTS | data
        check_json(data, TRANSCRIPT_FIELDS, document)
        for key in TRANSCRIPT_DEFAULTS:  # the language becomes the storyboard's, which refuses it only after the work
            short_text(data[key], document, key)
        lines = []
        for i, raw in enumerate(data["lines"]):
            words = raw.get("words") or []
            if not isinstance(words, list):
                raise invalid(document, f"lines[{i}].words", "must be a list")
            lines.append(
                Line(
                    float(raw["start"]),
                    float(raw["end"]),
                    no_controls(raw["text"], document, f"lines[{i}].text"),
                    raw.get("text_en") and no_controls(raw["text_en"], document, f"lines[{i}].text_en"),
                    [
                        Word(
                            float(w["start"]),
                            float(w["end"]),
                            no_controls(w["text"], document, f"lines[{i}].words[{j}].text"),
                            w.get("probability"),
                        )
                        for j, w in enumerate(words)
                    ],
                    raw.get("confidence"),
                )
            )
        return cls(lines, data["language"], data["model"], data["audio_sha256"])

    def text(self, document: str = "transcript") -> str:
        """As transcript.json holds it; only if its own loader would take it back."""
        data = self.to_json()
        Transcript.from_json(data, document)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def save(self, path: Path) -> None:
        write_text(path, self.text(str(path)))

    @classmethod
    def load(cls, path: Path) -> "Transcript":
        return cls.from_json(parse_json(read_text(path, "transcript"), f"transcript {path}"), f"transcript {path}")

    @classmethod
    def cached(cls, path: Path, audio_sha256: str) -> "Transcript | None":
        """The work directory's transcript of this audio; None where there is none, or it is unreadable
        (a cache is redone, not trusted)."""
        try:
            cached = cls.load(path)
        except (UserError, OSError, UnicodeDecodeError):
            return None
        return cached if cached.audio_sha256 == audio_sha256 else None


def is_storyboard(data: object) -> bool:
    """Whether parsed JSON `data` is a storyboard's (its `audio` and `scenes`), not a transcript's (its `lines`)."""
    return isinstance(data, dict) and {"audio", "scenes"} <= data.keys() and not isinstance(data.get("lines"), list)


def parse_transcript_json(text: str, document: str) -> tuple[list[Line], str]:
    """A transcript's JSON given as a lyrics file: its lines, each word's times checked, and its language."""
    data = parse_json(text, document)
    if is_storyboard(data):
        raise UserError(f"{document} is a storyboard, not a transcript: give it as --storyboard")
    transcript = Transcript.from_json(data, document)
    for i, line in enumerate(transcript.lines):
        if line.start < 0:  # (as an LRC's or SRT's negative time: it was moved to 0, unsaid)
            raise UserError(f"{document}: lines[{i}].start ({line.start:g}) is before the song starts")
        if line.end < line.start:
            raise UserError(f"{document}: lines[{i}].end ({line.end}) is before its start ({line.start})")
        _check_word_times(line, f"lines[{i}]", document)
    if note := overlaps_note(transcript.lines, document, "line"):
        log.warning(note)
    return transcript.lines, transcript.language


# A transcript's word may start or end this far outside its line: Whisper's words poke out of its segments by a
# fraction of a second. Further out, it is no word of its line (karaoke would light it when another line shows).
WORD_SLACK_SECONDS = 1.0


def _check_word_times(line: Line, at: str, document: str) -> None:
    """Refuse, naming its field, a word of `line` (`at` in `document`) that starts before the song, ends before it
    starts, starts before the word before it, or lies outside its line (give or take WORD_SLACK_SECONDS)."""
    earliest, latest = line.start - WORD_SLACK_SECONDS, line.end + WORD_SLACK_SECONDS
    for j, word in enumerate(line.words):
        where, before = f"{at}.words[{j}]", line.words[j - 1].start if j else 0.0
        if word.start < before:
            why = "the song's start (0)" if not j else f"the word before's start ({before:g})"
            raise invalid(document, f"{where}.start", f"must not be before {why}, got {word.start:g}")
        if word.end < word.start:
            raise invalid(document, f"{where}.end", f"must not be before its start ({word.start:g}), got {word.end:g}")
        times = (("start", word.start), ("end", word.end))
        outside = [(field, time) for field, time in times if not earliest <= time <= latest]
        if outside:
            field, value = outside[0]
            raise invalid(
                document,
                f"{where}.{field}",
                f"must be inside its line ({line.start:g}–{line.end:g} s, give or take {WORD_SLACK_SECONDS:g} s), "
                f"got {value:g}",
            )


def short_text(value: str, document: str, where: str) -> str:
    """`value`, a name a person wrote at `where` in `document` (a language, a title), or one sentence saying it is
    longer than MAX_TEXT_CHARS or holds a control character (as --title's: it goes into the video's tags and
    ffmpeg's arguments, where a NUL stops the run after its drawing)."""
    if len(value) > MAX_TEXT_CHARS:
        raise invalid(document, where, f"must be at most {MAX_TEXT_CHARS:,} characters, got {len(value):,}")
    if (at := control_at(value)) is not None:
        raise invalid(document, where, f"holds a control character ({code_point(value[at])})")
    return value


def no_controls(value: str, document: str, where: str) -> str:
    """`value`, a lyric at `where` in `document`, or one sentence saying it holds a control character."""
    if (at := control_at(value)) is not None:
        raise invalid(document, where, f"holds a control character ({code_point(value[at])}), which no lyric has")
    return value


def for_terminal(text: str) -> str:
    """A person's text as the terminal is given it: on one row (its whitespace one space, as captions show a lyric),
    each control and bidi control as its code point (U+001B, U+202E: core.paths.printable), so that no lyric or
    prompt is a command to the terminal (a joiner, U+200C in Persian, prints as itself)."""
    return printable(" ".join(text.split()))


def has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def excerpt(text: str, most: int = 40) -> str:
    """A person's text as a refusal quotes it (for_terminal): its first `most` characters, or fewer where the next is
    a mark on the last (the rest, "…")."""
    if len(text) <= most:
        return for_terminal(text)
    while most > 1 and unicodedata.category(text[most]).startswith("M"):
        most -= 1
    return f"{for_terminal(text[:most])}…"


def past_the_end(line: Line, duration: float) -> bool:
    """Whether `line` has words and starts at or after the end of a song `duration` seconds long: no scene holds
    it, and fit_to_duration leaves it out."""
    return has_words(line.text) and line.start >= duration


def fit_to_duration(lines: list[Line], duration: float) -> list[Line]:
    """New lines: those of `lines` with words in them that start before `duration`, sorted by start, their
    times inside [0, duration] (their words' times as they were), without control characters (a model's text makes
    a transcript and storyboard their loaders take: no_controls) or UNSEEN ones. Lines of one start keep their order
    (a duet's, as written)."""
    kept = []
    for line in sorted(lines, key=lambda other: other.start):
        if not has_words(line.text) or past_the_end(line, duration):
            continue
        start = max(0.0, line.start)
        kept.append(_shown(replace(line, start=start, end=min(max(line.end, start), duration))))
    return kept


def _shown(line: Line) -> Line:
    """`line` without control characters (a model's text: any byte is one of Whisper's tokens) or UNSEEN ones."""
    texts = [line.text, line.text_en or "", *(w.text for w in line.words)]
    if all(_shown_text(text) == text for text in texts):
        return line
    words = [replace(w, text=_shown_text(w.text)) for w in line.words]
    words = [w for w in words if w.text.strip()]  # (a word of nothing shown is no word: karaoke counts the rest)
    text_en = None if line.text_en is None else _shown_text(line.text_en)
    return replace(line, text=_shown_text(line.text), text_en=text_en, words=words)


def _shown_text(text: str) -> str:
    """`text` without what a line shows none of; where that parted two words, one space parts them."""
    shown = UNSEEN.sub("", TEXT_CONTROL.sub("", text))
    return text if shown == text else re.sub(r"(?<=\S) {2,}(?=\S)", " ", shown)


def overlaps_note(lines: Iterable[Line], document: str, unit: str) -> str:
    """How many of the timed `lines` of `document` (each a `unit`: "cue", "line") start before the one before them
    ends, in a sentence; "" for none. Each caption ends where the next starts, which the file's author should hear
    (lines of one start are one caption, a duet's: none of them is counted)."""
    spans = sorted((line.start, line.end) for line in lines)
    pairs = zip(spans, spans[1:])
    if not (count := sum(start_before < start < end_before for (start_before, end_before), (start, _) in pairs)):
        return ""
    starts = "s start" if count > 1 else " starts"
    return f"{document}: {count} {unit}{starts} before the {unit} before ends: a caption ends where the next starts"


def left_out_note(lines: Iterable[Line], duration: float, document: str) -> str:
    """How many of the timed `lines` of `document` a song `duration` seconds long leaves out, starting at or after
    its end; "" for none. They are left out, not refused (an LRC of a longer version is read as far as the song
    goes), but said: a mistyped time ([09:00.00] for [00:09.00]) would lose its line without a word."""
    count = sum(past_the_end(line, duration) for line in lines)
    if not count:
        return ""
    one = count == 1
    return (
        f"{document}: {count} line{'' if one else 's'} start{'s' if one else ''} at or after the "
        f"song's end ({duration:.1f} s) and {'is' if one else 'are'} left out"
    )
