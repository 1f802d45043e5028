"""Known lyrics (plain lines Whisper times) in another language are given the English Whisper hears over each line,
as recognized ones are: ViPE reads English (the scene's `text_en`). They were read to ViPE as written."""

import logging
from dataclasses import replace

import pytest

from musicvid.lyrics import transcribe
from musicvid.lyrics.transcript import Line, Transcript
from musicvid.storyboard import make
from tests.helpers import make_tone
from tests.test_storyboard_edits_kept import prepared

SUNG = [Line(0.5, 1.5, "mon cœur est un phare"), Line(2.0, 3.5, "ta voix est une rivière")]
HEARD_IN_ENGLISH = [Line(0.4, 1.6, "my heart is a lighthouse"), Line(1.9, 3.6, "your voice is a river")]


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
    from tests.fixtures.jamendo import SONGS, read_songs
    from tests.fixtures.whisper_ct2 import load_whisper_base

    [song] = [s for s in read_songs(SONGS) if s.name.startswith("Le_royaume")]
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
        f"lyrics file {tmp_path / 'song.lrc'}: its lines are in French, with no English beside them: ViPE reads them as "
        "written (as plain lines, a .txt, Whisper times and translates them)"
    ], caplog.text  # (English, as a file that names no language is read: nothing said)


def test_timed_lines_with_no_latin_letter_and_no_language_named_are_said_to_reach_vipe_as_english(tmp_path, caplog):
    assert said_of_timed(tmp_path, caplog, "我的心是一座灯塔", "zh") == [
        f"lyrics file {tmp_path / 'song.lrc'}: its lines are in Chinese, with no English beside them: ViPE reads them as "
        "written (as plain lines, a .txt, Whisper times and translates them)",
        f"lyrics file {tmp_path / 'song.lrc'} names no language ([la:xx] in an LRC, or --language) and has no Latin "
        "letter: ViPE reads its lines as English",
    ], caplog.text
