"""Which segments Whisper heard over a whole song it made up, by its own signals: what it invents over music,
and where it loops.

- What Whisper invents over music is few and recognizable: the outro phrases of the videos it learned
  from ("thank you for watching", "see you next time", a lone "You"), fragments nobody could sing, or many
  words crammed into a second or two (16 words in 1.4 s): faster than anyone sings. Such a segment goes
  wherever it is (musicvid.lyrics.belief.may_be_sung).
- Whisper may loop: say a line again, stretched over the lines sung after it. A segment saying an earlier
  one's words over more than twice their time is its loop (a refrain sung again takes about as long);
  musicvid.lyrics.transcribe hears that stretch again on its own.
"""

from __future__ import annotations

import re
import unicodedata

from musicvid.lyrics.transcript import Line

# Fast rap is 6 words a second; Whisper's inventions over music run to 10-15.
MAX_WORDS_PER_SECOND = 8.0
# The word alignment (a warping path through cross-attention) gives a word the frames its sound is in; a
# segment Whisper made up has words the path gives (next to) no time, as nothing in the audio answers
# them. A word shorter than one of Whisper's 20 ms frames was given none; a segment with at least this
# share of such words is not sung (a fast line sung under a band loses a word or two of five).
UNTIMED_WORD_SECONDS = 0.02
UNTIMED_SHARE = 2 / 3
# Whisper loops: it says a line again, word for word, where other lines are sung, and stretches it over them
# (tiny.en with flattened logits said the line before again over the song's last two lines, 18 s long). A
# refrain sung again takes about as long each time; a segment saying an earlier one's words (at least
# LOOP_WORDS of them) over more than LOOP_STRETCH times the time they took there is Whisper's loop.
LOOP_STRETCH = 2.0
LOOP_WORDS = 3
# What Whisper and the videos it learned from say over music: the ends of the videos, and the credits of the
# subtitles it learned them by, in the languages it says them in most (base's translate task over a metal intro:
# "Translated by Releska"; "Untertitel im Auftrag des ZDF", "Sous-titrage Société Radio-Canada", "Subtítulos
# realizados por la comunidad de Amara.org"); and a speaker's hesitations alone ("uh", "um"), which a flatter model
# writes over guitars, and which leave a picture nothing to show. Read in lowercase words, accents aside.
INVENTED_PHRASES = re.compile(
    r"thanks? (you )?(so much )?for watching|see you (in the )?next (time|video|one)|(please |and )?subscribe|"
    r"end of (the |this )?video|\b(subtitles?|subtitled|captions?|captioned|translated|translation|transcribed|"
    r"transcription|subbed|subs) by\b|amara org|\buntertitel(ung)? (im auftrag|von|des|der|durch)\b|"
    r"\bsous titr(age|es?)\b|\bsubtitul(os|ado|ada)( realizados)? por\b|\bsottotitoli (creati |a cura )?(da|di)|"
    r"^(thank you|thanks|you|bye|bye bye|music|applause)$|^((uh|um|er|hmm|mm)( |$))+$"
)
# The hum alone in the scripts without the Latin letters above: Japanese ん (Whisper base wrote "ん" twice over a metal
# intro it took for Japanese) and Chinese 嗯, with their lengthening marks and punctuation.
HUMS = re.compile(r"[\sんンー〜～嗯呃。、…!?！？.,]+")
# Where Whisper hears no language it writes fragments nobody could sing ("nd nd", "2 pb", "1 tbc vln": Whisper base
# over guitars). A word is sung on its syllables' vowels: a word in the Latin script holds one of these (accents aside;
# w and y are Welsh vowels). Other scripts are not judged, and an acronym ("DJ") is sung letter by letter.
LATIN_VOWELS = frozenset("aeiouywæøœ")


def invented(line: Line) -> str | None:
    """Why a segment Whisper heard is an invention over the music, by its own signals; None if it may be
    sung."""
    if said_over_music(line.text):
        return "a phrase Whisper says over music"
    if not re.search(r"[^\W\d_]", line.text):  # "1.5%", "2:30": what Whisper writes over music, no lyric
        return "no word with a letter"
    if not any(map(singable, re.findall(r"[^\W_]+", line.text))):
        return "no word with a vowel"
    words = [w for w in line.words if re.search(r"[^\W\d_]", w.text)]  # a word has a letter: "===" is none
    span = (words[-1].end - words[0].start) if words else line.end - line.start
    count = len(words) or len(re.findall(r"[a-z']+", line.text.lower()))
    if count >= 4 and count > MAX_WORDS_PER_SECOND * max(span, 0.1):
        return f"{count} words in {span:.1f} s"
    untimed = sum(w.end - w.start < UNTIMED_WORD_SECONDS for w in words)
    if count >= 2 and untimed >= UNTIMED_SHARE * count:
        return f"{untimed} of {count} words with no time in the audio"
    return None


def said_over_music(text: str) -> bool:
    """Whether `text` is a phrase Whisper says over music (INVENTED_PHRASES), read in lowercase words, accents
    aside."""
    folded = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))
    return bool(INVENTED_PHRASES.search(" ".join(re.findall(r"[a-z']+", folded))) or HUMS.fullmatch(text))


def singable(word: str) -> bool:
    """Whether a word may be sung: in the Latin script, it holds a vowel (LATIN_VOWELS) or is an acronym; in any
    other script, it may. A numeral alone has no vowel."""
    letters = [c for c in unicodedata.normalize("NFD", word) if c.isalpha()]
    latin = all(unicodedata.name(c, "").startswith("LATIN") for c in letters)
    acronym = len(letters) >= 2 and word.isupper()
    return not latin or acronym or any(c.lower() in LATIN_VOWELS for c in letters)


def said(line: Line) -> tuple[str, ...]:
    """A segment's words as they are compared: lower case, letters and apostrophes."""
    return tuple(re.findall(r"[a-z']+", line.text.lower()))


def sung_for(line: Line) -> float:
    """How long a segment's words take, from its second word's start (Whisper stretches the first one back
    over the pause before it) to its last word's end; its own times where it has fewer words."""
    return line.words[-1].end - line.words[1].start if len(line.words) > 1 else line.end - line.start


def loops(heard: list[Line]) -> list[int]:
    """Which segments are Whisper's loops: each says the words of an earlier one (LOOP_WORDS at least) over
    more than LOOP_STRETCH times the shortest time they took before."""
    shortest: dict[tuple[str, ...], float] = {}
    found = []
    for n, segment in enumerate(heard):
        words, seconds = said(segment), sung_for(segment)
        if len(words) >= LOOP_WORDS and words in shortest and seconds > LOOP_STRETCH * shortest[words]:
            found.append(n)
        else:
            shortest[words] = min(seconds, shortest.get(words, seconds))
    return found
