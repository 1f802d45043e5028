"""What a lyrics file holds that nobody sings: a section's name ("[Chorus]", "Verse 2:"), a repeat mark ("(x2)"), a
direction to the band ("(Instrumental)"), a credit ("作词 : …"), the notice of a song without words ("纯音乐，请欣赏");
each by the forms lyrics sites and players write them."""

from __future__ import annotations

import re

# Lyrics copied from the web name their sections: "[Chorus]", "[Verse 2: Name]". Nobody sings those.
SECTION = re.compile(r"^\[[^\]]*\]$")
# Sites also write a section's name bare on its line, numbered, named for who sings it, or marked for repeats:
# "Chorus:", "Pre-Chorus", "Verse 2", "Refrain x2", "Repeat chorus", in the song's language too ("Coro", "Couplet 1",
# "Strophe"). Nobody sings those either.
SECTION_NAMES = re.compile(
    r"(?:(?:pre|post)[- ]?)?(?:chorus|verse|bridge|hook|refrain|intro|outro|interlude|coro|estribillo|estrofa|verso"
    r"|puente|couplet|pont|strophe|ritornello|strofa|ponte|refrão|refrein|brug)",
    re.IGNORECASE,
)
# A repeat mark says how often to sing: a count ("x2", "2x", "×3", "3 times"), a word ("twice", "thrice"; "bis", as
# French, Spanish, Italian and Portuguese lyrics write it), after "repeat" or not, or "repeat" alone.
COUNT = r"(?:[x×]\s*(\d{1,2})|(\d{1,2})\s*(?:[x×]|times))(?!\w)"
_COMPACT = r"(?:[x×]\d{1,2}|\d{1,2}[x×])(?!\w)"  # "x2", "2x": a count written bare, after a line's words too
REPEAT_MARK = rf"(?:repeat\s*)?(?:{COUNT}|\b(?:twice|thrice|bis)\b)|\brepeat\b"
# Alone on its line, a mark is bracketed, or bare with a count ("x2", "Repeat 2x"): "bis" alone may be German's word.
MARK_ALONE = re.compile(rf"[(\[]\s*(?:{REPEAT_MARK})\s*[)\]]\s*:?|(?:repeat\s*{COUNT}|{_COMPACT})\s*:?", re.IGNORECASE)
# After a line's words, it is bracketed or a bare "x2".
MARK_AFTER = re.compile(rf"\s*[(\[]\s*(?:{REPEAT_MARK})\s*[)\]]$|\s+{_COMPACT}$", re.IGNORECASE)
# A section is numbered in figures or words ("Verse 2", "Verse Two"), or named by its place ("Final Chorus").
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "first": 1, "second": 2, "third": 3, "fourth": 4}
_PLACE = r"(?:(?:first|second|third|fourth|final|last)\s+)"
_NUMBER = rf"(?:\s*\d+|\s+(?:{'|'.join(NUMBER_WORDS)}))"
_SECTION_HEAD = rf"(?:repeat\s+)?{_PLACE}?{SECTION_NAMES.pattern}{_NUMBER}?\s*(?:\(?\s*(?:{REPEAT_MARK})\s*\)?)?"
_BARE_SECTION = re.compile(rf"{_SECTION_HEAD}\s*:?", re.IGNORECASE)
# ... or glued to the first line under it: "Chorus: la la la", "[Chorus] la la la".
_GLUED = re.compile(rf"(?P<label>\[[^\[\]]*\]|{_SECTION_HEAD}\s*:)\s*(?P<line>\w.*)", re.IGNORECASE)
# A line wholly in parentheses or asterisks that directs the band ("(Instrumental)", "*guitar solo*") or names a
# section ("(Repeat chorus)"): nobody sings it.
_DIRECTION = re.compile(
    rf"(?:\(\s*|\*+\s*)(?:instrumental|(?:guitar |piano )?solo|music|break|{_BARE_SECTION.pattern})(?:\s*\)|\s*\*+)",
    re.IGNORECASE,
)
# NetEase's and QQ Music's LRCs open with their credits, timed: "[00:00.000] 作词 : 周杰伦". Nobody sings them.
CREDIT = re.compile(
    r"(?:作词|作曲|编曲|制作人|词|曲|演唱|原唱|混音|母带|监制|和声|吉他|贝斯|鼓|录音"
    r"|(?:lyrics|composed|produced|written|arranged) by)\s*[:：]\s*\S.*",
    re.IGNORECASE,
)


# What a lyrics site writes for a song without words: "Instrumental", bracketed or not, a caption's "[Music]"; NetEase's
# and QQ Music's notice
# ("纯音乐，请欣赏": pure music, enjoy), in a short line of its own
INSTRUMENTAL = re.compile(
    r"[(\[*]*\s*instrumental\s*[)\]*]*\.?|[(\[*]+\s*music\s*[)\]*]+|.{0,16}(?:纯音乐|純音樂).{0,16}", re.IGNORECASE
)


def is_label(line: str) -> bool:
    """Whether a line names a section ("[Chorus]", "Chorus:"), directs the band ("(Instrumental)") or marks a repeat
    ("(x2)"): not sung."""
    bare = line.strip()
    forms = (_DIRECTION, _BARE_SECTION, MARK_ALONE, INSTRUMENTAL)
    return bool(SECTION.match(line) or any(form.fullmatch(bare) for form in forms))


def glued_label(line: str) -> tuple[str, str] | None:
    """A label glued to the first line under it ("Chorus: la la la", "[Chorus] la la la"): the label and the line;
    None where the line opens with none."""
    glued = _GLUED.fullmatch(line.strip())
    return (glued["label"], glued["line"]) if glued else None
