"""Where a line's words are written with no space between them. Chinese and Japanese (and Thai, Lao, Burmese, Khmer)
write none between words, and Whisper hears them token by token: joined with spaces, "君の名前を呼んだ" was shown
"君 の 名前 を 呼 んだ". Korean writes spaces, as Latin, Cyrillic or Arabic scripts do.

- joined(words) = w1 ␣ w2 ␣ … wn, where ␣ is a space unless both the character before it and the one after it are of
  a script that writes none (UNSPACED), or the one after is such a script's punctuation ("。", "、");
- gaps_in(text, words) = for each word, the whitespace before it in `text`, where `text` is `words` in order with
  nothing but whitespace between them (any, none too); None where it is not (a line edited since it was heard);
  spaced_in(text, words) = for each word, whether that gap is not empty.

Known lyrics are aligned and lit word by word, and a Chinese or Japanese line written without spaces is one word:
sung_words(text) parts it further, as Whisper hears it, at each character (CHARACTERS), a character's marks, small
kana, the long-vowel mark and closing punctuation ("ちょっ", "だ。") staying with the one before and an opening mark
("「愛") with the one after: aligned as one word, "天空在燃烧" started 0.8 s late; a character a word, on time.

A line keeps the spaces it was written with that are not there to part words: a no-break space (NO_BREAK: French
writes one before "?", "!", ":", ";" and inside « », as web pages paste it) joins what it stands between, and so does
tied, for a mark written apart from its word with a plain space ("Quoi ?"): one_line folds only the others.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

# Thai, Lao, Burmese, Khmer; the CJK radicals, symbols and punctuation, kana, bopomofo, CJK ideographs (and their
# extensions and compatibility forms), full- and half-width forms: scripts written without spaces between words.
UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u312f\u3190-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)
# Such a script's punctuation, which follows a word of any script with no space ("OK。").
UNSPACED_PUNCTUATION = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f]")
# The scripts sung a syllable a character: the CJK radicals, kana (and its iteration marks), CJK ideographs (and their
# extensions and compatibility forms). Thai, Lao, Burmese and Khmer write a syllable in several characters.
CHARACTERS = re.compile(
    "[\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff]"
)
_OPENING = "「『（【〔〈《〘〚〝（［｛｟‘“([{"  # marks that open what follows them
NO_BREAK = "\u00a0\u2007\u202f"  # the no-break spaces: what they stand between stays on one row, one word lit
_FOLDED = re.compile(f"[^\\S{NO_BREAK}\u3000]+")  # a run of the whitespace a line folds into one space
_PARTS = re.compile(f"[^\\S{NO_BREAK}]+")  # where a line's words part (the ideographic space parts them too)
# Marks that close (or open) what they follow (precede): written apart, alone on a row or lit alone they would mean
# nothing (French and Spanish typography, a quote's marks).
_CLOSE = re.compile("(?<=\\S) (?=[?!:;.,…»›)\\]”’]+(?!\\S))")
_OPEN = re.compile("(?:^|(?<=\\s))([«‹¿¡(\\[“‘]+) (?=\\S)")


def one_line(text: str) -> str:
    """`text` on one line: each run of whitespace one space, the no-break and ideographic spaces (U+3000) as written."""
    return _FOLDED.sub(" ", text).strip()


def words_of(text: str) -> list[str]:
    """`text`'s words: parted by whitespace, never by a no-break space."""
    return [word for word in _PARTS.split(text) if word]


def sung_words(text: str) -> list[str]:
    """`text`'s words as a known line is aligned and lit: parted by whitespace, and inside a word at each character
    of CHARACTERS (module doc)."""
    return [unit for word in text.split() for unit in units_of(word)]


def units_of(word: str) -> list[str]:
    """A word's units of sung_words: the word, or, where it holds CHARACTERS, parted at each; what a no-break space
    joins stays one."""
    units = [word[0]]
    for before, char in zip(word, word[1:]):
        if _starts_unit(before, char):
            units.append(char)
        else:
            units[-1] += char
    return units


def _starts_unit(before: str, char: str) -> bool:
    """Whether `char`, after `before` in a word, begins a unit of sung_words."""
    if before in _OPENING + NO_BREAK or char in NO_BREAK:
        return False
    if unicodedata.category(char)[0] in "MP" and char not in _OPENING:
        return False  # (a mark, or punctuation that closes what it follows)
    if CHARACTERS.match(char):
        return "SMALL" not in unicodedata.name(char, "") and char != "\u30fc"  # (small kana, the long-vowel mark)
    return bool(CHARACTERS.match(before))


def tied(text: str) -> str:
    """`text` on one line (one_line), a mark written apart from the word it closes or opens ("Quoi ?", "« Oui »",
    "¿ Qué") joined to it by a no-break space."""
    return _OPEN.sub(f"\\1{NO_BREAK[0]}", _CLOSE.sub(NO_BREAK[0], one_line(text)))


def spaced(before: str, after: str) -> bool:
    """Whether a space goes between two words (module doc)."""
    if not before or not after or UNSPACED_PUNCTUATION.match(after[0]):
        return False
    return not (UNSPACED.match(before[-1]) and UNSPACED.match(after[0]))


def joined(words: Sequence[str]) -> str:
    """The words as their line is written (module doc)."""
    return "".join((" " if n and spaced(words[n - 1], word) else "") + word for n, word in enumerate(words))


def gaps_in(text: str, words: Sequence[str]) -> list[str] | None:
    """The whitespace before each word in `text`, where `text` is the words in order (module doc); else None."""
    at, found = 0, []
    for word in words:
        rest = text[at:]
        gap = len(rest) - len(rest.lstrip())
        if not word or not rest[gap:].startswith(word):
            return None
        found.append(rest[:gap])
        at += gap + len(word)
    return found if not text[at:].strip() else None


def spaced_in(text: str, words: Sequence[str]) -> list[bool] | None:
    """Whether each word follows a space in `text`, where `text` is the words in order (module doc); else None."""
    gaps = gaps_in(text, words)
    return None if gaps is None else [bool(gap) for gap in gaps]
