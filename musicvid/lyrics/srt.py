"""SRT lyrics (.srt, or a .txt holding cues' times): each cue its number, its times and its words. Read whole, or
refused by the cue or text that cannot be read so, never sung as something else or left out (docs/lyrics.md,
"Lyrics you have")."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable

from musicvid.core.errors import UserError
from musicvid.core.files import file_number
from musicvid.lyrics.labels import is_label
from musicvid.lyrics.spacing import one_line
from musicvid.lyrics.transcript import TOGETHER, Line, excerpt, has_words, overlaps_note

_SRT_TIME = re.compile(r"(\S+)\s*-->\s*(\S+)")
_SRT_CLOCK = re.compile(r"(-?)(\d+):(\d+):(\d+)(?:[,.](\d+))?")
_SRT_SHAPE = re.compile(r"-?\d+:\d+:\d+.*")  # a clock as SRT writes it (hh:mm:ss), its fraction right or not
# A row that begins like a cue's times: SRT readers (ffmpeg's, mpv's) take it for a cue's wherever it stands, so
# musicvid.delivery.captions puts a word joiner before a lyric that would, and it reads back as words
_LIKE_TIMES = re.compile(r"[-+]?\d[\d:.,\s]*-->")
# SRT's markup (<b> <i> <u> <s> <font ...> and their ends) and ASS override blocks ({\an8}), not a lyric's "<3", ">_<"
# or "{forever}"
_MARKUP = re.compile(r"</?(?:[bius]|font)(?:\s[^<>]*)?>|\{\\[^{}]*\}", re.IGNORECASE)
_ESCAPED_BRACE = re.compile(r"\\([{}])")  # a brace as libass shows one (musicvid.delivery.subtitles writes them so)
_TIMES_WRITTEN = "hh:mm:ss,mmm --> hh:mm:ss,mmm"
# What another subtitle format writes on a row of its own: WebVTT's header, and its cue times without hours (SRT's
# have them: with a point for the comma they are read as SRT's); ASS's first section, and a dialogue row's layer and
# start (the .ass musicvid writes beside a video). Each: its name, its file's suffix, the row.
_OTHER_SUBTITLES = (
    ("WebVTT", "vtt", re.compile(r"WEBVTT(?:\s|$)|\d{1,2}:\d{2}\.\d{3}\s*-->")),
    ("ASS subtitles", "ass", re.compile(r"\[Script Info\]|Dialogue:\s*\d+\s*,\s*\d+:\d{2}:\d{2}[.:]\d{2}\s*,")),
)
# A text file's line breaks (a Unicode line separator, pasted from a web page, is a space inside a line: an editor
# shows no break there); a file made CRLF twice ends its lines in CR CR LF, which editors show as one break
_LINE_BREAK = re.compile(r"\r*\n|\r")

log = logging.getLogger("musicvid")


def text_lines(text: str) -> list[str]:
    """The lines of a text file as an editor numbers them, without the byte-order mark that starts a file where
    files were joined (cat a.lrc b.lrc)."""
    return [line.removeprefix("\ufeff") for line in _LINE_BREAK.split(text)]


def is_srt_times(line: str) -> bool:
    """Whether a line of text begins like an SRT cue's times ("00:00:01,000 --> 00:00:03,000"; a malformed time too,
    which the SRT reader then refuses, where a side has SRT's hh:mm:ss), not words with an arrow in them ("love -->
    hate", "9:00 --> 5:00 barely gettin by")."""
    match = _SRT_TIME.match(line.strip())
    return bool(match and any(_SRT_SHAPE.fullmatch(side) for side in match.groups()))


def _times_row(row: str) -> bool:
    """Whether a row outside a cue's words is meant for its times: it begins like them, or has SRT's hh:mm:ss on a
    side (a time SRT does not write, such as 1e999:00:01, is then refused as such rather than taken for words)."""
    return bool(_LIKE_TIMES.match(row)) or is_srt_times(row)


def clock_seconds(hours: str, minutes: str, seconds: str, fraction: str | None, where: str) -> float:
    """The seconds a clock's digits say, each read by file_number; its seconds below 60 (a clock's 00:99 is no time:
    read as 99 s, a line was placed wherever that fell)."""
    whole = [file_number(part, where) for part in (hours, minutes)]
    if (within := file_number(f"{seconds}.{fraction or 0}", where)) >= 60:
        raise UserError(f"{where}: its time has {seconds} seconds, which a clock counts from 0 to 59")
    return (whole[0] * 60 + whole[1]) * 60 + within


def _srt_seconds(clock: str, where: str) -> float:
    """An SRT time (hh:mm:ss,mmm) in seconds, or one sentence saying it is none or is negative."""
    match = _SRT_CLOCK.fullmatch(clock)
    if not match:
        raise UserError(f"{where} has a time SRT does not write ({clock[:40]}): hh:mm:ss,mmm")
    if match.group(1):
        raise UserError(f"{where} has a negative time ({clock[:40]})")
    return clock_seconds(*match.groups()[1:], where)


def check_not_subtitles(text: str, document: str) -> None:
    """Refuse lyrics that are another subtitle format's (_OTHER_SUBTITLES: WebVTT, ASS), as SRT or as plain lines: read
    as either, their times, headings and styles would be sung."""
    for name, suffix, row in _OTHER_SUBTITLES:
        if any(row.match(line.strip()) for line in text_lines(text)):
            raise UserError(f"{document} is {name}, not SRT: convert it (ffmpeg -i lyrics.{suffix} lyrics.srt)")


def read_srt(text: str, document: str, is_lrc: Callable[[str], bool]) -> list[Line]:
    """The cues of SRT `text` as lines (cues of one time, one: _one_caption_a_time), but those nobody sings: a
    section's name or a direction ("[Music]", "(Instrumental)": is_label). Refused, named by its cue or its text: a
    time that cannot be read, starts
    before 0 or ends before or as it starts; words outside a cue (a block without times, or above its cue's times but
    its number), among cues that have times; a cue that runs into the next one's times (no blank line between:
    they would be sung). A row outside a cue that `is_lrc` (the LRC reader's test) is refused as LRC, not SRT."""
    text = "\n".join(text_lines(text))  # (a pasted BOM, as a file's, is none of a line's text: text_lines)
    check_not_subtitles(text, document)
    blocks = [[row.strip() for row in block.split("\n") if row.strip()] for block in re.split(r"\n\s*\n", text)]
    if not any(_times_row(row) for rows in blocks for row in rows):
        if any(has_words(row) for rows in blocks for row in rows):
            raise UserError(
                f"{document} has no cue times: an SRT cue is its number, its times ({_TIMES_WRITTEN}) and its "
                "words; plain lyrics (a .txt file) are timed by Whisper"
            )
        return []
    cues = [line for rows in blocks if (line := _cue(rows, document, is_lrc))]
    lines = _one_caption_a_time([line for line in cues if not is_label(line.text)])
    if note := overlaps_note(lines, document, "cue"):
        log.warning(note)
    return lines


def _one_caption_a_time(lines: list[Line]) -> list[Line]:
    """Cues of the same start (a duet's two singers) as one caption, their words joined with " / " in the file's
    order, until the last of them ends."""
    at: dict[float, list[Line]] = {}
    for line in lines:
        at.setdefault(line.start, []).append(line)
    return [
        Line(start, max(line.end for line in cues), TOGETHER.join(dict.fromkeys(line.text for line in cues)))
        for start, cues in at.items()
    ]


def _cue(rows: list[str], document: str, is_lrc: Callable[[str], bool]) -> Line | None:
    """One block's cue as a line; None for a block of no words and no times."""
    at = next((i for i, row in enumerate(rows) if _times_row(row)), len(rows))
    numbered = at > 0 and rows[0].isdigit()
    if at == 1 < len(rows) and not numbered and len(rows[0].split()) == 1 and not is_lrc(rows[0]):  # (mistyped)
        said = f"the cue at '{excerpt(rows[1], 60)}' is numbered {excerpt(rows[0])!r}"
        raise UserError(f"{document}: {said}, which is no number: number it (1, 2, ...), or leave the number out")
    _check_outside(rows[int(numbered) : at], document, is_lrc)
    if at == len(rows):
        return None
    row = rows[at]
    where = f"{document}: " + (f"cue {rows[0][:20]}" if numbered else f"the cue at '{excerpt(row, 60)}'")
    match = _SRT_TIME.match(row)
    if not match:
        raise UserError(f"{where} has times SRT does not write ({excerpt(row)}): {_TIMES_WRITTEN}")
    start, end = (_srt_seconds(clock, where) for clock in match.groups())
    if end <= start:  # (one ending as it starts was a scene to the next cue, or to the song's end, unsaid)
        raise UserError(f"{where} ends {'before' if end < start else 'as'} it starts ({row}): give it its sung time")
    sung = rows[at + 1 :]
    if runs_on := next((r for r in sung if _LIKE_TIMES.match(r) and is_srt_times(r)), None):
        raise UserError(f"{where} runs into the next cue's times ({excerpt(runs_on)}): put a blank line before it")
    words = _ESCAPED_BRACE.sub(r"\1", html.unescape(_MARKUP.sub("", " ".join(sung))))
    return Line(start, end, one_line(words))


def _check_outside(rows: list[str], document: str, is_lrc: Callable[[str], bool]) -> None:
    """Refuse words outside a cue: time every line, or none (plain lyrics)."""
    worded = [row for row in rows if has_words(row)]
    if not worded:
        return
    if lrc := next((row for row in worded if is_lrc(row)), None):
        raise UserError(f"{document}: '{excerpt(lrc)}' is a line of LRC, not SRT: give the lyrics as one or the other")
    raise UserError(
        f"{document}: the text at '{excerpt(' '.join(worded))}' has no cue time, as the cues around it have: give "
        f"it its cue's number and times ({_TIMES_WRITTEN}) above it, or give every line without them (plain "
        "lyrics, which Whisper times)"
    )
