"""Words heard one by one joined as their language writes them (musicvid.lyrics.spacing): Chinese, Japanese and Thai
without spaces, the others with; and karaoke lighting such a line token by token, with no space put between them."""

import re

from musicvid.delivery import captions
from musicvid.delivery.cue_times import sung_line, word_times
from musicvid.lyrics.lines import lines_at_pauses
from musicvid.lyrics.spacing import joined, spaced_in, sung_words
from musicvid.lyrics.transcript import Line, Transcript, Word
from musicvid.storyboard.board import Scene, SongAudio, Storyboard

JAPANESE = ["君", "の", "名前", "を", "呼んだ", "。"]  # as Whisper hears it: a token a word, no space before any


def test_words_are_joined_as_their_script_writes_them():
    assert joined(JAPANESE) == "君の名前を呼んだ。"
    assert joined(["我", "爱", "你"]) == "我爱你" and joined(["ฉัน", "รัก", "เธอ"]) == "ฉันรักเธอ"
    assert joined(["사랑", "해요"]) == "사랑 해요"  # Korean writes spaces
    assert joined(["I", "love", "you", "君", "が", "好き"]) == "I love you 君が好き"  # between scripts: a space
    assert joined(["OK", "。"]) == "OK。" and joined(["Люблю", "тебя"]) == "Люблю тебя" and joined([]) == ""


def test_a_known_line_is_aligned_a_chinese_or_japanese_character_a_word_its_marks_with_it():
    assert sung_words("天空在燃烧") == ["天", "空", "在", "燃", "烧"]
    assert sung_words("君の名前を呼んだ。") == ["君", "の", "名", "前", "を", "呼", "ん", "だ。"]
    assert sung_words("ちょっと待って 「愛してる」") == ["ちょっ", "と", "待っ", "て", "「愛", "し", "て", "る」"]
    assert sung_words("東京タワー") == ["東", "京", "タ", "ワー"]  # the long-vowel mark lengthens the one before
    assert sung_words("LOVE愛してるyou (笑)") == ["LOVE", "愛", "し", "て", "る", "you", "(笑)"]
    # the other scripts as written: Thai and Khmer spell a syllable in several characters, Korean writes spaces
    assert sung_words("Quoi ? สวัสดีค่ะ 사랑해 너를") == ["Quoi", "?", "สวัสดีค่ะ", "사랑해", "너를"]
    for line in ("君の名前を呼んだ。", "我爱你 I love you", "それでも、まだ"):
        assert spaced_in(line, sung_words(line)) is not None  # each line its words, as written


def test_a_lines_words_are_found_in_its_text_as_written_or_not_at_all():
    assert spaced_in("君の名前を呼んだ。", JAPANESE) == [False] * 6
    assert spaced_in("  let it  go ", ["let", "it", "go"]) == [True, True, True]
    assert spaced_in("let it go", ["let", "it", "go"]) == [False, True, True]
    assert spaced_in("let it be", ["let", "it", "go"]) is None  # edited since it was heard
    assert spaced_in("let it go now", ["let", "it", "go"]) is None and spaced_in("letit", ["let", "it", "go"]) is None


def test_a_recognized_line_in_japanese_keeps_its_words_unspaced():
    words = [Word(1 + 0.3 * n, 1.25 + 0.3 * n, text, 0.9) for n, text in enumerate(JAPANESE)]
    segment = Line(words[0].start, words[-1].end, "君の名前を呼んだ。", words=words)
    english = [Word(4 + 0.3 * n, 4.25 + 0.3 * n, text, 0.9) for n, text in enumerate(["call", "my", "name"])]
    other = Line(english[0].start, english[-1].end, "call my name", words=english)
    assert [line.text for line in lines_at_pauses([segment, other])] == ["君の名前を呼んだ。", "call my name"]


def test_karaoke_lights_a_line_written_without_spaces_token_by_token():
    words = [Word(1.0 + 0.4 * n, 1.3 + 0.4 * n, text) for n, text in enumerate(JAPANESE)]
    line = Line(1.0, words[-1].end, joined(JAPANESE), words=words)
    scene = Scene(index=0, kind="lyric", start=0.9, end=4.0, text=line.text)
    board = Storyboard(audio=SongAudio(4.0), language="ja", scenes=[scene])
    transcript = Transcript([line], "ja", "test")
    assert sung_line(scene, transcript.lines) is line  # its caption shown while it is sung
    times = word_times(board, transcript)
    assert [(start, text, space) for start, _, text, space in times[0]] == [
        (w.start, w.text, False) for w in words
    ]  # each token at Whisper's time
    script = captions.ass_script(board, 320, 240, times, transcript)
    text = next(line for line in script.splitlines() if line.startswith("Dialogue:")).split(",,0,0,0,,")[1]
    fills = [int(fill) for fill in re.findall(r"\\kf(\d+)", text)]
    assert fills == [30] * 6 and re.sub(r"\{[^}]*\}", "", text) == "君の名前を呼んだ。"  # no space put between
    assert [int(wait) for wait in re.findall(r"\\k(\d+)", text)] == [10] * 5  # 0.1 s between tokens


def test_karaoke_keeps_each_tokens_time_across_the_rows_an_unspaced_line_is_broken_into():
    line_text = "我爱你就像老鼠爱大米不管有多少风雨我都会依然陪着你"  # 25 characters: 1.8 rows at 240 × 320
    tokens = [line_text[n : n + 3] for n in range(0, len(line_text), 3)]  # rows of 14 characters: one cut across
    words = [Word(0.2 * n, 0.2 * n + 0.2, token) for n, token in enumerate(tokens)]
    line = Line(0.0, words[-1].end, line_text, words=words)
    scene = Scene(index=0, kind="lyric", start=0.0, end=3.0, text=line_text)
    board = Storyboard(audio=SongAudio(3.0), language="zh", scenes=[scene])
    transcript = Transcript([line], "zh", "test")
    script = captions.ass_script(board, 240, 320, word_times(board, transcript), transcript)
    text = next(line for line in script.splitlines() if line.startswith("Dialogue:")).split(",,0,0,0,,")[1]
    rows = text.split("\\N")
    assert len(rows) == 2 and re.sub(r"\{[^}]*\}", "", "".join(rows)) == line_text
    parts = re.split(r"\{\\kf(\d+)\}", text)[1:]
    fills = [(fill, re.sub(r"\{[^}]*\}|\\N", "", letters)) for fill, letters in zip(parts[::2], parts[1::2])]
    by_token, at = [], 0  # each token's fills, the parts of a token cut across rows summed
    for fill, letters in fills:
        if at == sum(len(t) for t in tokens[: len(by_token)]):
            by_token.append(0)
        by_token[-1] += int(fill)
        at += len(letters)
    assert (
        len(fills) > len(tokens) and by_token == [20] * len(tokens) and "\\k" not in text.replace("\\kf", "")
    )  # no wait: sung end to end


def test_karaoke_lights_a_timed_lrc_line_in_chinese_a_character_at_a_time_over_its_time():
    """An LRC line has a time and no word times: an unspaced line is sung over that time a character at a time (it
    was lit whole at once), a word written with spaces a word at a time, what a no-break space joins as one."""
    text = "我爱你 I love\u00a0you 「天空」"
    line = Line(1.0, 4.0, text)
    scene = Scene(index=0, kind="lyric", start=1.0, end=5.0, text=text)
    board = Storyboard(audio=SongAudio(5.0), language="zh", scenes=[scene])
    times = word_times(board, Transcript([line], "zh", "test"))[0]
    assert [(text, space) for _, _, text, space in times] == [
        ("我", True),
        ("爱", False),
        ("你", False),
        ("I", True),
        ("love\u00a0you", True),
        ("「天", True),
        ("空」", False),
    ]
    assert times[0][0] == 1.0 and times[-1][1] == 4.0 and all(a[1] == b[0] for a, b in zip(times, times[1:]))
    script = captions.ass_script(board, 320, 240, {0: times}, None)
    shown = next(row for row in script.splitlines() if row.startswith("Dialogue:")).split(",,0,0,0,,")[1]
    assert re.sub(r"\{[^}]*\}", "", shown) == text  # as written, no space put in
