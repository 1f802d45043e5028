"""Lyrics a user already has. Timed (.lrc, .srt, or our transcript JSON; a .txt holding LRC or SRT times, or JSON, is
read as the file it is): Whisper does not time them (it only gives lines in another language their English:
musicvid.storyboard.make). Plain text (.txt): the words are known but not their times, which musicvid.lyrics.align
finds in the song."""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from musicvid.core.errors import UserError
from musicvid.core.files import check_file, decoded_text
from musicvid.core.paths import code_point, control_at
from musicvid.lyrics.labels import COUNT, MARK_AFTER, MARK_ALONE, NUMBER_WORDS, SECTION_NAMES, glued_label, is_label
from musicvid.lyrics.languages import language_code
from musicvid.lyrics.lrc import instrumental_notice, lrc_language, parse_lrc, starts_with_time
from musicvid.lyrics.spacing import one_line
from musicvid.lyrics.srt import check_not_subtitles, is_srt_times, read_srt, text_lines
from musicvid.lyrics.transcript import (
    TOGETHER,
    UNSEEN,
    Line,
    Transcript,
    excerpt,
    fit_to_duration,
    has_words,
    left_out_note,
    parse_transcript_json,
)
from musicvid.lyrics.written import written_language
from musicvid.settings.song import PLAIN, TIMED

log = logging.getLogger("musicvid")

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
# What a lyrics site puts among the lyrics a person copies from it, as Genius writes it: a heading first ("3
# ContributorsLighthouse Lyrics", the first section's label glued to it as spotDL embeds it), its description's
# teaser ("… Read More") before the first section, a widget between verses ("You might also like", after a
# concert's advert), a footer last ("5Embed", alone or glued to the last lyric: a count of up to 3 digits); and a
# repeat mark, any site's, alone on a line or after its words ("(x2)", "x3", "(twice)", "[Repeat]"). Nobody sings
# them (the lines they mark are sung so often: _plain_lines).
_SITE_HEADING = re.compile(r"\d+\s*Contributors?.*?Lyrics")
_SITE_TEASER = re.compile(r".*Read More")
_SITE_ADVERT = re.compile(r"See .* LiveGet tickets as low as \$\d+You might also like")
_SITE_WIDGET = "You might also like"
_SITE_FOOTER = re.compile(r"(?:(?<=\S)|^)Embed$")
_SITE_COUNT = re.compile(r"(?<!\d)\d{1,3}$")
# A JSON object opens with a brace and a quoted key; a lyric may open with a brace ("{Chorus}"), never with that.
_JSON_OPENING = re.compile(r'\s*\{\s*"')


def lyrics_kind(path: Path, text: str) -> str:
    """How lyrics file `path` is read: by its suffix, except plain text (.txt) holding times, which is the timed file
    it is (an SRT cue's times: .srt; else a line that starts with a time: .lrc), as the page reads pasted lyrics: a
    person who wrote times meant them (read as words, they would be sung and their times lost). Plain text that opens
    as a JSON object does (_JSON_OPENING) is JSON, a transcript's or a storyboard's, said to be one (not sung)."""
    suffix = path.suffix.lower()
    if suffix != PLAIN:
        return suffix
    if _JSON_OPENING.match(text):
        return ".json"
    lines = text_lines(text)
    if any(is_srt_times(line) for line in lines):
        return ".srt"
    return ".lrc" if any(starts_with_time(line) for line in lines) else PLAIN


def parse_srt(text: str, document: str) -> list[Line]:
    """The cues of an SRT file as lines (musicvid.lyrics.srt), an LRC line outside them refused as not SRT."""
    return read_srt(text, document, starts_with_time)


def _read_text(path: Path) -> str:
    """A lyrics file's text, refused (before it is parsed) where it is more than lyrics, or none."""
    check_file(path, "lyrics file")
    # (4 bytes a character at most)
    text = decoded_text(path, "lyrics file") if path.stat().st_size <= 4 * MAX_LYRICS_CHARS else None
    if text is None or len(text) > MAX_LYRICS_CHARS:
        raise UserError(f"lyrics file {path} is over {MAX_LYRICS_CHARS:,} characters: is it a song's lyrics?")
    if not text.strip():  # (as an empty file is: an LRC of blanks was taken for an instrumental's, silently)
        raise UserError(f"lyrics file {path} holds only blank lines: no lyrics")
    return text


def _check_words(document: str, lines: Iterable[tuple[str, str]]) -> None:
    """Refuse a sung line of more than MAX_LINE_WORDS words; `lines`: each line's name (after `document`) and text."""
    for where, text in lines:
        if (count := len(text.replace(TOGETHER, " ").split())) > MAX_LINE_WORDS:  # (lines of one time: joined)
            fix = "break it where the singer breathes"
            if (joined := text.count(TOGETHER) + 1) > 1:
                fix = f"its {joined:,} lines share one time: give each its own"
            raise UserError(
                f"{document}{where} has {count:,} words, more than the {MAX_LINE_WORDS:,} a line may have: {fix}"
            )


def check_kind(path: Path) -> None:
    if path.suffix.lower() not in (*TIMED, PLAIN):
        raise UserError(f"lyrics file {path} must be .lrc, .srt, .json (a transcript.json) or .txt (plain lines)")


def timed_lines(
    text: str, kind: str, duration: float, document: str, language: str | None = None
) -> tuple[list[Line], str]:
    """Timed lyrics `text`'s lines (of `kind`: lyrics_kind; as written, not fitted to the song) and language: the one
    `language` says (--language's code), else an LRC's tag, else the one the lines read as (written_language), else
    English."""
    if kind == ".lrc":
        said = language or lrc_language(text, document)
        lines = parse_lrc(text, duration, document, said)
    elif kind == ".srt":
        said, lines = language, parse_srt(text, document)
    else:
        lines, said = parse_transcript_json(text, document)
        return lines, language or language_code(said, f"{document}: its language")
    return lines, said or written_language([line.text for line in lines]) or "en"


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


def check_lyrics_file(path: Path, language: str | None = None) -> KnownLyrics:
    """Refuse, before any work, a lyrics file that is not one: its kind (by its suffix and, for plain text, its
    times: lyrics_kind), its size, a control character, its sung lines' words, and a timed file's every time, its
    lines taken as in `language` (--language's code; None: an LRC's tag says). The file as read, once: the run keeps
    it."""
    check_kind(path)
    text = _read_text(path)
    kind, document = lyrics_kind(path, text), f"lyrics file {path}"
    if (at := control_at(text)) is not None:
        raise UserError(
            f"{document} line {text.count(chr(10), 0, at) + 1} holds a control character ({code_point(text[at])}), "
            "which no lyric has"
        )
    if kind == PLAIN:
        check_not_subtitles(text, document)
        _check_words(document, ((f" line {n}", raw) for n, raw in enumerate(text_lines(text), start=1)))
        _, touched, once, count, unsung = _plain_lines(text)
        if not once:
            return _no_words(path, text, document)
        if count > max(MAX_LINES, once):  # (repeats; the lines written are counted against the song: check_line_count)
            raise UserError(
                f"{document} sings {count:,} lines once the repeats it marks are counted, more than {MAX_LINES:,}: is "
                "it one song's lyrics?"
            )
        if touched:
            log.warning(
                f"{document}: {touched} line{'s' if touched > 1 else ''} held what a lyrics site adds (its "
                "'Contributors…Lyrics' heading, 'You might also like', 'Embed', a repeat mark such as '(x2)'): left out"
            )
        if repeated := count - once:
            log.warning(
                f"{document}: {repeated} line{'s' if repeated > 1 else ''} sung again where it marks a repeat "
                "('[Chorus x2]', '(Repeat chorus)', a heading alone, '(x3)' after a line, '(x2)' under a stanza): "
                "each gets its caption"
            )
        if unsung:
            log.warning(
                f"{document}: {', '.join(dict.fromkeys(repr(name) for name in unsung))} sung again, yet no lines are "
                "written under that name before: nothing sung there (write them out, or name the section as above)"
            )
        return KnownLyrics(path, text)
    # (the song bounds an LRC's last line: read_lyrics); --language's code over an LRC's tag
    lines, language = timed_lines(text, kind, math.inf, document, language)
    # A timed line's words are counted, not its file's lines': a transcript's JSON may be written on one line.
    _check_words(document, ((f": the line at {line.start:g} s", line.text) for line in lines))
    if not lines and kind == ".json":  # a transcript of no line: the song's, where Whisper heard no words
        log.warning(f"{document} holds no line: the song has no words, and the video no lyric scene")
        return KnownLyrics(path, text, (), language)
    if text.strip() and all(is_label(line.text) or not line.text for line in lines):
        return _no_words(path, text, document)
    return KnownLyrics(path, text, tuple(lines), language)


def _no_words(path: Path, text: str, document: str) -> KnownLyrics:
    """A lyrics file none of whose lines is sung (its section names, directions, credits alone): refused, but where a
    line says the song has no words ("(Instrumental)": instrumental_notice), which makes it an instrumental's."""
    if (notice := instrumental_notice(text)) is None:
        raise UserError(f"{document} has no lines of lyrics")
    log.warning(f"{document} says the song has no words ({excerpt(notice)!r}): the video has no lyric scene")
    return KnownLyrics(path, text, ())


def _without_footer(line: str) -> str:
    """The last line without Genius's footer ("Embed", after a count of up to 3 digits: a longer run of digits is
    the lyric's)."""
    if not (footer := _SITE_FOOTER.search(line)):
        return line
    return _SITE_COUNT.sub("", line[: footer.start()]).rstrip()


# A heading says which section follows and how often it is sung: "[Chorus x2]" (the lines under it, twice), "[Verse
# 1: Name]" (who sings it is no part of its name), and a heading with no lines under it sings the lines last written
# under its name again ("[Chorus]", "Chorus:" or "(Repeat chorus)" where the chorus was written out above). A repeat
# mark after a line's words sings the line so often ("(x3)"), and alone on its line the stanza above it (to the blank
# line or heading before; sites mean that, or the line above, which the aligner then finds sung once and flags). The
# singer sings each time, so each gets its caption.
_COUNT = re.compile(COUNT, re.IGNORECASE)
_COUNT_WORDS = {"twice": 2, "bis": 2, "thrice": 3}
_COUNT_WORD = re.compile(rf"\b(?:{'|'.join(_COUNT_WORDS)})\b", re.IGNORECASE)
_REPEAT_WORD = re.compile(r"^\s*repeat\b", re.IGNORECASE)
_PLACE_WORDS = {"final", "last"}  # ("[Final Chorus]" alone sings the chorus)


def _times(mark: str, bare: int = 1) -> int:
    """How many times a repeat mark ("x3", "2 times", "twice") says to sing; `bare` for one with no count ("", or
    "(Repeat)": 2)."""
    if count := _COUNT.search(mark):
        return max(1, int(count.group(1) or count.group(2)))
    word = _COUNT_WORD.search(mark)
    return _COUNT_WORDS[word.group(0).casefold()] if word else bare


def _section(label: str) -> tuple[str, int, bool]:
    """The song's section heading `label` names (casefolded, without who sings it, its repeat mark or brackets; ""
    for a label that names none: "(Instrumental)", "[Sam]"), how many times it is sung, and whether lines follow it
    ("(Repeat chorus)" has none of its own)."""
    inner = re.split(r":|\s[-–—]\s", label.strip().strip("[]()*"))[0]
    words = re.findall(r"\w[\w'-]*", _COUNT_WORD.sub("", _REPEAT_WORD.sub("", _COUNT.sub("", inner))).casefold())
    numbers = [str(NUMBER_WORDS.get(word, word)) for word in words if word in NUMBER_WORDS or word.isdigit()]
    name = " ".join([word for word in words if word not in {*NUMBER_WORDS, *_PLACE_WORDS} and not word.isdigit()])
    name = " ".join([name, *numbers[:1]])  # ("Second Verse", "Verse Two" and "Verse 2" are one)
    if not SECTION_NAMES.match(name):
        return "", 1, True
    return name, _times(inner), not _REPEAT_WORD.match(inner)


# A section sung again and again: a heading of one with no lines under it repeats it, or has none to repeat (an
# intro's or a solo's heading alone is an instrumental part).
_REFRAINS = re.compile(r"(?:chorus|refrain|hook|coro|estribillo|ritornello|refrão|refrein)\b")


class PlainLyrics(NamedTuple):
    """Plain lyrics as read (_plain_lines)."""

    sung: list[str]  # the lines sung, repeats made (up to the `most` asked for)
    touched: int  # lines that held what a lyrics site adds (left out, or taken out of them)
    once: int  # lines written to be sung
    count: int  # lines sung, repeats counted
    unsung: list[str]  # headings that repeat a chorus, or say how often, with no lines written under their name


def _as_sung(stanzas: list[tuple[str, int, list[str]]], most: int) -> tuple[list[str], int, list[str]]:
    """The lines of `stanzas` (each its section's name, how many times it is sung, its lines) as sung: a section
    with no lines sings those last written under its name (else under its name without a number); the `most` first
    of them (repeats of repeats, "Chorus x99" after lines each "(x99)", may ask for billions), how many there are,
    and the sections meant to repeat lines (a chorus, or counted) that found none."""
    sung, written, count, unsung = [], {}, 0, []
    for name, times, lines in stanzas:
        kind = name.rstrip("0123456789 ")  # ("[Chorus 1]" written out, then "[Chorus]" or "[Chorus 2]" alone)
        if lines and name:
            written[name] = written[kind] = lines
        said = lines or written.get(name) or written.get(kind, [])
        unsung += [name] if name and not said and (times > 1 or _REFRAINS.match(name)) else []
        count += len(said) * times
        room = most - len(sung)
        sung += (said * min(times, -(-room // max(1, len(said)))))[: max(0, room)]
    return sung, count, unsung


def _unglued(row: str) -> list[str]:
    """A row of plain lyrics as rows: a section's heading glued to the first line under it ("Chorus: la la la",
    "[Chorus] la la la": glued_label) is a row of its own."""
    glued = glued_label(row)
    return list(glued) if glued and _section(glued[0])[0] else [row]


def _plain_lines(text: str) -> PlainLyrics:
    """The sung lines of plain lyrics `text`: one per line, as often as a heading or a repeat mark says (_section);
    blank lines (between stanzas), section labels, directions to the band and what a lyrics site adds (_SITE_HEADING
    and the like) are not sung; those written, and repeated up to MAX_LINES + 1 (_as_sung)."""
    rows = [row if has_words(row := one_line(UNSEEN.sub("", raw))) else "" for raw in text_lines(text)]
    rows = [part for row in rows for part in _unglued(row)]
    worded = [i for i, row in enumerate(rows) if row]
    heading = _SITE_HEADING.match(rows[worded[0]]) if worded else None
    if heading:
        rows[worded[0]] = rows[worded[0]][heading.end() :].strip()
    last = worded[-1] if worded else -1
    footed = bool(worded) and _without_footer(rows[last]) != rows[last]
    first_label = next((i for i, row in enumerate(rows) if is_label(row)), len(rows))
    stanzas, touched, once = [("", 1, [])], int(bool(heading)), 0
    for i, row in enumerate(rows):
        if MARK_ALONE.fullmatch(row):  # (the stanza above, sung so often; the stanza before, after a blank line)
            at = -1 if stanzas[-1][0] or stanzas[-1][2] or len(stanzas) == 1 else -2
            name, times, lines = stanzas[at]
            stanzas[at:] = [(name, times * _times(row, 2), lines), ("", 1, [])]
            touched += 1
            continue
        if not row or is_label(row):
            name, times, holds = _section(row) if row else ("", 1, True)
            if row or stanzas[-1][2]:  # (a blank line under a heading is not its end)
                stanzas += [(name, times, []), *([] if holds else [("", 1, [])])]
            continue
        line = _without_footer(row) if i == last else row
        bare = MARK_AFTER.sub("", line)
        furniture = _SITE_ADVERT.fullmatch(bare) or (bare == _SITE_WIDGET and (heading or footed))
        kept = has_words(bare) and not (furniture or MARK_ALONE.fullmatch(bare))
        kept = kept and not (i < first_label and _SITE_TEASER.fullmatch(bare))
        mark = line[len(bare) :]
        stanzas[-1][2].extend([bare] * _times(mark, 2 if mark else 1) if kept else [])
        touched += not kept or line != row
        once += kept
    sung, count, unsung = _as_sung(stanzas, max(MAX_LINES, once) + 1)
    return PlainLyrics(sung, touched, once, count, unsung)


def read_plain_lyrics(lyrics: KnownLyrics) -> list[str]:
    """The sung lines of plain lyrics (_plain_lines)."""
    if not (sung := _plain_lines(lyrics.text).sung):
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


def lyrics_label(lyrics: KnownLyrics) -> str:
    """What names a lyrics file in a transcript's source: a hash of what it was read as (a timed file's lines, times
    and language; plain lyrics' sung lines), so that the file renamed, moved or saved again with other line ends is
    the same lyrics, and its storyboard's edits are kept."""
    read = (lyrics.lines, lyrics.language) if lyrics.timed else _plain_lines(lyrics.text).sung
    return f"{'timed' if lyrics.timed else 'plain'} {hashlib.sha256(repr(read).encode()).hexdigest()[:12]}"


def read_lyrics(lyrics: KnownLyrics, duration: float, audio_sha256: str = "") -> Transcript:
    """Timed lyrics (their lines as written) as the transcript of a song `duration` seconds long; the lines it leaves
    out, unsaid (a run says them: fit_lyrics)."""
    lines = fit_to_duration(list(lyrics.lines), duration)
    # Counted inside the song: an LRC of the whole song fits a clip of it (the file's own bound: MAX_LYRICS_CHARS).
    check_line_count(len(lines), duration, lyrics.path)
    if not lines and lyrics.lines:  # (a file of no sung line says the song has none: _no_words)
        raise UserError(f"lyrics file {lyrics.path} has no timed lines inside the song's {duration:.1f} s")
    return Transcript(lines, lyrics.language, f"lyrics:{lyrics_label(lyrics)}", audio_sha256)


def fit_lyrics(lyrics: KnownLyrics, duration: float, audio_sha256: str) -> Transcript:
    """read_lyrics for a run's song, saying the lines it leaves out (left_out_note): a run fits them once
    (musicvid.prepare), for its storyboard and its karaoke."""
    transcript = read_lyrics(lyrics, duration, audio_sha256)
    if note := left_out_note(lyrics.lines, duration, f"lyrics file {lyrics.path}"):
        log.warning(note)
    return transcript
