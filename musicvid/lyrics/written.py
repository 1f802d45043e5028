"""The language a song's words are written in, read from the words themselves, as Whisper's code: where no language
is given, what the known lyrics are written in decides it before Whisper's guess, and what Whisper heard over the
whole song corrects its guess.

Whisper guesses a song's language from 30 s of its audio, and a small Whisper over a band guesses badly: Whisper
base took two or three of Muldjord's four English metal songs for Latin (by how it was loaded), and its translate task
turned the English words it heard there into nonsense for ViPE ("Zerador-Lenni missing"). The words themselves say
more: py3langid (a naive Bayes classifier of byte n-grams, over the languages it and Whisper share) reads the words
Whisper base heard in each of those songs as English, and in each of the five JamendoLyrics songs as the song's
language (French, Spanish, German), as it reads their lyrics, at 0.997 or more. A line or two may read as any
language (one line in three of those lyrics read as another), so:

- the words are read only where they hold at least MIN_LETTERS letters (about 15 words of English), and in one
  script: the Latin, or others alone (a Japanese line's kana and kanji), each allowing ONE_SCRIPT of the letters to
  the other (a stray word). A song written in both (K-pop's English refrain) would read as its larger part, and
  the other lines would go untranslated: Whisper's guess stands there;
- the language read is taken only where py3langid's probability for it, normalised over the shared languages, is
  at least SURE.
"""

from __future__ import annotations

import functools
from typing import Sequence

from musicvid.lyrics.languages import latin

MIN_LETTERS = 80
ONE_SCRIPT = 0.95
SURE = 0.99


@functools.cache
def _identifier():
    """py3langid's model with normalised probabilities, as its README loads it, narrowed once to Whisper's languages
    (never changed after: threads share it)."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    from musicvid.models.internals import whisper_languages

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(set(identifier.nb_classes) & set(whisper_languages().values())))
    return identifier


def written_language(texts: Sequence[str]) -> str | None:
    """Whisper's code of the language `texts` are written in (module doc), or None where they are too few to say
    or the reading is unsure."""
    text = " ".join(texts)
    letters = [c for c in text if c.isalpha()]
    if len(letters) < MIN_LETTERS:
        return None
    in_latin = sum(map(latin, letters)) / len(letters)
    if ONE_SCRIPT > in_latin > 1 - ONE_SCRIPT:
        return None
    language, probability = _identifier().classify(text)
    return str(language) if probability >= SURE else None
