"""--language: Whisper's code or name of the song's language, refused before any work where Whisper knows no such
language or the ASR model hears English alone; where given, the song is heard, aligned and translated in it with no
detecting, a timed file's lines are taken as in it, and the transcript is made again when it changes."""

import dataclasses
from contextlib import nullcontext
from types import SimpleNamespace

import numpy as np
import pytest

from musicvid.batch import command as batch
from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.errors import UserError
from musicvid.lyrics import align
from musicvid.lyrics import transcribe as transcribing
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.known import check_lyrics_file
from musicvid.lyrics.languages import language_code, learned_by_name
from musicvid.lyrics.transcribe import detect_language, transcribe
from musicvid.lyrics.transcript import Line, Transcript, Word
from musicvid.models.loading import ASRModel
from musicvid.models.registry import ModelRegistry
from musicvid.models.tiny import TINY_WHISPER, random_whisper, tiny_whisper
from musicvid.prepare import prepare
from musicvid.settings.presets import PRESETS
from musicvid.settings.song import SongRequest
from musicvid.storyboard import make
from musicvid.storyboard.make import get_transcript, transcript_source
from tests.helpers import make_tone, run
from tests.test_batch_hostile2 import faked_renders, run_batch
from tests.test_reruns_hostile import FASTER, Transcribes, transcript_run
from tests.test_storyboard_edits_kept import prepared

NOISE = np.random.default_rng(0).normal(0, 0.1, 3 * SAMPLE_RATE).astype(np.float32)


class Aligned(Exception):
    """Raised where the aligner is given its language, ending the alignment there."""


def asr_of(model, name: str) -> ASRModel:
    """openai-whisper's `model` as the tiny preset loads its own: greedy, at temperature 0 alone."""
    return ASRModel("openai-whisper", name, model, (0.0,), beams=1, samples=1)


@pytest.fixture
def multilingual():
    """A random Whisper with the multilingual vocabulary, whose language detection fails the test."""
    model = random_whisper(**{**TINY_WHISPER, "n_vocab": 51865})

    def detected(*args, **kwargs):
        raise AssertionError("the language was detected although it was given")

    model.detect_language = detected
    return asr_of(model, "random-multilingual")


def test_whisper_codes_and_names_in_any_case_are_taken_as_the_code():
    assert {language_code(text) for text in ("pl", "PL", "polish", "Polish ")} == {"pl"}
    # a locale's region, and a country's code, read as an LRC's [la:] reads them: the language's
    assert [language_code(text) for text in ("zh-CN", "pt_BR", "en-us", "jp", "Mandarin")] == [
        "zh",
        "pt",
        "en",
        "ja",
        "zh",
    ]
    assert language_code("castilian") == "es" and language_code(None) is None
    # codes of a language Whisper writes another way (Bokmål's, ISO 639's older ones, Javanese's, Filipino's)
    assert [language_code(text) for text in ("nb-NO", "iw", "in", "ji", "jv", "fil")] == [
        "no",
        "he",
        "id",
        "yi",
        "jw",
        "tl",
    ]
    assert SongRequest(song="s.wav", language="Portuguese").language == "Portuguese"  # (taken as given)


def test_a_languages_own_code_is_never_read_as_a_countrys_language():
    # se and kr are Sweden's and Korea's codes, and Northern Sami's and Kanuri's: which one meant is not guessed
    for code, said in (("se", "se is Northern Sami's"), ("SE-se", "se is Northern Sami's"), ("kr", "Kanuri's")):
        with pytest.raises(UserError, match=f"{said}.*Whisper did not learn") as refused:
            language_code(code, named="storyboard s.json: its language")
        assert str(refused.value).startswith("storyboard s.json: its language must be")
    assert [language_code(text) for text in ("sv", "sv-SE", "ko-KR", "Swedish")] == ["sv", "sv", "ko", "sv"]


def test_a_language_whisper_does_not_know_is_refused_in_one_sentence_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 1)
    for flag in ("xx", "klingon", "", "klingon " * 1000):
        code, _, err = run(capsys, "storyboard", song, "--models", "tiny", "--language", flag)
        assert code == 2 and err.count("\n") == 1 and len(err) < 300, err  # (a long one quoted in part)
        assert "--language must be one of Whisper's language codes or names (e.g. en, pl, it" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["song.wav"]


def test_an_english_only_whisper_is_refused_another_language_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 1)
    for models in (
        ["--models", "tiny"],
        ["--asr-model", "base.en"],
        ["--asr", "faster-whisper", "--asr-model", "tiny.en"],
    ):
        code, _, err = run(capsys, "storyboard", song, *models, "--language", "Polish")
        assert code == 2 and err.count("\n") == 1, err
        assert "--language pl needs a Whisper that hears more than English" in err and "English alone" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["song.wav"]


def test_cantonese_is_refused_for_a_whisper_that_never_learned_it_by_its_name_or_as_it_loads(capsys, tmp_path):
    """Round 12: --language yue with a Whisper of 99 languages ran with no language token in Whisper's prompt."""
    assert [learned_by_name(n) for n in ("large-v2", "base", "large-v3", "turbo")] == [99, 99, 100, 100]
    assert learned_by_name("base.en") is learned_by_name("Systran/faster-whisper-large-v2") is None
    song = make_tone(tmp_path / "song.wav", 1)
    code, _, err = run(capsys, "storyboard", song, "--models", "tiny", "--asr-model", "large-v2", "--language", "yue")
    assert code == 2 and err.count("\n") == 1, err
    assert "--language yue (Cantonese) is not one of the 99 languages large-v2 learned: leave --language out" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["song.wav"]
    asr = asr_of(random_whisper(**{**TINY_WHISPER, "n_vocab": 51865}), "my-whisper.pt")  # (multilingual, 99)
    with pytest.raises(UserError, match=r"^--language yue \(Cantonese\) is not one of the 99 languages my-whisper"):
        detect_language(asr, NOISE, "yue")
    assert detect_language(asr, NOISE, "zh") == "zh"


def test_an_english_only_whisper_known_as_it_loads_is_refused_another_language_in_one_sentence():
    asr = asr_of(tiny_whisper(), "my-whisper.pt")  # (a file's vocabulary is known only once it loads)
    with pytest.raises(UserError, match=r"^--language it needs .* my-whisper.pt hears English alone: leave"):
        detect_language(asr, NOISE, "it")
    assert detect_language(asr, NOISE, "en") == detect_language(asr, NOISE) == "en"


def test_a_language_given_is_heard_translated_and_aligned_in_with_no_detecting(multilingual, monkeypatch):
    asked = []

    def recognized(asr, samples, task, language, show):  # (a random Whisper's hearing takes seconds)
        asked.append((task, language))
        return [Line(0.5, 1.5, "widzę światło", words=[Word(0.5, 1.0, "widzę", 0.9), Word(1.0, 1.5, "światło", 0.9)])]

    monkeypatch.setattr(transcribing, "recognize", recognized)
    assert transcribe(multilingual, NOISE, "song", quiet=True, language="pl").language == "pl"
    assert {language for _, language in asked} == {"pl"} and ("translate", "pl") in asked

    def windows(asr, samples, language):  # where the aligner's tokenizer takes the language (and the rest seconds)
        asked.append(("align", language))
        raise Aligned

    monkeypatch.setattr(align, "Windows", windows)
    with pytest.raises(Aligned):
        align_lyrics(multilingual, NOISE, ["widzę światło"], "song", quiet=True, language="pl")
    assert asked[-1] == ("align", "pl")
    with pytest.raises(AssertionError, match="detected"):  # (the detection the test refuses, where none is given)
        transcribing.hear(multilingual, NOISE, True)


def test_the_storyboard_transcribes_and_aligns_in_the_language_given(tmp_path, monkeypatch):
    asked = []

    def recorded(name):
        def made(asr, samples, *args, quiet, language):
            asked.append((name, language))
            return Transcript([], language or "en", "", "song")

        return made

    monkeypatch.setattr(make, "transcribe", recorded("transcribe"))
    monkeypatch.setattr(make, "align_lyrics", recorded("align"))
    (tmp_path / "words.txt").write_text("widzę światło\n")
    for lyrics, language in ((None, "pl"), (tmp_path / "words.txt", "it"), (None, None)):  # (as prepare resolved it)
        run_of = transcript_run(tmp_path / f"{language}.json", "float32")
        run_of.request = SimpleNamespace(separate_vocals=False, language=language, quiet=True)
        run_of.go_on = lambda: None
        run_of.registry.use = lambda role, timings: nullcontext(None)  # (whose model is never asked)
        run_of.registry.device = "cpu"
        run_of.timings = SimpleNamespace(measure=lambda *args: nullcontext())
        run_of.lyrics = lyrics and check_lyrics_file(lyrics)
        run_of.audio.samples = NOISE
        get_transcript(run_of)
    assert asked == [("transcribe", "pl"), ("align", "it"), ("transcribe", None)]


def test_the_transcript_is_made_again_when_the_language_given_changes_and_kept_when_it_does_not(tmp_path):
    path = tmp_path / "transcript.json"
    detected = transcript_source(FASTER, False, None, "float32")
    Transcript([], "hu", detected, "song").save(path)
    asked = transcript_run(path, "float32")
    assert get_transcript(asked).language == "hu"  # detected, kept
    asked.request = SimpleNamespace(separate_vocals=False, language="pl")
    with pytest.raises(Transcribes):  # a rerun with --language pl hears the song again
        get_transcript(asked)
    Transcript([], "pl", transcript_source(FASTER, False, None, "float32", "pl"), "song").save(path)
    assert get_transcript(asked).language == "pl"  # the same run again keeps it
    asked.request = SimpleNamespace(separate_vocals=False, language=None)
    with pytest.raises(Transcribes):  # and back to detecting, heard again
        get_transcript(asked)


def test_a_language_is_resolved_once_by_prepare_and_its_name_and_code_make_one_transcript(tmp_path, monkeypatch):
    song, heard, sources = make_tone(tmp_path / "song.wav", 1), [], []

    def transcribed(asr, samples, sha256, quiet, language):
        heard.append(language)
        return Transcript([], language or "en", "", sha256)

    monkeypatch.setattr(make, "transcribe", transcribed)
    registry = ModelRegistry(dataclasses.replace(PRESETS["tiny"], asr="base"), "cpu")  # (hears more than English)
    monkeypatch.setattr(registry, "use", lambda role, timings: nullcontext(None))  # (never asked: no download)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # (as if downloaded: the tests run offline)
    (tmp_path / "whisper").mkdir()
    (tmp_path / "whisper" / "base.pt").touch()
    for language in ("Polish", "pl", " POLISH", None):
        run_of = prepare(SongRequest(song=song, workdir=tmp_path / "work", quiet=True, language=language), registry)
        assert run_of.request.language == (language and "pl")
        with run_of.workdir.held(False, run_of.audio.info.sha256):
            sources.append(get_transcript(run_of).model)
    assert heard == ["pl", None]  # heard in Polish once, however named; made anew when detected
    assert sources[0] == sources[1] == sources[2] != sources[3] and sources[0].endswith(" heard as pl")


def test_a_timed_files_lines_are_taken_in_the_language_given_whatever_the_asr_model_hears(tmp_path):
    (lyrics := tmp_path / "song.lrc").write_text("[00:00.50]widzę światło\n")
    song = make_tone(tmp_path / "song.wav", 2)
    # the tiny preset's Whisper hears English alone, and does not hear a song whose lines are timed
    given = prepared(song, tmp_path / "w1", lyrics_file=lyrics, language="Polish").timed_lyrics
    read = prepared(song, tmp_path / "w2", lyrics_file=lyrics).timed_lyrics
    assert (given.language, read.language) == ("pl", "en")
    # (a storyboard made otherwise is made anew)
    assert given.model.endswith(" sung in pl") and given.model.removesuffix(" sung in pl") != read.model


def test_a_batch_csv_gives_each_row_its_language_and_refuses_a_bad_one_before_any_render(tmp_path, capsys, monkeypatch):
    rendered, languages = faked_renders(monkeypatch), []
    faked = batch.render_locally

    def render_locally(registry, jobs, finished):
        languages.extend(job.request.language for job in jobs)
        faked(registry, jobs, finished)

    monkeypatch.setattr(batch, "render_locally", render_locally)
    make_tone(tmp_path / "a.wav", 1)
    make_tone(tmp_path / "b.wav", 1)
    assert SongRequest.column("language") is SongRequest.fields()["language"]
    for cell, said in (("xx", "--language must be one of"), ("pl", "--language pl needs a Whisper that hears")):
        (tmp_path / "s.csv").write_text(f"path,language\na.wav,english\nb.wav,{cell}\n")
        code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
        assert code == 2 and err.count("\n") == 1 and "song 2 (b.wav)" in err and said in err, err
    assert rendered == []
    (tmp_path / "s.csv").write_text("path,language\na.wav,english\nb.wav,\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 0 and rendered == [1, 2] and languages == ["english", None], err


def test_a_language_beside_a_storyboard_file_is_refused_as_doing_nothing(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 1)
    code, _, err = run(capsys, "storyboard", song, "--storyboard", tmp_path / "board.json", "--language", "pl")
    assert (
        code == 2
        and err == "musicvid: --language only acts where a storyboard is made, not with --storyboard: leave it out\n"
    )
