"""Known lyrics (plain lines Whisper times) in another language are given the English Whisper hears over each line,
as recognized ones are: ViPE reads English (the scene's `text_en`). They were read to ViPE as written."""

import logging
from contextlib import nullcontext
from dataclasses import replace

import pytest

from musicvid.lyrics import transcribe
from musicvid.lyrics.transcript import Line, Transcript
from musicvid.settings.presets import TINY
from musicvid.storyboard import make
from tests.helpers import make_tone
from tests.test_storyboard_edits_kept import prepared

SUNG = [Line(0.5, 1.5, "mon cœur est un phare"), Line(2.0, 3.5, "ta voix est une rivière")]
HEARD_IN_ENGLISH = [Line(0.4, 1.6, "my heart is a lighthouse"), Line(1.9, 3.6, "your voice is a river")]
AS_WRITTEN = (
    "ViPE reads them as written (a Whisper that hears more, as the default models' large-v2, gives them their English)"
)


def test_known_lines_in_french_are_given_their_english_and_a_transcript_without_it_is_made_again(tmp_path, monkeypatch):
    song = make_tone(tmp_path / "song.wav", 4.0)
    (tmp_path / "song.txt").write_text("\n".join(line.text for line in SUNG) + "\n")
    aligned, tasks = [], []

    def align_lyrics(asr, samples, texts, sha256, quiet, language):
        aligned.append(texts)
        return Transcript(list(SUNG), "fr", "aligned", sha256)

    def recognize(asr, samples, task, language, show):
        tasks.append((task, language))
        return list(HEARD_IN_ENGLISH)

    monkeypatch.setattr(make, "align_lyrics", align_lyrics)
    monkeypatch.setattr(transcribe, "recognize", recognize)
    run = prepared(song, tmp_path / "wd", lyrics_file=tmp_path / "song.txt")
    with run.workdir.held():
        made = make.get_transcript(run)
    assert [line.text_en for line in made.lines] == [line.text for line in HEARD_IN_ENGLISH]
    assert [line.text for line in made.lines] == [line.text for line in SUNG] and tasks == [("translate", "fr")]
    with run.workdir.held():
        assert make.get_transcript(run) == made and len(aligned) == 1  # kept
    # as a work directory made before known lines were given their English keeps them: aligned again
    replace(made, lines=list(SUNG)).save(run.workdir.transcript)
    with run.workdir.held():
        assert make.get_transcript(run) == made and len(aligned) == 2
    # English lines are left as they are: nothing is translated
    monkeypatch.setattr(make, "align_lyrics", lambda *a, **k: Transcript(list(HEARD_IN_ENGLISH), "en", "aligned"))
    run.workdir.transcript.unlink()
    with run.workdir.held():
        assert [line.text_en for line in make.get_transcript(run).lines] == [None, None] and len(tasks) == 2


@pytest.mark.ci  # (the real Whisper base over a sung French passage: about a minute on 2 cores)
def test_a_sung_french_passage_known_is_given_english_by_the_real_whisper_base(tmp_path):
    """JamendoLyrics' "Le royaume des glous glous" (French metal), its first 45 s and the lines sung in them."""
    from musicvid.core.audio import SAMPLE_RATE, decode
    from musicvid.lyrics.align import align_lyrics
    from tests.fixtures.jamendo import shared_song
    from tests.fixtures.whisper_ct2 import load_whisper_base

    song = shared_song("Le_royaume")
    samples = decode(song.path)[: 45 * SAMPLE_RATE]
    texts = [text for start, text in zip((start for start, _ in song.lines), song.texts) if start < 40.0]
    asr = load_whisper_base("faster-whisper", tmp_path)
    aligned = align_lyrics(asr, samples, texts, "", quiet=True)
    lines = transcribe.translated(asr, samples, aligned.lines, aligned.language, quiet=True)
    english = " ".join(line.text_en or "" for line in lines).lower().split()
    assert aligned.language == "fr" and [line.text for line in lines] == texts
    assert sum(bool(line.text_en) for line in lines) >= len(lines) / 2, lines
    assert len({"the", "a", "of", "is", "and", "in", "it", "you", "he", "they", "not"} & set(english)) >= 3, english


def said_of_timed(tmp_path, caplog, lyric: str, language: str) -> list[str]:
    """What is said of an LRC of one `lyric` made into a transcript with --language `language`, then with none."""
    song = make_tone(tmp_path / "song.wav", 4.0)
    (tmp_path / "song.lrc").write_text(f"[00:00.50]{lyric}\n")
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        for given in (language, None):
            run = prepared(song, tmp_path / f"wd-{given}", lyrics_file=tmp_path / "song.lrc", language=given)
            assert make.get_transcript(run).lines[0].text == lyric
    return [r.getMessage() for r in caplog.records if "ViPE reads" in r.getMessage()]


def test_timed_lines_in_another_language_without_their_english_are_said_to_reach_vipe_as_written(tmp_path, caplog):
    assert said_of_timed(tmp_path, caplog, "mon cœur est un phare", "fr") == [
        f"lyrics file {tmp_path / 'song.lrc'}: its lines are in French, with no English beside them, and the ASR model "
        f"{TINY} hears English alone: {AS_WRITTEN}"
    ], caplog.text  # (English, as a file that names no language is read: nothing said)


def test_timed_lines_with_no_latin_letter_and_no_language_named_are_said_to_reach_vipe_as_english(tmp_path, caplog):
    assert said_of_timed(tmp_path, caplog, "我的心是一座灯塔", "zh") == [
        f"lyrics file {tmp_path / 'song.lrc'}: its lines are in Chinese, with no English beside them, and the ASR model "
        f"{TINY} hears English alone: {AS_WRITTEN}",
        f"lyrics file {tmp_path / 'song.lrc'} names no language ([la:xx] in an LRC, or --language) and has no Latin "
        "letter: ViPE reads its lines as English",
    ], caplog.text


def test_timed_lines_in_french_are_given_the_english_a_multilingual_whisper_hears_and_kept(
    tmp_path, monkeypatch, caplog
):
    song = make_tone(tmp_path / "song.wav", 4.0)
    (tmp_path / "song.lrc").write_text("[la:fr]\n" + "".join(f"[00:0{line.start:.2f}]{line.text}\n" for line in SUNG))
    tasks = []

    def recognize(asr, samples, task, language, show):
        tasks.append((task, language))
        return list(HEARD_IN_ENGLISH)

    monkeypatch.setattr(transcribe, "recognize", recognize)
    monkeypatch.setattr(make, "multilingual", lambda asr: True)
    run = prepared(song, tmp_path / "wd", lyrics_file=tmp_path / "song.lrc")
    # (the tiny preset's Whisper hears English alone: one that, by its name, hears more)
    run.registry.models = replace(run.registry.models, asr="large-v2")
    monkeypatch.setattr(run.registry, "use", lambda role, timings: nullcontext(None))
    with caplog.at_level(logging.WARNING, logger="musicvid"), run.workdir.held():  # (HF_HUB_OFFLINE: not here)
        assert make.get_transcript(run) == run.timed_lyrics and not tasks
    assert "and large-v2 is not downloaded, and HF_HUB_OFFLINE keeps this run from downloading it: ViPE" in caplog.text
    monkeypatch.setattr(make, "refuse_offline", lambda backend, name: None)  # (downloaded)
    with run.workdir.held():
        made = make.get_transcript(run)
    assert [(line.text, line.text_en) for line in made.lines] == [
        (sung.text, heard.text) for sung, heard in zip(SUNG, HEARD_IN_ENGLISH)
    ]
    assert made.language == "fr" and made.model.startswith("translated:") and tasks == [("translate", "fr")]
    assert [line.start for line in made.lines] == [line.start for line in run.timed_lyrics.lines]  # the file's times
    with run.workdir.held():
        assert make.get_transcript(run) == made and len(tasks) == 1  # kept in the work directory


@pytest.mark.ci  # (the real Whisper base translating 45 s of a sung French song: about a minute on 2 cores)
def test_a_french_lrc_that_names_no_language_reaches_vipe_in_the_english_the_real_whisper_base_hears(tmp_path):
    """JamendoLyrics' "Le royaume des glous glous", its first 45 s as a WAV, and its lines sung in them as an LRC
    with no [la:] tag: read as French from its words, and each line given the English Whisper base hears over it."""
    from scipy.io import wavfile

    from musicvid.cli import main
    from musicvid.core.audio import SAMPLE_RATE, decode
    from musicvid.storyboard.board import load_storyboard
    from tests.fixtures.jamendo import shared_song
    from tests.fixtures.whisper_ct2 import whisper_base_dir

    song = shared_song("Le_royaume")
    wavfile.write(tmp_path / "clip.wav", SAMPLE_RATE, decode(song.path)[: 45 * SAMPLE_RATE])
    sung = [(start, text) for start, text in song.lines if start < 40.0]
    (tmp_path / "clip.lrc").write_text("".join(f"[{int(t // 60):02d}:{t % 60:05.2f}]{text}\n" for t, text in sung))
    command = ["storyboard", str(tmp_path / "clip.wav"), "--models", "tiny", "--asr", "faster-whisper", "-q"]
    command += ["--asr-model", str(whisper_base_dir(tmp_path)), "--lyrics", str(tmp_path / "clip.lrc")]
    assert main([*command, "--workdir", str(tmp_path / "w")]) == 0
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    lyric = [scene for scene in board.scenes if scene.kind == "lyric"]
    english = " ".join(scene.text_en or "" for scene in lyric).lower().split()
    assert board.language == "fr" and board.settings.transcript.startswith("translated:faster-whisper:")
    assert [scene.text for scene in lyric] == [text for _, text in sung]  # as written, and sung at their times
    assert sum(bool(scene.text_en) for scene in lyric) >= len(lyric) / 2, lyric
    assert len({"the", "a", "of", "is", "and", "in", "it", "you", "he", "they", "not"} & set(english)) >= 3, english


def test_whisper_is_planned_where_it_gives_a_timed_files_lines_their_english(tmp_path):
    from musicvid.lyrics.known import check_lyrics_file
    from musicvid.prepare import timed_alone
    from musicvid.settings.presets import PRESETS

    french = "".join(f"[00:0{n}.00]{text}\n" for n, text in enumerate(["mon cœur est un phare"] * 2 + ["ta voix"]))
    (tmp_path / "fr.lrc").write_text("[la:fr]\n" + french)
    (tmp_path / "en.lrc").write_text("[00:01.00]my heart is a lighthouse\n")
    (tmp_path / "plain.txt").write_text("mon cœur est un phare\n")
    fr, en, plain = (check_lyrics_file(tmp_path / name) for name in ("fr.lrc", "en.lrc", "plain.txt"))
    default, tiny = PRESETS["default"], PRESETS["tiny"]
    assert not timed_alone(fr, default) and timed_alone(fr, tiny)  # (the tiny preset's Whisper hears English alone)
    assert timed_alone(en, default) and not timed_alone(plain, default) and not timed_alone(None, default)
