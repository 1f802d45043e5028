"""The song's language as a person names it (--language, an LRC's [la:] tag, the page's choice): Whisper's code, from
its code or its name in any case ("pl", "Polish"), with a region too ("pt-BR", "en_US"), or one sentence saying
Whisper has no such language; and the names the page offers."""

from __future__ import annotations

import re
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.lyrics.transcript import excerpt

# A country's code is the usual mistake for its language's ("jp" for "ja"), as a locale's region is said with it;
# and some languages have codes Whisper does not write: Bokmål's nb (Whisper's Norwegian), ISO 639's older iw, in and
# ji, its jv for Javanese, Filipino's fil (Whisper's Tagalog).
_OTHER_CODES = {"jp": "ja", "cn": "zh", "gr": "el", "dk": "da", "ua": "uk", "cz": "cs"} | {
    "nb": "no", "iw": "he", "in": "id", "ji": "yi", "jv": "jw", "fil": "tl"
}  # fmt: skip

# Languages' own codes (ISO 639-1) that are also countries' codes, of languages Whisper did not learn: read as the
# country's language, a code would mean two languages.
_NOT_LEARNED = {"se": ("Northern Sami", "Sweden's Swedish is sv"), "kr": ("Kanuri", "Korea's Korean is ko")}


def language_code(language: str | None, named: str = "--language") -> str | None:
    """Whisper's code of `language`, given as its code or its name, in any case, a locale's region after it ("zh-CN",
    "pt_BR": the language's) and a country's code, or another code of the language, read as Whisper's (_OTHER_CODES);
    None for None; or one sentence about what is `named` (a file's field). (Whisper is imported only where a language
    other than English is named: it imports torch.)"""
    if language is None:
        return None
    name = re.split(r"[-_]", language.strip())[0].strip().lower()
    if name in ("en", "english"):  # (every storyboard's default, read by doors that import no torch)
        return "en"
    from musicvid.models.internals import whisper_languages

    if name in _NOT_LEARNED:
        unknown, country = _NOT_LEARNED[name]
        raise UserError(
            f"{named} must be one of Whisper's language codes: {name} is {unknown}'s, a language Whisper did not "
            f"learn ({country})"
        )
    code = whisper_languages().get(_OTHER_CODES.get(name, name))
    if code is None:
        raise UserError(
            f"{named} must be one of Whisper's language codes or names (e.g. en, pl, it, pt, ja, or polish), "
            f"not {excerpt(language)!r}"
        )
    return code


def check_learned(language: str | None, asr_name: str, learned: int | None) -> None:
    """Refuse a --language (Whisper's code) that is not among the first `learned` of Whisper's languages, the ones the
    model learned (large-v3 and turbo learned 100, Cantonese, yue, the last; the other multilingual sizes 99; None:
    not known yet). Without its token Whisper's prompt names no language, one it was never trained on."""
    from musicvid.models.internals import whisper_languages

    codes = list(dict.fromkeys(whisper_languages().values()))  # (its codes first, in Whisper's order)
    if language is not None and learned is not None and language not in codes[:learned]:
        raise UserError(
            f"--language {language} ({language_name(language)}) is not one of the {learned} languages {asr_name} "
            "learned: leave --language out, or use a Whisper that learned it (large-v3, turbo)"
        )


def learned_by_name(asr_name: str) -> int | None:
    """How many languages the multilingual Whisper of size `asr_name` learned: its vocabulary less 51,765 tokens and
    the one that marks it multilingual, as openai-whisper counts them (`num_languages`); None for any other name (a
    file, a folder or a hub name: known once it loads)."""
    from musicvid.models.published import whisper_dims

    dims = None if Path(asr_name).expanduser().exists() or asr_name.endswith(".en") else whisper_dims(asr_name)
    return dims and dims["n_vocab"] - 51765 - 1


def latin(text: str) -> bool:
    """Whether every letter of `text` is of the Latin script (what ViPE, an English model, reads)."""
    return all(ord(c) < 0x250 or 0x1E00 <= ord(c) <= 0x1EFF for c in text if c.isalpha())


def language_names() -> list[str]:
    """Whisper's languages by name, as its own command line offers them: every name it takes (other names too:
    Castilian, Flemish), titled, in alphabetical order."""
    from musicvid.models.internals import whisper_languages

    return sorted(name.title() for name, code in whisper_languages().items() if name != code)


def language_name(code: str) -> str:
    """The name Whisper gives the language of `code` (Whisper's code), titled: "la" is Latin."""
    from musicvid.models.internals import whisper_languages

    names = [name for name, of in whisper_languages().items() if of == code and name != code]
    return names[0].title() if names else code
