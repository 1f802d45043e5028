"""Lyrics a user already has. Timed (.lrc, .srt, or our transcript JSON; a .txt holding LRC or SRT times is read as
the file it is): Whisper is skipped. Plain text (.txt): the words are known but not their times, which
musicvid.lyrics.align finds in the song."""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.audio import MAX_SONG_SECONDS
from musicvid.core.errors import UserError
from musicvid.core.files import check_file, file_number, file_sha256, invalid, parse_json, utf8_text
from musicvid.lyrics.srt import clock_seconds, is_srt_times, read_srt
from musicvid.lyrics.transcript import (
    Line,
    Transcript,
    Word,
    code_point,
    control_at,
    excerpt,
    fit_to_duration,
    has_words,
    past_the_end,
)
from musicvid.settings.song import PLAIN, TIMED

log = logging.getLogger("musicvid")

# An LRC line has only a start. It ends at the next line, or earlier, after about as long as it takes
# to sing it, so that an instrumental gap after it still becomes a break.
LRC_SECONDS_PER_WORD = 0.4
LRC_MAX_LINE_SECONDS = 8.0


def sung_seconds(text: str) -> float:
    return min(LRC_MAX_LINE_SECONDS, 1.0 + LRC_SECONDS_PER_WORD * len(text.split()))


# LRC as its writers write it. A sung line starts with one or more times: [mm:ss.xx], [mm:ss,xx], [mm:ss],
# [mm:ss.xxx], [hh:mm:ss.xx], or [mm:ss:xx] (older writers' mark before the fraction); enhanced LRC times its words
# too (<mm:ss.xx>). A tag alone on a line says who and what ([ar:], [ti:], [al:], [by:], [length:], [offset:±ms]) or
# names a section ([Chorus]): nothing sung. A tag that begins like a time and is none, or a negative one, is refused by
# its line: read as something else, its line would be lost. docs/lyrics.md, "Lyrics you have".
_TAG = re.compile(r"\[([^\[\]]*)\]")
_WORD_TAG = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_TIMELIKE = re.compile(r"\s*[-+]?\s*\d+\s*:.*")  # what begins like a time is read as one, or refused
_TIME = re.compile(r"(\d+):(\d+)(?:[.,:](\d+))?|(\d+):(\d+):(\d+)[.,](\d+)")
_META = re.compile(r"\s*([A-Za-z#][\w ]*?)\s*:(.*)", re.DOTALL)
# An offset nudges the lyrics by milliseconds or seconds; one past the longest song taken moves every line off it.
MAX_OFFSET_MS = MAX_SONG_SECONDS * 1000
# Lyrics copied from the web name their sections: "[Chorus]", "[Verse 2: Name]". Nobody sings those.
_SECTION = re.compile(r"^\[[^\]]*\]$")

# A lyrics file is read whole and its every word aligned to the song. The longest songs' lyrics (minutes
# of fast rap) run to about 40,000 characters; past 100,000 it is no song's, and aligning it would hold the
# page's one render slot for minutes.
MAX_LYRICS_CHARS = 100_000
# A sung line is a few dozen words at most; lyrics pasted without line breaks become the phrases sung
# (musicvid.lyrics.align), which is a few hundred words for a whole song.
MAX_LINE_WORDS = 1_000
# Lines a song can hold: one per half second on average, far more than any song has (a 3-minute song:
# 360). More is no song's lyrics, and each line costs an alignment, a scene and a picture.
SECONDS_PER_LINE = 0.5
# An hour of song at that rate would be 7,200 lines: no storyboard is that long (storyboard.board.MAX_SCENES).
MAX_LINES = 2_000


def starts_with_time(line: str) -> bool:
    """Whether a line of text begins like a timed LRC line ("[01:23.45] words"; a malformed time too, which the LRC
    reader then refuses)."""
    tag = _TAG.match(line.strip())
    return bool(tag and _TIMELIKE.fullmatch(tag.group(1)))


def lyrics_kind(path: Path, text: str) -> str:
    """How lyrics file `path` is read: by its suffix, except plain text (.txt) holding times, which is the timed file
    it is (an SRT cue's times: .srt; else a line that starts with a time: .lrc), as the page reads pasted lyrics: a
    person who wrote times meant them (read as words, they would be sung and their times lost)."""
    suffix = path.suffix.lower()
    if suffix != PLAIN:
        return suffix
    lines = text.splitlines()
    if any(is_srt_times(line) for line in lines):
        return ".srt"
    return ".lrc" if any(starts_with_time(line) for line in lines) else PLAIN


def _tag_seconds(tag: str, where: str) -> float:
    """The time a tag (brackets and all) says, or one sentence saying it is none an LRC writer writes."""
    inside = tag[1:-1].strip()
    if inside.startswith("-"):
        raise UserError(f"{where}: {tag} is a time before the song starts")
    match = _TIME.fullmatch(inside)
    if not match:
        raise UserError(f"{where}: {tag} is no time an LRC line is read by ([mm:ss.xx], [mm:ss] or [hh:mm:ss.xx])")
    minutes, seconds, fraction, *hours_on = match.groups()
    return clock_seconds(*(hours_on if hours_on[0] is not None else ("0", minutes, seconds, fraction)), where)


# A sung word's own time in enhanced LRC: (start, end; None where the line's end ends it, text)
WordTime = tuple[float, float | None, str]


def _sung(text: str, where: str) -> tuple[str, tuple[WordTime, ...]]:
    """A timed line's words, and their own times where enhanced LRC gives each of them one (<mm:ss.xx> before a
    word; one after the last ends it; words between two times share them by their letters), else none."""
    pieces: list[tuple[float | None, str]] = []  # each stretch of text and the time before it
    before, last = None, 0
    for tag in _WORD_TAG.finditer(text):
        if _TIMELIKE.fullmatch(tag.group(0)[1:-1]):  # (else a word in brackets: sung)
            pieces.append((before, text[last : tag.start()]))
            before, last = _tag_seconds(tag.group(0), where), tag.end()
    pieces.append((before, text[last:]))
    sung = " ".join(" ".join(chunk.split()) for _, chunk in pieces if chunk.split())
    if len(pieces) == 1 or any(time is None for time, chunk in pieces if chunk.split()):
        return sung, ()
    times: list[WordTime] = []
    for (start, chunk), (end, _) in zip(pieces, [*pieces[1:], (None, "")]):
        words = chunk.split()
        if not words:
            continue
        if end is None or end <= start:  # the last words, which the line's end ends
            times.extend((start, None, word) for word in words)
            continue
        letters = [0, *itertools.accumulate(len(word) + 1 for word in words)]
        edges = [start + (end - start) * n / letters[-1] for n in letters]
        times.extend(zip(edges, edges[1:], words))
    return sung, tuple(times)


def _offset(tag: str, offset: float | None, where: str) -> float | None:
    """The offset (s) a tag alone on a line sets, else `offset` as it was."""
    meta = _META.fullmatch(tag)
    if not meta or meta.group(1).lower() != "offset":
        return offset
    if offset is not None:
        raise UserError(f"{where}: a second [offset:] tag: which one holds?")
    value = meta.group(2).strip()
    return file_number(value.removeprefix("+"), f"{where} [offset:] (ms)", -MAX_OFFSET_MS, MAX_OFFSET_MS) / 1000.0


def lrc_stamps(text: str, document: str = "the lyrics") -> list[tuple[float, str, tuple[WordTime, ...]]]:
    """The times of LRC `text`, each with its line's words ("": where the line before ends) and their own times (a
    line sung once: _sung), in the order written, the offset applied; or one sentence naming a line that cannot be
    read so: a time no writer writes, sung words without a time among timed lines, a line the offset moves before
    the song starts."""
    offset: float | None = None
    stamped: list[tuple[float, tuple[str, tuple[WordTime, ...]], int]] = []
    untimed: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        where, rest, times = f"{document} line {number}", raw.strip(), []
        while (tag := _TAG.match(rest)) and _TIMELIKE.fullmatch(tag.group(1)):
            times.append(_tag_seconds(tag.group(0), where))
            rest = rest[tag.end() :].lstrip()
        if times:
            sung, words = _sung(rest, where)
            stamped.extend((time, (sung, words if len(times) == 1 else ()), number) for time in times)
        elif tag := _TAG.fullmatch(rest):
            offset = _offset(tag.group(1), offset, where)
        elif has_words(rest):
            untimed.append((number, rest))
    if untimed:
        number, words = untimed[0]
        if stamped:
            raise UserError(
                f"{document} line {number} ({excerpt(words)}) has no time, as the lines around it have: give it its "
                "time ([mm:ss.xx]), or give every line without one (plain lyrics, which Whisper times)"
            )
        raise UserError(
            f"{document} has no times: an LRC line starts with its time ([mm:ss.xx]); plain lyrics (a .txt file) "
            "are timed by Whisper"
        )
    shift = offset or 0.0
    for time, (words, _), number in stamped:
        if words and time < shift:
            raise UserError(
                f"{document} line {number}: its [offset:] moves it {shift - time:g} s before the song starts"
            )

    def moved(own: tuple[WordTime, ...]) -> tuple[WordTime, ...]:
        return tuple((max(0.0, a - shift), None if b is None else max(0.0, b - shift), word) for a, b, word in own)

    return [(time - shift, sung, moved(own)) for time, (sung, own), _ in stamped]


def parse_lrc(text: str, duration: float, document: str = "the lyrics") -> list[Line]:
    """LRC's sung lines: each ends where the next starts, or after the time its words take, or with its last word's
    own time (enhanced LRC's, which karaoke then follows: musicvid.delivery.captions.word_times)."""
    stamped = sorted(lrc_stamps(text, document), key=lambda item: item[0])
    lines = []
    for i, (start, sung, own) in enumerate(stamped):
        following = stamped[i + 1][0] if i + 1 < len(stamped) else duration
        if sung:  # an empty stamped line only marks where the one before it ends
            end = min(following, max(start + sung_seconds(sung), own[-1][1] or own[-1][0] if own else start))
            words = _ended(own, end)
            lines.append(Line(start, end, sung, words=words if len(words) == len(own) else []))
    return lines


def _ended(own: tuple[WordTime, ...], end: float) -> list[Word]:
    """A line's words with their own times, ending by `end`: the last words, which no time ends, share the time
    from theirs to `end` by their letters; a word that starts after `end` is left out."""
    timed = [Word(a, min(b, end), word) for a, b, word in own if b is not None and a < end]
    last = [(a, word) for a, b, word in own if b is None and a < end]
    if last:
        letters = [0, *itertools.accumulate(len(word) + 1 for _, word in last)]
        edges = [last[0][0] + (end - last[0][0]) * n / letters[-1] for n in letters]
        timed += [Word(a, b, word) for a, b, (_, word) in zip(edges, edges[1:], last)]
    return timed


def parse_srt(text: str, document: str) -> list[Line]:
    """The cues of an SRT file as lines (musicvid.lyrics.srt), an LRC line outside them refused as not SRT."""
    return read_srt(text, document, starts_with_time)


def parse_transcript_json(text: str, document: str) -> tuple[list[Line], str]:
    transcript = Transcript.from_json(parse_json(text, document), document)
    for i, line in enumerate(transcript.lines):
        if line.end < line.start:
            raise UserError(f"{document}: lines[{i}].end ({line.end}) is before its start ({line.start})")
        _check_word_times(line, f"lines[{i}]", document)
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


def _read_text(path: Path) -> str:
    """A lyrics file's text, refused (before it is parsed) where it is more than lyrics."""
    check_file(path, "lyrics file")
    if path.stat().st_size > 4 * MAX_LYRICS_CHARS:  # UTF-8 takes at most 4 bytes a character
        raise UserError(f"lyrics file {path} is over {MAX_LYRICS_CHARS:,} characters: is it a song's lyrics?")
    text = utf8_text(path, "lyrics file")
    if len(text) > MAX_LYRICS_CHARS:
        raise UserError(f"lyrics file {path} is over {MAX_LYRICS_CHARS:,} characters: is it a song's lyrics?")
    return text


def _check_words(document: str, lines: Iterable[tuple[str, str]]) -> None:
    """Refuse a sung line of more than MAX_LINE_WORDS words; `lines`: each line's name (after `document`) and text."""
    for where, text in lines:
        if (count := len(text.split())) > MAX_LINE_WORDS:
            raise UserError(
                f"{document}{where} has {count:,} words, more than the {MAX_LINE_WORDS:,} a line may have: break it "
                "where the singer breathes"
            )


def check_kind(path: Path) -> None:
    if path.suffix.lower() not in (*TIMED, PLAIN):
        raise UserError(f"lyrics file {path} must be .lrc, .srt, .json (a transcript.json) or .txt (plain lines)")


def timed_lines(text: str, kind: str, duration: float, document: str) -> tuple[list[Line], str]:
    """The lines of timed lyrics `text` of `kind` (lyrics_kind; as written: not yet fitted to the song) and their
    language."""
    if kind == ".lrc":
        return parse_lrc(text, duration, document), "en"
    if kind == ".srt":
        return parse_srt(text, document), "en"
    return parse_transcript_json(text, document)


@dataclass(frozen=True)
class KnownLyrics:
    """A lyrics file as its check read it, once (musicvid.run.Run.lyrics): its text and, for a timed file, its lines
    as written (the song's length bounds their ends: read_lyrics) and their language."""

    path: Path
    text: str
    lines: tuple[Line, ...] | None = None  # None: plain lyrics, whose lines read_plain_lyrics reads
    language: str = "en"

    @property
    def timed(self) -> bool:
        return self.lines is not None


def check_lyrics_file(path: Path) -> KnownLyrics:
    """Refuse, before any work, a lyrics file that is not one: its kind (by its suffix and, for plain text, its
    times: lyrics_kind), its size, a control character, its sung lines' words, and a timed file's every time. The
    file as read, once: the run keeps it."""
    check_kind(path)
    text = _read_text(path)
    kind, document = lyrics_kind(path, text), f"lyrics file {path}"
    if (at := control_at(text)) is not None:
        raise UserError(
            f"{document} line {text.count(chr(10), 0, at) + 1} holds a control character ({code_point(text[at])}), "
            "which no lyric has"
        )
    if kind == PLAIN:
        _check_words(document, ((f" line {n}", raw) for n, raw in enumerate(text.splitlines(), start=1)))
        return KnownLyrics(path, text)
    lines, language = timed_lines(text, kind, math.inf, document)  # (the song bounds an LRC's last line: read_lyrics)
    # A timed line's words are counted, not its file's lines': a transcript's JSON may be written on one line.
    _check_words(document, ((f": the line at {line.start:g} s", line.text) for line in lines))
    return KnownLyrics(path, text, tuple(lines), language)


def read_plain_lyrics(lyrics: KnownLyrics) -> list[str]:
    """The sung lines of plain lyrics: one per line; blank lines (between stanzas) and section labels are not
    sung."""
    lines = [" ".join(raw.split()) for raw in lyrics.text.splitlines()]
    sung = [line for line in lines if has_words(line) and not _SECTION.match(line)]
    if not sung:
        raise UserError(f"lyrics file {lyrics.path} has no lines of lyrics")
    return sung


def check_line_count(count: int, duration: float, path: str | Path) -> None:
    """Refuse, before any line is aligned or drawn, more lines than the song can hold."""
    most = min(MAX_LINES, max(1, int(duration / SECONDS_PER_LINE)))
    if count > most:
        raise UserError(
            f"lyrics file {path} has {count} lines, more than a {duration:.1f} s song can hold ({most}: one "
            f"per {SECONDS_PER_LINE:g} s, {MAX_LINES:,} in all): is it this song's lyrics?"
        )


def lyrics_label(path: str | Path) -> str:
    """What names a lyrics file in a transcript's source: its name and a hash of its content."""
    return f"{Path(path).name}:{file_sha256(path)[:12]}"


def read_lyrics(lyrics: KnownLyrics, duration: float, audio_sha256: str = "") -> Transcript:
    """Timed lyrics (their lines as written) as the transcript of a song `duration` seconds long; the lines it leaves
    out, unsaid (a run says them: fit_lyrics)."""
    lines = fit_to_duration(list(lyrics.lines), duration)
    # Counted inside the song: an LRC of the whole song fits a clip of it (the file's own bound: MAX_LYRICS_CHARS).
    check_line_count(len(lines), duration, lyrics.path)
    if not lines and lyrics.text.strip():
        raise UserError(f"lyrics file {lyrics.path} has no timed lines inside the song's {duration:.1f} s")
    return Transcript(lines, lyrics.language, f"lyrics:{lyrics_label(lyrics.path)}", audio_sha256)


def fit_lyrics(lyrics: KnownLyrics, duration: float, audio_sha256: str) -> Transcript:
    """read_lyrics for a run's song, saying the lines it leaves out (left_out_note): a run fits them once
    (musicvid.prepare), for its storyboard and its karaoke."""
    transcript = read_lyrics(lyrics, duration, audio_sha256)
    if note := left_out_note(lyrics.lines, duration, f"lyrics file {lyrics.path}"):
        log.warning(note)
    return transcript


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
