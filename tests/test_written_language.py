"""Where no language is given, the words say it: the known lyrics' language decides it before Whisper's guess, and the
words Whisper heard over the whole song correct a guess they contradict (musicvid.lyrics.written): Whisper base took
Muldjord's English metal songs for Latin and translated their English into nonsense for ViPE."""

import logging
from pathlib import Path

import numpy as np
import pytest

from musicvid.core.audio import SAMPLE_RATE
from musicvid.lyrics import align
from musicvid.lyrics import transcribe as transcribing
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import transcribe
from musicvid.lyrics.transcript import Line, Word
from musicvid.lyrics.written import written_language
from musicvid.models.tiny import TINY_WHISPER, random_whisper, tiny_whisper
from tests.test_language import Aligned, asr_of

NOISE = np.random.default_rng(1).normal(0, 0.1, 24 * SAMPLE_RATE).astype(np.float32)
ENGLISH = [
    "I walked the empty road until the morning came",
    "the lights of the city were fading in the rain",
    "and every word you said is burning in my head",
    "tonight we ride the thunder to the edge of the sea",
]
SPANISH = [
    "caminé por la calle vacía hasta que llegó la mañana",
    "las luces de la ciudad se apagaban bajo la lluvia",
    "y cada palabra que dijiste me quema la cabeza",
    "esta noche cabalgamos el trueno hasta el borde del mar",
]
GERMAN = [
    "ich ging die leere Straße entlang bis der Morgen kam",
    "die Lichter der Stadt verblassten langsam im Regen",
    "und jedes Wort von dir brennt noch immer in meinem Kopf",
]


def test_the_words_are_read_as_their_language_where_they_are_enough_to_say():
    assert [written_language(lines) for lines in (ENGLISH, SPANISH, GERMAN)] == ["en", "es", "de"]
    assert written_language(ENGLISH[:1]) is None  # a line may read as any language
    assert written_language(["la la la", "oh oh oh"] * 3) is None and written_language([]) is None
    # words of two scripts keep Whisper's guess (read as the larger part, the other would go untranslated)
    korean = ["너의 이름을 부르던 밤", "바다 위로 별이 떨어져", "우리는 다시 만날 거야"]
    assert written_language(korean * 3) == "ko" and written_language(korean + ENGLISH * 2) is None
    assert written_language(ENGLISH + ["размер"]) == "en"  # a stray word of another script


def heard_as(texts: list[str]):
    """openai-whisper's segments of `texts`, a line every 5 s, as recognize gives them."""

    def line(k: int, text: str) -> Line:
        words = text.split()
        step = 3.0 / len(words)
        timed = [Word(5 * k + 1 + i * step, 5 * k + 1 + (i + 1) * step, w, 0.9) for i, w in enumerate(words)]
        return Line(timed[0].start, timed[-1].end, text, words=timed)

    return [line(k, text) for k, text in enumerate(texts)]


@pytest.fixture
def guessed_latin(monkeypatch):
    """A multilingual Whisper that takes every song for Latin, hearing what a test gives it: the (task, language)
    of each recognition asked."""
    asr = asr_of(random_whisper(**{**TINY_WHISPER, "n_vocab": 51865}), "random-multilingual")
    monkeypatch.setattr(transcribing, "detect_language", lambda asr, voiced, given=None, written=None: given or "la")
    asked, heard = [], {}

    def recognized(asr, samples, task, language, show):
        asked.append((task, language))
        return heard_as(heard["texts"]) if task == "transcribe" else [Line(1, 4, "in English")]

    monkeypatch.setattr(transcribing, "recognize", recognized)
    return asr, asked, heard


def test_english_words_heard_over_a_song_taken_for_latin_are_not_translated(guessed_latin, caplog):
    asr, asked, heard = guessed_latin
    heard["texts"] = ENGLISH
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        transcript = transcribe(asr, NOISE, "song", quiet=True)
    assert transcript.language == "en" and [task for task, _ in asked] == ["transcribe"]  # no translation asked
    assert [line.english for line in transcript.lines][:1] == ["I walked the empty road until the morning came"]
    said = "Whisper took the singing for Latin, but the words it heard read as English: the song is taken as English"
    assert [r.getMessage() for r in caplog.records] == [f"{said} (--language chooses)"]


def test_spanish_words_heard_over_a_song_taken_for_latin_are_translated_from_spanish(guessed_latin):
    asr, asked, heard = guessed_latin
    heard["texts"] = SPANISH
    transcript = transcribe(asr, NOISE, "song", quiet=True)
    assert transcript.language == "es" and ("translate", "es") in asked
    # a language given is never second-guessed by the words
    asked.clear()
    assert transcribe(asr, NOISE, "song", quiet=True, language="la").language == "la"
    assert ("translate", "la") in asked


def test_known_lyrics_are_aligned_in_the_language_they_are_written_in(monkeypatch):
    asked = []

    def windows(asr, samples, language):
        asked.append(language)
        raise Aligned

    monkeypatch.setattr(align, "Windows", windows)
    multilingual = asr_of(random_whisper(**{**TINY_WHISPER, "n_vocab": 51865}), "random-multilingual")
    english_only = asr_of(tiny_whisper(), "tiny-random")
    for asr, lyrics in ((multilingual, GERMAN), (english_only, GERMAN), (multilingual, ["oh oh", "la la"])):
        with pytest.raises(Aligned):
            align_lyrics(asr, NOISE[: 3 * SAMPLE_RATE], lyrics, "song", quiet=True)
    # German as written; an English-only Whisper hears English; too few words: Whisper's guess (random weights)
    assert asked[:2] == ["de", "en"] and asked[2] not in (None, "de")


PORTUGUESE = [  # (a language the tests above do not read)
    "o vento levou as cartas que eu nunca te mandei",
    "e a cidade dorme enquanto eu espero na janela",
    "amanhã talvez o mar devolva o teu nome",
    "não há saudade que caiba nesta canção",
    "quando a noite chegar vou cantar sozinho",
]


@pytest.mark.parametrize("kind", [".lrc", ".srt"])
def test_timed_lyrics_that_name_no_language_are_taken_in_the_one_they_are_written_in(tmp_path, kind):
    from musicvid.lyrics.known import check_lyrics_file

    def timed(name: str, texts: list[str], said: str = "") -> Path:
        at = [(4.0 * n, 4.0 * n + 3.5) for n in range(len(texts))]
        if kind == ".lrc":
            body = said + "".join(f"[00:{start:05.2f}]{text}\n" for (start, _), text in zip(at, texts))
        else:
            stamp = "00:00:{:06.3f}".format
            cues = (
                f"{n}\n{stamp(a).replace('.', ',')} --> {stamp(b).replace('.', ',')}\n{text}\n"
                for n, ((a, b), text) in enumerate(zip(at, texts), 1)
            )
            body = "\n".join(cues)
        (path := tmp_path / f"{name}{kind}").write_text(body)
        return path

    assert check_lyrics_file(timed("pt", PORTUGUESE)).language == "pt"
    assert check_lyrics_file(timed("es", SPANISH)).language == "es"
    assert check_lyrics_file(timed("en", ENGLISH)).language == "en"
    assert check_lyrics_file(timed("short", ["o vento levou"])).language == "en"  # too few words to say: English
    assert check_lyrics_file(timed("given", PORTUGUESE), "es").language == "es"  # the person's word stands
    if kind == ".lrc":
        assert check_lyrics_file(timed("tagged", PORTUGUESE, "[la:it]\n")).language == "it"  # and the file's
