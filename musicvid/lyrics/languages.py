"""The song's language as a person names it (--language, an LRC's [la:] tag, the page's choice): Whisper's code, from
its code or its name in any case ("pl", "Polish"), or one sentence saying Whisper has no such language; and the
names the page offers."""

from __future__ import annotations

from musicvid.core.errors import UserError


def language_code(language: str | None) -> str | None:
    """Whisper's code of `language`, given as its code or its name, in any case; None for None. (Whisper is imported
    only where a language is named: it imports torch.)"""
    if language is None:
        return None
    from musicvid.models.internals import whisper_languages

    code = whisper_languages().get(language.strip().lower())
    if code is None:
        raise UserError(
            f"--language must be one of Whisper's language codes or names (e.g. en, pl, it, pt, ja, or polish), "
            f"not {language!r}"
        )
    return code


def language_names() -> list[str]:
    """Whisper's languages by name, as its own command line offers them: every name it takes (other names too:
    Castilian, Flemish), titled, in alphabetical order."""
    from musicvid.models.internals import whisper_languages

    return sorted(name.title() for name, code in whisper_languages().items() if name != code)
