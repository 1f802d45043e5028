"""Known lyrics aligned by a Whisper model that every render of a process shares: text longer than the
decoder reads at once is aligned in pieces (a word longer than a piece, as runs of its characters), no window is
given more text than the decoder reads, and a failed alignment leaves the model as it was."""

import random

import pytest
import torch
import whisper

from musicvid.core.assets import DEMO_LYRICS
from musicvid.core.audio import SAMPLE_RATE, load_audio
from musicvid.core.errors import RenderError
from musicvid.lyrics.align import PAUSE, Walk, align_lyrics, as_written, attempt, pieces
from musicvid.lyrics.known import parse_lrc
from musicvid.lyrics.transcript import Line, Word
from musicvid.lyrics.windows import TimedWord
from musicvid.models.choose import choose_models
from musicvid.models.internals import text_tokens
from musicvid.models.registry import ModelRegistry

random.seed(1)
ZH = "".join(
    random.choice("我爱你就像老鼠爱大米不管有多少风雨我都会依然陪着你我想你想着你天空海阔你与我可会变谁没在变")
    for _ in range(400)
)


class Windows:
    """A song's windows as the tiny preset's Whisper has them (a 64-token decoder: 59 tokens of text a window), each
    text timed at once and its tokens kept."""

    most_tokens, duration = 59, 30.0

    def __init__(self):
        self.tokenizer = whisper.tokenizer.get_tokenizer(True, num_languages=99, language="zh", task="transcribe")
        self.given: list[int] = []

    def tokens(self, text: str) -> list[int]:
        return text_tokens(self.tokenizer, text)

    def timed(self, at: float, words: list[list[int]]) -> tuple[float, list[TimedWord]]:
        self.given.append(sum(map(len, words)))
        return 0.0, [TimedWord(0.0, 0.1, 0.5, 0.0) for _ in words]


@pytest.mark.parametrize("text", [ZH, "see https://example.com/" + "a1b2c3" * 60 + " now"])
def test_a_word_longer_than_a_window_takes_is_cut_into_runs_that_fit(text):
    windows = Windows()
    cut = pieces(text, windows)
    assert "".join(cut).replace(" ", "") == text.replace(" ", "")
    assert max(sum(len(windows.tokens(word)) for word in piece.split()) for piece in cut) <= windows.most_tokens // 2


def test_a_window_holds_the_next_line_and_never_more_tokens_than_the_decoder_reads():
    windows = Windows()
    texts = pieces(ZH, windows)
    pause, words = windows.tokens(PAUSE), [[windows.tokens(word) for word in text.split()] for text in texts]
    for walk in (Walk(), Walk(line=1, cursor=2.0, before=(0, 0.0)), Walk(line=5, rate=50.0, before=(4, 1.0))):
        assert walk.line in attempt(windows, walk, words, pause).lines
    assert max(windows.given) <= windows.most_tokens
    with pytest.raises(RenderError, match="^aligning lyrics: 69 tokens for a window of 59"):
        attempt(windows, Walk(), [[list(range(63))]], pause)


def test_the_runs_of_one_word_are_one_word_again_in_the_phrases_it_becomes():
    words = [Word(k, k + 1, run) for k, run in enumerate(["我爱", "你就", "像", "老鼠", "爱大米", "la"])]
    phrases = [Line(0, 2, "我爱 你就", words=words[:2]), Line(3, 6, "像 老鼠 爱大米 la", words=words[2:])]
    assert [p.text for p in as_written(phrases, "我爱你就像老鼠 爱大米 la")] == ["我爱你就", "像老鼠 爱大米 la"]


@pytest.mark.slow
@pytest.mark.ci  # (a second paragraph aligned in pieces: test_a_song_pasted_as_one_paragraph_... stays in the suite)
def test_chinese_pasted_as_one_paragraph_is_aligned(shared, song):
    eight = song.samples[: 8 * SAMPLE_RATE]
    lines = align_lyrics(shared, eight, [ZH], song.info.sha256, quiet=True).lines
    assert "".join(line.text for line in lines) == ZH
    assert "".join(w.text for line in lines for w in line.words) == ZH


@pytest.fixture(scope="module")
def shared():
    """The tiny preset's Whisper (a 64-token text context), kept loaded as the page and a batch keep it."""
    registry = ModelRegistry(choose_models("tiny"), "cpu", keep_loaded=True)
    with registry.use("asr") as asr:
        yield asr


@pytest.fixture(scope="module")
def song():
    return load_audio(DEMO_LYRICS.with_suffix(".mp3"))


@pytest.mark.slow
def test_a_song_pasted_as_one_paragraph_is_aligned_in_pieces(shared, song):
    sung = " ".join(line.text for line in parse_lrc(DEMO_LYRICS.read_text(), song.info.duration))
    paragraph = " ".join([sung] * 5)  # about 220 words, far over the 64 tokens the decoder reads at once
    assert len(paragraph.split()) > 200
    lines = align_lyrics(shared, song.samples, [paragraph], song.info.sha256, quiet=True).lines
    assert " ".join(line.text for line in lines) == paragraph  # (as phrases where it was found)
    timed = [w.text for line in lines for w in line.words]  # a random model finds some pieces, not all
    assert timed and timed == paragraph.split()[: len(timed)]
    starts = [line.start for line in lines]
    assert starts == sorted(starts) and 0 <= lines[0].start <= lines[-1].end <= song.info.duration


@pytest.mark.slow
def test_a_failed_alignment_leaves_the_shared_model_working_for_the_next_job(shared, song, monkeypatch):
    def broken(*args, **kwargs):  # fails inside the alignment, while its hooks are on the model
        raise RuntimeError("the GPU is out of memory")

    from musicvid.lyrics import align

    monkeypatch.setattr(align, "detect_language", lambda *args: "en")  # (it runs the decoder too)
    monkeypatch.setattr(shared.model.decoder, "forward", broken)
    with pytest.raises(RuntimeError, match="out of memory"):
        align_lyrics(shared, song.samples, ["my heart is a lighthouse"], song.info.sha256, quiet=True)
    monkeypatch.undo()
    # the next renders: recognition (a hook left behind breaks every pass of its decoder) and another alignment
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(song.samples[: 8 * SAMPLE_RATE]))
    with torch.no_grad():
        shared.model(mel[None], torch.tensor([[whisper.tokenizer.get_tokenizer(False).sot]]))
    lines = align_lyrics(shared, song.samples, ["my heart is a lighthouse"], song.info.sha256, quiet=True).lines
    assert [line.text for line in lines] == ["my heart is a lighthouse"]
