"""Where a line's words are written with no space between them. Chinese and Japanese (and Thai, Lao, Burmese, Khmer)
write none between words, and Whisper hears them token by token: joined with spaces, "君の名前を呼んだ" was shown
"君 の 名前 を 呼 んだ". Korean writes spaces, as Latin, Cyrillic or Arabic scripts do.

- joined(words) = w1 ␣ w2 ␣ … wn, where ␣ is a space unless both the character before it and the one after it are of
  a script that writes none (UNSPACED), or the one after is such a script's punctuation ("。", "、");
- spaced_in(text, words) = for each word, whether a space precedes it in `text`, where `text` is `words` in order with
  nothing but spaces between them (any number, none too); None where it is not (a line edited since it was heard).
"""

from __future__ import annotations

import re
from typing import Sequence

# Thai, Lao, Burmese, Khmer; the CJK radicals, symbols and punctuation, kana, bopomofo, CJK ideographs (and their
# extensions and compatibility forms), full- and half-width forms: scripts written without spaces between words.
UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u312f\u3190-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)
# Such a script's punctuation, which follows a word of any script with no space ("OK。").
UNSPACED_PUNCTUATION = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f]")


def spaced(before: str, after: str) -> bool:
    """Whether a space goes between two words (module doc)."""
    if not before or not after or UNSPACED_PUNCTUATION.match(after[0]):
        return False
    return not (UNSPACED.match(before[-1]) and UNSPACED.match(after[0]))


def joined(words: Sequence[str]) -> str:
    """The words as their line is written (module doc)."""
    return "".join((" " if n and spaced(words[n - 1], word) else "") + word for n, word in enumerate(words))


def spaced_in(text: str, words: Sequence[str]) -> list[bool] | None:
    """Whether each word follows a space in `text`, where `text` is the words in order (module doc); else None."""
    at, found = 0, []
    for word in words:
        rest = text[at:]
        gap = len(rest) - len(rest.lstrip())
        if not word or not rest[gap:].startswith(word):
            return None
        found.append(gap > 0)
        at += gap + len(word)
    return found if not text[at:].strip() else None
