"""LRC lyrics (.lrc, or a .txt whose lines start with times): each sung line its time or times, enhanced LRC's times
of what is sung inside it, and the tags alone on a line that say how far the times are off and in which language the
lines are. Read whole, or refused by the line that cannot be read so (docs/lyrics.md, "Lyrics you have")."""

from __future__ import annotations

import itertools
import logging
import math
import re
import statistics
import unicodedata

from musicvid.core.audio import MAX_SONG_SECONDS
from musicvid.core.errors import UserError
from musicvid.core.files import file_number
from musicvid.lyrics.labels import CREDIT, INSTRUMENTAL, is_label
from musicvid.lyrics.languages import language_code, latin
from musicvid.lyrics.spacing import one_line, spaced
from musicvid.lyrics.srt import clock_seconds, text_lines
from musicvid.lyrics.transcript import TOGETHER, Line, Word, excerpt, has_words

log = logging.getLogger("musicvid")

# An LRC line has only a start. It ends at the next line, or earlier, after about as long as it takes
# to sing it, so that an instrumental gap after it still becomes a break.
LRC_SECONDS_PER_WORD = 0.4
# Chinese and Japanese are written without spaces and sung a character (a syllable, or kana's mora) at a time, as
# are Hangul's syllable blocks: 0.25 s each, an English word's 0.4 s over its 1.5 syllables or so sung (Mandarin pop
# sings 4-5 syllables a second). Thai, Lao, Khmer and Burmese write a syllable with about two letters (their vowel
# and tone marks aside): half a syllable each.
LRC_SECONDS_PER_SYLLABLE = 0.25
_SYLLABLE_LETTERS = ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF))
_SYLLABLE_LETTERS += ((0xF900, 0xFAFF), (0xFF66, 0xFF9D), (0x20000, 0x3134F))
_HALF_SYLLABLE_LETTERS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))
LRC_MAX_LINE_SECONDS = 8.0


def _syllables(text: str) -> float:
    """The syllables sung in `text`'s letters of the scripts sung a letter or two a syllable (none in a spaced
    script's)."""
    count = 0.0
    for letter in (c for c in text if unicodedata.category(c).startswith("L")):
        code = ord(letter)
        if any(low <= code <= high for low, high in _SYLLABLE_LETTERS):
            count += 1.0
        elif any(low <= code <= high for low, high in _HALF_SYLLABLE_LETTERS):
            count += 0.5
    return count


def sung_seconds(text: str) -> float:
    """About how long a line takes to sing: a second, and 0.4 s a word of a spaced script (a Latin line's guess is
    that alone) or 0.25 s a syllable of one written a syllable a character."""
    words = sum(1 for word in text.split() if not _syllables(word))
    syllables = _syllables(text)
    return min(LRC_MAX_LINE_SECONDS, 1.0 + LRC_SECONDS_PER_WORD * words + LRC_SECONDS_PER_SYLLABLE * syllables)


# LRC as its writers write it. A sung line starts with one or more times: [mm:ss.xx], [mm:ss,xx], [mm:ss],
# [mm:ss.xxx], [hh:mm:ss.xx], or [mm:ss:xx] (older writers' mark before the fraction); enhanced LRC times what is
# sung in it too (<mm:ss.xx>: a word, or a syllable inside one). A tag alone on a line says who and what ([ar:],
# [ti:], [al:], [by:], [length:], [la:], [offset:±ms]) or names a section ([Chorus], timed or not): nothing sung. A
# tag that begins like a time and is none, or a negative one, is refused by its line: read as something else, its
# line would be lost.
# (A CJK input method types the brackets, colon and point full-width: 「［00：02．00］」 is a time as written.)
_TAG = re.compile(r"[\[［]([^\[\]［］]*)[\]］]")
_WORD_TAG = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_TIMELIKE = re.compile(r"\s*[-+]?\s*\d+\s*[:：].*")  # what begins like a time is read as one, or refused
_TIME = re.compile(r"(\d+)[:：](\d+)(?:[.,:．，：](\d+))?|(\d+)[:：](\d+)[:：](\d+)[.,．，](\d+)")
_CLOCK = re.compile(r"(\d+)[:：](\d+)[:：](\d+)")  # [mm:ss:xx], or (where its lines would come too fast) [hh:mm:ss]
_META = re.compile(r"\s*([A-Za-z#][\w ]*?)\s*:(.*)", re.DOTALL)
# Walaoke LRC names who sings a line (M: a man, F: a woman, D: both) before its words: not sung.
_SINGER = re.compile(r"^((?:<[^<>]*>\s*)?)[MFD]:\s*")
# The language tag's names (its value read as --language is: language_code)
_LANGUAGE_TAGS = ("la", "lang", "language")
# An offset nudges the lyrics by milliseconds or seconds; one past the longest song taken moves every line off it.
MAX_OFFSET_MS = MAX_SONG_SECONDS * 1000


def starts_with_time(line: str) -> bool:
    """Whether a line of text begins like a timed LRC line ("[01:23.45] words"; a malformed time too, which the LRC
    reader then refuses)."""
    tag = _TAG.match(line.strip())
    return bool(tag and _TIMELIKE.fullmatch(tag.group(1)))


def _tag_seconds(tag: str, where: str, hours: bool = False) -> float:
    """The time a tag (brackets and all) says, or one sentence saying it is none an LRC writer writes; `hours`: a
    tag of three numbers is [hh:mm:ss], not [mm:ss:xx]."""
    inside = tag[1:-1].strip()
    if inside.startswith("-"):
        raise UserError(f"{where}: {tag} is a time before the song starts")
    if hours and (clock := _CLOCK.fullmatch(inside)):
        return clock_seconds(*clock.groups(), None, where)
    match = _TIME.fullmatch(inside)
    if not match:
        raise UserError(f"{where}: {tag} is no time an LRC line is read by ([mm:ss.xx], [mm:ss] or [hh:mm:ss.xx])")
    minutes, seconds, fraction, *hours_on = match.groups()
    return clock_seconds(*(hours_on if hours_on[0] is not None else ("0", minutes, seconds, fraction)), where)


# A sung word's own time in enhanced LRC: (start, end; None where the line's end ends it, text)
WordTime = tuple[float, float | None, str]


def _shared(start: float, end: float | None, words: list[str]) -> list[WordTime]:
    """`words` sung from `start` to `end`, sharing the time by their letters; None: the line's end ends them."""
    if end is None:
        return [(start, None, word) for word in words]
    letters = [0, *itertools.accumulate(len(word) + 1 for word in words)]
    edges = [start + (end - start) * n / letters[-1] for n in letters]
    return list(zip(edges, edges[1:], words))


def _sung(text: str, where: str, start: float | None) -> tuple[str, tuple[WordTime, ...]]:
    """A timed line's words, as written (enhanced LRC's tags taken out, no space put in), and their own times where
    enhanced LRC times what is sung: from the time before a word's first piece (<mm:ss.xx>, or [mm:ss.xx] inside the
    line; a syllable where the tag stands inside a word, but between two characters of a script written without
    spaces: each its own word; words before the first tag from the line's `start`, where it has one) to the one after
    its last; the words between two times share them by their letters. Else no times (and where the first tag after
    words is before the line's time: a writer's placeholder, <00:00.00>). Refused: a time before the one before it."""
    pieces: list[tuple[float | None, str]] = []  # each stretch of text and the time before it
    before, last, written = start, 0, ""
    for tag in _WORD_TAG.finditer(text):
        if _TIMELIKE.fullmatch(tag.group(0)[1:-1]):  # (else a word in brackets: sung)
            pieces.append((before, text[last : tag.start()]))
            if (seconds := _tag_seconds(tag.group(0), where)) < (before or 0.0) and written:
                raise UserError(f"{where}: its word time {tag.group(0)} is before the one before it ({written})")
            before, last, written = seconds, tag.end(), tag.group(0)
    pieces.append((before, text[last:]))
    sung = one_line("".join(chunk for _, chunk in pieces))
    placeholder = pieces[0][1].split() and len(pieces) > 1 and pieces[1][0] < (start or 0.0)  # (<00:00.00> mid-line)
    if len(pieces) == 1 or placeholder or any(time is None for time, chunk in pieces if chunk.split()):
        return sung, ()
    times: list[WordTime] = []
    inside = False  # whether the text so far ends inside a word, which the next piece may go on
    for (start, chunk), (end, _) in zip(pieces, [*pieces[1:], (None, "")]):
        if chunk.split():
            shared = _shared(start, end if end is not None and end > start else None, chunk.split())
            if inside and not chunk[0].isspace() and spaced(times[-1][2], chunk):  # (a syllable; else a character)
                (first, _, word), (_, until, more) = times.pop(), shared.pop(0)
                times.append((first, until, word + more))
            times.extend(shared)
        if chunk:
            inside = not chunk[-1].isspace()
    return sung, tuple(times)


def _offset(tag: str, offset: float | None, where: str) -> float | None:
    """The offset (s) a tag alone on a line sets, else `offset` as it was (an empty one, as templates write it: none)."""
    meta = _META.fullmatch(tag)
    if not meta or meta.group(1).lower() != "offset" or not (value := meta.group(2).strip()):
        return offset
    if offset is not None:
        raise UserError(f"{where}: a second [offset:] tag: which one holds?")
    sign, number = re.fullmatch(r"([+-]?)\s*(.*)", value, re.DOTALL).groups()  # ("+ 500", as some editors write it)
    if not number or number[0] in "+-":  # (a sign alone, or two: said as written)
        raise UserError(f"{where} [offset:] (ms): {value!r} is not a number")
    return file_number(sign.replace("+", "") + number, f"{where} [offset:] (ms)", -MAX_OFFSET_MS, MAX_OFFSET_MS) / 1e3


def lrc_language(text: str, document: str = "the lyrics") -> str | None:
    """The language an LRC's tag ([la:], [lang:] or [language:]) says its lines are in, as Whisper's code
    (language_code: with a region, or a country's code: zh-CN, jp); None where it says none (a tag holding no
    language Whisper knows is said in a line, and says none)."""
    for number, raw in enumerate(text_lines(text), start=1):
        tag = _TAG.fullmatch(raw.strip())
        meta = tag and _META.fullmatch(tag.group(1))
        if not meta or meta.group(1).lower() not in _LANGUAGE_TAGS or not (value := meta.group(2).strip()):
            continue
        try:
            return language_code(value)
        except UserError:
            log.warning(
                f"{document} line {number}: [{excerpt(tag.group(1))}] names no language Whisper knows (its code or "
                "name: [la:es] or [la:spanish]): read as saying none"
            )
    return None


def instrumental_notice(text: str) -> str | None:
    """The line of lyrics `text` (its times aside) that says the song has no words ("(Instrumental)", "纯音乐，请欣赏");
    None where none does."""
    for raw in text_lines(text):
        rest = raw.strip()
        while (tag := _TAG.match(rest)) and _TIMELIKE.fullmatch(tag.group(1)):
            rest = rest[tag.end() :].strip()
        if INSTRUMENTAL.fullmatch(rest) and not re.fullmatch(r"[\[［][^:：]*[:：].*", rest):  # ("[ti:纯音乐]": a tag)
            return rest
    return None


def lrc_stamps(
    text: str, document: str = "the lyrics", hours: bool = False
) -> list[tuple[float, str, tuple[WordTime, ...]]]:
    """The times of LRC `text`, each with its line's words ("": an end marker, where the line before ends: nothing,
    no letters, a section's name or a direction to the band: is_label; "" too: a credit before the first sung line,
    said in a warning) and their own times (a line sung once: _sung), in the order written, the offset applied; or
    one sentence naming a line that cannot be read so: a time no writer writes, sung words without a time among
    timed lines, word times that run backwards or start before their line's, a line the offset moves before the
    song starts."""
    offset: float | None = None
    stamped: list[tuple[float, tuple[str, tuple[WordTime, ...]], int]] = []
    untimed: list[tuple[int, str]] = []
    credits: list[str] = []
    for number, raw in enumerate(text_lines(text), start=1):
        where, rest, times = f"{document} line {number}", raw.strip(), []
        while (tag := _TAG.match(rest)) and _TIMELIKE.fullmatch(tag.group(1)):
            times.append(_tag_seconds(tag.group(0), where, hours))
            rest = rest[tag.end() :].lstrip()
        if times:
            sung, words = _sung(_SINGER.sub(r"\1", rest, count=1), where, times[0] if len(times) == 1 else None)
            credit = CREDIT.fullmatch(sung) and not any(before for _, (before, _), _ in stamped)
            credits += [sung] if credit else []
            sung, words = (sung, words) if has_words(sung) and not (is_label(sung) or credit) else ("", ())
            if words and len(times) == 1 and words[0][0] < times[0] - SAME_TIME_SECONDS:
                raise UserError(f"{where}: its first word's time is before the line's ({excerpt(raw.strip())})")
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
    if credits:
        log.warning(
            f"{document}: {len(credits)} credit line{'s' if len(credits) > 1 else ''} ({excerpt(credits[0])!r}) "
            "before the first sung line not sung"
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


# English's commonest words, none of them also a common word of romaji, pinyin, Spanish, Italian, Portuguese or
# French ("no", "a", "to", "me", "do", "de" are): a line of which enough are these reads as English.
_ENGLISH = frozenset(
    "the i you he she we they it my your our their his her him us them is are was were be been in on of and with "
    "for from at by into love never will can not all this that what when where there here just like know want "
    "heart night feel have has had let get up down out only now ever forever tonight time way would could should "
    "but or if more day light world i'm you're it's don't can't won't".split()
)
ENGLISH_SHARE = 0.3
# Sung lines start this far apart at least, on median (a rapper's 8 syllables a second make a line of a second): a
# file whose times put them closer is read another way where one fits ([hh:mm:ss] for [mm:ss:xx])
CLOSEST_LINES_SECONDS = 0.3
# Lines this close to a line's time are at its time: bilingual LRCs merged from two sources round it apart.
SAME_TIME_SECONDS = 0.05
# An end marker holds its line at most this long, or twice the time its words take: an empty stamp at the song's
# end or the next section's start is no held note.
MAX_HELD_SECONDS = 12.0


def reads_as_english(text: str) -> bool:
    """Whether at least ENGLISH_SHARE of a line's words (lowercased, punctuation left out) are common English
    words."""
    words = ["".join(c for c in word if c.isalpha() or c == "'").strip("'") for word in text.lower().split()]
    words = [word for word in words if word]
    return bool(words) and sum(word in _ENGLISH for word in words) >= ENGLISH_SHARE * len(words)


# The sounds a backing vocal or an ad-lib sings, in any language's lyrics: "ooh", "yeah", "la la", "na na", "whoa"
_VOCABLE = re.compile(r"o+h*|a+h*|ye+a*h*|y[ae]+|la+|na+|he+y|w(?:h)?o+a*h*|u+h+|m+|h+m+|huh|woo+|ha+|da+|doo+|sha+")


def is_backing(text: str) -> bool:
    """Whether a line is a backing vocal or an ad-lib, sung with the line at its time, not a translation of it:
    written wholly in parentheses, in Latin letters ("(Ooh, I want you)"; a Chinese "(我爱你)" translates), or its
    words the sounds nobody translates (_VOCABLE)."""
    bare = text.strip()
    words = ["".join(c for c in word if c.isalpha()) for word in bare.lower().split()]
    if bare.startswith("(") and bare.endswith(")") and latin(bare):
        return True
    return any(words) and all(_VOCABLE.fullmatch(word) for word in words if word)


Own = tuple[WordTime, ...]


def _at_one_time(at: list[tuple[str, Own]], language: str | None) -> tuple[str, Own, str | None, int, int]:
    """The line sung at one time, its words' own times, its English, and how many of its lines were taken as a
    translation and joined. Where a line reads as English and another does not: where the song is said to be in
    English (`language`, the file's or the person's; None: not said), the others are its translation, not sung;
    where it is said to be in another, or a line is not in Latin letters, the English is the others' translation;
    else (a duet) every line is sung, joined with " / " (a joined line's own word times are dropped). A
    romanization is joined, never English; so is a backing vocal (is_backing), never a translation."""
    own_of = dict(reversed(at))  # each distinct line and its first writing's times
    distinct = list(dict.fromkeys(sung for sung, _ in at))
    english = [line for line in distinct if reads_as_english(line)]
    foreign = [line for line in distinct if line not in english and not is_backing(line)]
    if language == "en" and english and foreign:  # (an English song's lines beside their translation)
        kept = [line for line in distinct if line not in foreign]
        return TOGETHER.join(kept), own_of[kept[0]] if len(kept) == 1 else (), None, len(foreign), len(kept) - 1
    translated = english and foreign and (language not in ("en", None) or not all(map(latin, distinct)))
    sung = [line for line in distinct if line not in english] if translated else distinct
    own = own_of[sung[0]] if len(sung) == 1 else ()
    if not translated:
        return TOGETHER.join(sung), own, None, 0, len(sung) - 1
    return TOGETHER.join(sung), own, TOGETHER.join(english), len(english), len(sung) - 1


def _times(text: str, document: str, hours: bool = False) -> list[tuple[float, list[tuple[str, Own]]]]:
    """Each time of LRC `text` (lrc_stamps), lines within SAME_TIME_SECONDS of its first at it, with its lines'
    words (none: an end marker)."""
    times: list[tuple[float, list[tuple[str, Own]]]] = []
    for time, sung, own in sorted(lrc_stamps(text, document, hours), key=lambda item: item[0]):
        if not times or time - times[-1][0] > SAME_TIME_SECONDS:
            times.append((time, []))
        times[-1][1].extend([(sung, own)] if sung else [])
    return times


def parse_lrc(text: str, duration: float, document: str = "the lyrics", language: str | None = None) -> list[Line]:
    """LRC's sung lines: each ends at the end marker after it (lrc_stamps) where the file has one, held up to
    MAX_HELD_SECONDS or twice its words' time (else their time ends it), or with its last word's own end (enhanced
    LRC's, which karaoke then follows: musicvid.delivery.cue_times.word_times), else where the next starts or after
    the time its words take. Lines at one time (within SAME_TIME_SECONDS) are one line: _at_one_time, by the file's
    `language` (None: not said). Said in one warning; and so are lines whose word times run past their end (their own
    dropped)."""
    times = _times(text, document)
    if _CLOCK.search(text) and (apart := _apart(times)) < CLOSEST_LINES_SECONDS:
        clock = _times(text, document, hours=True)
        if _apart(clock) >= CLOSEST_LINES_SECONDS and clock[-1][0] < duration:
            log.warning(
                f"{document}: its times of three numbers are read as [hh:mm:ss]: as [mm:ss:xx] (hundredths), "
                f"its lines came {apart:.2f} s apart"
            )
            times = clock
    lines, taken, joined, again, cut = [], 0, 0, 0, 0
    for i, (start, at) in enumerate(times):
        if not at:
            continue
        sung, own, english, english_count, joined_count = _at_one_time(at, language)
        taken, joined, again = taken + english_count, joined + joined_count, again + len(at) - len(dict(at))
        following, sung_next = times[i + 1] if i + 1 < len(times) else (duration, [(sung, own)])
        guess = max(start + sung_seconds(sung), own[-1][0] if own else start)
        if own and own[-1][1] is not None:  # the file's own end of its last word
            end = min(following, own[-1][1])
        elif not sung_next:  # an end marker
            end = following if following <= start + max(MAX_HELD_SECONDS, 2 * (guess - start)) else guess
        else:
            end = min(following, guess)
        words = _ended(own, end)
        cut += len(words) != len(own)
        lines.append(Line(start, end, sung, english, words=words if len(words) == len(own) else []))
    if cut:
        log.warning(
            f"{document}: {cut} line{'s' if cut > 1 else ''} with word times past the line's end (the next line's "
            "time, or the song's end): karaoke shares the line's time by letters"
        )
    if said := _one_time_note(taken, joined, again):
        log.warning(f"{document}: {said}")
    return lines


def _apart(times: list[tuple[float, list[tuple[str, Own]]]]) -> float:
    """How far apart the sung lines of `times` start, on median (inf: fewer than three)."""
    starts = [time for time, at in times if at]
    return statistics.median(b - a for a, b in zip(starts, starts[1:])) if len(starts) > 2 else math.inf


def _one_time_note(taken: int, joined: int, again: int) -> str:
    """What was made of lines at the time of another: taken as its English, joined to it, or the same again."""
    notes = [
        f"{taken} line{'s' if taken > 1 else ''} at the time of another taken as its translation (ViPE reads the "
        "English)",
        f"{joined} line{'s' if joined > 1 else ''} at the time of another sung with it (one caption, ' / ' between)",
        f"{again} line{'s' if again > 1 else ''} the same as another at its time: one line",
    ]
    return "; ".join(note for note, count in zip(notes, (taken, joined, again)) if count)


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
