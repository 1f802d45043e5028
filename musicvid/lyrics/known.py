"""Lyrics a user already has. Timed (.lrc, .srt, or our transcript JSON): Whisper is skipped. Plain
text (.txt): the words are known but not their times, which musicvid.lyrics.align finds in the song."""

from __future__ import annotations

import re
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import check_file, file_sha256, parse_json
from musicvid.lyrics.transcript import Line, Transcript, fit_to_duration, has_words
from musicvid.settings.song import PLAIN, TIMED

# An LRC line has only a start. It ends at the next line, or earlier, after about as long as it takes
# to sing it, so that an instrumental gap after it still becomes a break.
LRC_SECONDS_PER_WORD = 0.4
LRC_MAX_LINE_SECONDS = 8.0


def sung_seconds(text: str) -> float:
    return min(LRC_MAX_LINE_SECONDS, 1.0 + LRC_SECONDS_PER_WORD * len(text.split()))


_LRC_TIME = re.compile(r"\[(\d+):(\d+(?:[.:]\d+)?)\]")
_LRC_WORD_TIME = re.compile(r"<\d+:\d+(?:[.:]\d+)?>")
_LRC_OFFSET = re.compile(r"^\[offset:\s*([+-]?\d+)\s*\]", re.IGNORECASE)
_SRT_TIME = re.compile(r"(-?)(\d+):(\d+):(\d+)[,.](\d+)\s*-->\s*(-?)(\d+):(\d+):(\d+)[,.](\d+)")
_MARKUP = re.compile(r"<[^>]+>|\{[^}]*\}")
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
# An hour of song at that rate would be 7,200 lines: no storyboard is that long (storyboard.MAX_SCENES).
MAX_LINES = 2_000


def starts_with_time(line: str) -> bool:
    """Whether a line of text is a timed LRC line ("[01:23.45] words")."""
    return bool(_LRC_TIME.match(line.strip()))


def _lrc_seconds(minutes: str, seconds: str) -> float:
    return int(minutes) * 60 + float(seconds.replace(":", "."))


def parse_lrc(text: str, duration: float) -> list[Line]:
    offset = 0.0
    stamped: list[tuple[float, str]] = []
    for raw in text.splitlines():
        raw = raw.strip()
        if match := _LRC_OFFSET.match(raw):
            offset = int(match.group(1)) / 1000.0  # positive offset: lyrics come earlier
            continue
        times = []
        while match := _LRC_TIME.match(raw):
            times.append(_lrc_seconds(*match.groups()))
            raw = raw[match.end() :]
        words = " ".join(_LRC_WORD_TIME.sub(" ", raw).split())
        stamped.extend((t - offset, words) for t in times)
    stamped.sort(key=lambda item: item[0])
    lines = []
    for i, (start, words) in enumerate(stamped):
        following = stamped[i + 1][0] if i + 1 < len(stamped) else duration
        if words:  # an empty stamped line only marks where the one before it ends
            lines.append(Line(start, min(following, start + sung_seconds(words)), words))
    return lines


def _srt_seconds(sign: str, hours: str, minutes: str, seconds: str, fraction: str) -> float:
    value = int(hours) * 3600 + int(minutes) * 60 + int(seconds) + int(fraction) / 10 ** len(fraction)
    return -value if sign else value


def parse_srt(text: str, document: str) -> list[Line]:
    """The cues of an SRT file as lines; a cue that starts before 0 or ends before it starts is refused,
    named by its number, not quietly read as something else."""
    lines = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        rows = [r.strip() for r in block.strip().split("\n") if r.strip()]
        for i, row in enumerate(rows):
            if match := _SRT_TIME.search(row):
                start, end = _srt_seconds(*match.groups()[:5]), _srt_seconds(*match.groups()[5:])
                cue = f"cue {rows[0]}" if i == 1 and rows[0].isdigit() else f"the cue at '{row}'"
                if start < 0 or end < 0:
                    raise UserError(f"{document}: {cue} has a negative time ({row})")
                if end < start:
                    raise UserError(f"{document}: {cue} ends before it starts ({row})")
                words = " ".join(_MARKUP.sub("", " ".join(rows[i + 1 :])).split())
                lines.append(Line(start, end, words))
                break
    return lines


def parse_transcript_json(text: str, document: str) -> tuple[list[Line], str]:
    transcript = Transcript.from_json(parse_json(text, document), document)
    for i, line in enumerate(transcript.lines):
        if line.end < line.start:
            raise UserError(f"{document}: lines[{i}].end ({line.end}) is before its start ({line.start})")
    return transcript.lines, transcript.language


def _read_text(path: Path) -> str:
    """A lyrics file's text, refused (before it is parsed) where it is more than lyrics."""
    check_file(path, "lyrics file")
    if path.stat().st_size > 4 * MAX_LYRICS_CHARS:  # UTF-8 takes at most 4 bytes a character
        raise UserError(f"lyrics file {path} is over {MAX_LYRICS_CHARS:,} characters: is it a song's lyrics?")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"lyrics file {path} is not UTF-8 text") from None
    if len(text) > MAX_LYRICS_CHARS:
        raise UserError(f"lyrics file {path} is over {MAX_LYRICS_CHARS:,} characters: is it a song's lyrics?")
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line.split()) > MAX_LINE_WORDS:
            raise UserError(
                f"lyrics file {path} line {number} has {len(line.split()):,} words, more than the {MAX_LINE_WORDS:,} "
                "a line may have: break it where the singer breathes"
            )
    return text


def check_kind(path: Path, kinds: tuple[str, ...] = (*TIMED, PLAIN)) -> None:
    if path.suffix.lower() not in kinds:
        raise UserError(f"lyrics file {path} must be .lrc, .srt, .json (a transcript.json) or .txt (plain lines)")


def check_lyrics_file(path: Path) -> None:
    """Refuse, before any work, a lyrics file that is not one: its kind (by its suffix), its size, its lines."""
    check_kind(path)
    _read_text(path)


def read_plain_lyrics(path: str | Path) -> list[str]:
    """The sung lines of a plain-text lyrics file: one per line; blank lines (between stanzas) and
    section labels are not sung."""
    path = Path(path)
    lines = [" ".join(raw.split()) for raw in _read_text(path).splitlines()]
    sung = [line for line in lines if has_words(line) and not _SECTION.match(line)]
    if not sung:
        raise UserError(f"lyrics file {path} has no lines of lyrics")
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


def read_lyrics(path: str | Path, duration: float, audio_sha256: str = "") -> Transcript:
    """A timed lyrics file as a transcript."""
    path = Path(path)
    check_kind(path, TIMED)
    text = _read_text(path)
    suffix = path.suffix.lower()
    language = "en"
    document = f"lyrics file {path}"
    if suffix == ".lrc":
        lines = parse_lrc(text, duration)
    elif suffix == ".srt":
        lines = parse_srt(text, document)
    else:
        lines, language = parse_transcript_json(text, document)
    check_line_count(len(lines), duration, path)
    lines = fit_to_duration(lines, duration)
    if not lines and text.strip():
        raise UserError(f"lyrics file {path} has no timed lines inside the song's {duration:.1f} s")
    return Transcript(lines, language, f"lyrics:{lyrics_label(path)}", audio_sha256)
