"""The lyrics on screen (musicvid.delivery.captions): Chinese, Japanese and Korean burned in as their letters, each
character in a font that has it, and what no caption font has left out and said; each caption shown while its line
is sung (musicvid.delivery.cue_times)."""

import re
import subprocess
import unicodedata

import numpy as np

from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.delivery import captions, mux, subtitles
from musicvid.delivery.cue_times import HOLD_SECONDS, MIN_SHOWN_SECONDS, READ_CHARS_PER_SECOND, word_times
from musicvid.lyrics.known import parse_srt
from musicvid.lyrics.transcript import Line, Transcript, Word
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from musicvid.storyboard.scenes import scenes_from_lines
from tests.helpers import decoded

WIDE_CJK = "我爱你就像老鼠爱大米不管有多少风雨我都会依然陪着你"  # 25 characters, no space: 1.5 rows at 240 × 320


def lyric_board(lines: list[str]) -> Storyboard:
    """One lyric scene a second, a line each."""
    scenes = [Scene(index=i, kind="lyric", start=float(i), end=i + 1.0, text=t) for i, t in enumerate(lines)]
    return Storyboard(audio=SongAudio(len(lines)), language="", scenes=scenes)


def burned_in(tmp_path, lines: list[str], width=320, height=240) -> list[np.ndarray]:
    """Each line burned in by libass on a grey frame, as the video shows it: the bottom third."""
    script = tmp_path / "lyrics.ass"
    captions.write_script(script, captions.ass_script(lyric_board(lines), width, height))
    grey = np.full((height, width, 3), 90, dtype=np.uint8)
    video = tmp_path / "lyrics.mp4"
    mux.encode_video(
        [grey] * 2 * len(lines), width=width, height=height, fps=2, audio=None, output=video, subtitles=script
    )
    frames = decoded(video, set(range(0, 2 * len(lines), 2)))  # frame 2k is in line k
    return [frames[2 * k][height * 2 // 3 :].astype(float) for k in range(len(lines))]


def test_chinese_japanese_and_korean_lyrics_are_burned_in_as_their_letters(tmp_path):
    # five full-width characters each: drawn as boxes (a font without them), the three are the same picture
    lines = burned_in(tmp_path, ["我们的歌声", "春の夜の夢", "사랑의노래"])

    def apart(a, b) -> int:  # pixels clearly apart, not by the encoder's noise
        return int((np.abs(a - b).max(axis=2) > 40).sum())

    drawn = [apart(line, 90) for line in lines]
    assert min(drawn) > 300  # five characters' strokes and outline, at 17 px
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert apart(lines[a], lines[b]) > min(drawn) / 2, (a, b)


def test_scripts_dejavu_lacks_are_burned_in_shaped_each_word_in_one_font(tmp_path):
    """Hindi, Tamil, Thai, Amharic, Urdu, Tibetan and Cherokee: drawn, each its own picture (boxes would be alike); a word in the first font
    that has all of it, so that Devanagari's ksha (क्ष) is shaped into one letter, narrower than the two it joins (कष),
    and an Urdu line with ہ or ے is drawn whole and joined in the Arabic font, its other words too (not in DejaVu's
    Arabic, of another style)."""
    urdu = "میں تم سے پیار کرتا ہوں"
    assert dialogue(captions.ass_script(lyric_board([urdu]), 512, 288)) == [
        "{\\fnLyrics Arabic}میں تم سے پیار کرتا ہوں{\\fn}"
    ]
    lines = ["नमस्ते", "வணக்கம்", "สวัสดี", "ሰላምታ", urdu, "བཀྲ་ཤིས", "ᏣᎳᎩ", "क्ष", "कष"]  # (Tibetan's ཀྲ stacked)
    assert captions.undrawn_note(lyric_board(lines)) == ""
    inked = [np.abs(line - 90).max(axis=2) > 40 for line in burned_in(tmp_path, lines)]
    drawn = [int(ink.sum()) for ink in inked]
    assert min(drawn) > 80  # (one letter, क्ष, at 17 px: 116)
    for a in range(7):
        for b in range(a + 1, 7):
            assert (inked[a] != inked[b]).sum() > min(drawn) / 2, (lines[a], lines[b])

    def width(ink) -> int:
        columns = np.flatnonzero(ink.any(axis=0))
        return int(columns[-1] - columns[0])

    assert width(inked[7]) < 0.8 * width(inked[8]), (width(inked[7]), width(inked[8]))


def test_a_right_to_left_line_with_latin_words_in_it_reads_from_its_right(tmp_path):
    """Laid out as the bidi rule has it: a Hebrew line opening on its right, the Latin word on its left, as the .srt
    shows it in a player. Written in that order, a Latin line (left to right) is the same picture; laid out left
    to right, the Hebrew line would open at the left, the line's first word shown last."""
    hebrew_first, latin_first = burned_in(tmp_path, ["שלום hello 12", "hello 12 שלום"])
    assert np.abs(hebrew_first - 90).max() > 40  # drawn
    assert np.abs(hebrew_first - latin_first).mean() < 1.0


def dialogue(script: str) -> list[str]:
    """The text of each shown line of an ASS script."""
    return [line.split(",,0,0,0,,")[1] for line in script.splitlines() if line.startswith("Dialogue:")]


def test_lyrics_name_the_font_of_each_character_and_leave_out_what_none_has():
    board = lyric_board(["la 中文 la", "fire 🔥 and 𓀀", "🔥🎵", "ok 😀"])  # DejaVu has the emoticons
    script = captions.ass_script(board, 512, 288)
    assert "Style: Lyrics,DejaVu Sans," in script
    assert dialogue(script) == [
        "la {\\fnLyrics CJK}中文 {\\fn}la",  # the CJK font for its run, then the style's again
        "fire and",
        "ok 😀",
    ]  # a line with nothing drawable is not shown at all
    assert captions.undrawn_note(board) == (
        "2 of 4 lyric lines have characters the caption fonts cannot draw (scenes 1-2: 🔥, 𓀀, 🎵): "
        "the burned-in lyrics leave them out, and a line of a word they would misspell; the .srt keeps them"
    )
    # a word shown without some of its letters is another word: its line is not shown (a letter of Mongolian here)
    assert dialogue(captions.ass_script(lyric_board(["la laᠠ la", "la la"]), 512, 288)) == ["la la"]
    # an unspaced Chinese line is a word a character: one the fonts lack (谧) is left out, not the line
    assert [captions._font_of(c) is None for c in "静谧的夜晚"] == [False, True, False, False, False]
    assert dialogue(captions.ass_script(lyric_board(["静谧的夜晚"]), 512, 288)) == ["{\\fnLyrics CJK}静的夜晚{\\fn}"]
    assert "fire 🔥 and 𓀀" in subtitles.srt(board)
    assert captions.undrawn_note(lyric_board(["la 中文 la", "ok 😀"])) == ""
    # karaoke: a word with nothing drawable lights nothing up, its time is a wait before the next
    words = word_times(board, None)
    (_, fire_end, _, _), _, (and_start, and_end, _, _), _ = words[1]
    wait, fill = round(and_start * 100) - round(fire_end * 100), round(and_end * 100) - round(and_start * 100)
    assert wait > 0 and dialogue(captions.ass_script(board, 512, 288, words))[1].endswith(
        f"fire {{\\k{wait}}}{{\\kf{fill}}}and"
    )


def test_words_typed_into_a_scene_without_lyrics_are_shown_as_the_lyrics_are():
    """An intro's title typed into its storyboard scene: the .srt, the burned-in lyrics and karaoke show it."""
    scenes = [
        Scene(index=0, kind="intro", start=0.0, end=2.0, text="The Lighthouse Song"),
        Scene(index=1, kind="lyric", start=2.0, end=3.0, text="my heart"),
        Scene(index=2, kind="break", start=3.0, end=4.0, text="\u200b "),  # (nothing a caption shows: none)
    ]
    board = Storyboard(audio=SongAudio(4.0), language="", scenes=scenes)
    assert subtitles.srt(board).startswith("1\n00:00:00,000 --> 00:00:02,000\nThe Lighthouse Song\n\n2\n")
    assert dialogue(captions.ass_script(board, 512, 288)) == ["The Lighthouse Song", "my heart"]
    words = word_times(board, None)
    assert sorted(words) == [0, 1] and [word for _, _, word, _ in words[0]] == ["The", "Lighthouse", "Song"]


def shown(text: str) -> str:
    """An ASS line's letters: without its override tags and row breaks."""
    return re.sub(r"\{[^}]*\}", "", text).replace("\\N", "")


def test_a_line_wider_than_the_picture_without_spaces_is_broken_into_rows_and_every_character_shown(tmp_path):
    lines = [WIDE_CJK, "https://example.com/a/very/long/path", "a Latin line that wraps at its spaces as it always did"]
    width, height = 240, 320
    cjk, url, latin = dialogue(captions.ass_script(lyric_board(lines), width, height))
    assert cjk.count("\\N") == 1 and shown(cjk) == WIDE_CJK
    assert url.count("\\N") == 1 and shown(url) == lines[1]
    assert latin == lines[2]  # every word fits a row: libass wraps it at its spaces, as it always has
    for k, frame in enumerate(burned_in(tmp_path, lines, width, height)):
        ink = (np.abs(frame - 90).max(axis=2) > 40).any(axis=0).nonzero()[0]
        # the letters and their outline between the margins (Latin's outline a pixel or two past them)
        assert width // 20 - 3 <= ink.min() and ink.max() <= width - width // 20 + 2, (k, ink.min(), ink.max())
        assert ink.max() - ink.min() > width / 2, k  # (drawn at all)


def syllables(text: str) -> list[tuple[int, str]]:
    """A karaoke line's fills (\\kf) in order, each with the letters it sweeps."""
    parts = re.split(r"\{\\kf(\d+)\}", text)[1:]
    return [(int(fill), "".join(shown(letters).split())) for fill, letters in zip(parts[::2], parts[1::2])]


def test_karaoke_keeps_each_words_time_across_the_rows_a_line_is_broken_into():
    long = "https://example.com/a/very/long/path/to/the/song"  # one word, wider than a row and a half
    line = f"hello world {long} end"
    board = lyric_board([line])
    words = word_times(board, None)
    text = dialogue(captions.ass_script(board, 240, 320, words))[0]
    rows = text.split("\\N")
    assert len(rows) == 3 and all(re.match(r"(\{\\q2\})?(\{\\k\d+\})?\{\\kf\d+\}", row) for row in rows)
    fills = syllables(text)
    assert "".join(letters for _, letters in fills) == "".join(line.split())  # in the order sung
    waits = [int(wait) for wait in re.findall(r"\\k(\d+)", text)]
    assert sum(fill for fill, _ in fills) + sum(waits) == 100  # the line's second, every centisecond once
    # the long word's fill, shared by its rows in proportion to their letters
    (start, end, _, _), cut = words[0][2], [(fill, letters) for fill, letters in fills if letters in long]
    assert len(cut) == 3 and sum(fill for fill, _ in cut) == round(end * 100) - round(start * 100)
    for fill, letters in cut:
        assert abs(fill - (end - start) * 100 * len(letters) / len(long)) <= 1, (fill, letters)


def test_a_lyric_that_begins_like_a_cues_times_is_read_by_ffmpeg_as_its_words(tmp_path):
    """ffmpeg's SRT reader (and mpv's) would take such a line for a new cue's times, and drop the cue; and a tag it
    knows, or a backslash's break, for markup."""
    lines = ["first", "00:00:05,000 --> 00:00:06,000", " 1:2:3.4 --> 5:6:7.8 and words", "<i>in</i> one\\Ntwo <3"]
    lines += ["{\\an8}up here", "a<br>b <p>para</p> <Foo bar>", "{\\i1}slanted{\\i0} {forever}"]
    path = tmp_path / "lyrics.srt"
    path.write_text(subtitles.srt(lyric_board(lines)), encoding="utf-8")
    read = subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-i", str(path), "-f", "ass", "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cues = [line for line in read.splitlines() if line.startswith("Dialogue:")]
    assert [cue.split(",")[1] for cue in cues] == [f"0:00:0{n}.00" for n in range(len(lines))]
    shown = [re.sub(r"\\([{}])", r"\1", text.replace(subtitles.WORD_JOINER, "")) for text in dialogue(read)]
    assert shown == [" ".join(t.split()) for t in lines]  # (libass shows an escaped brace as the brace)


def heard(lines: list[tuple[float, float, list[tuple[float, float, str]]]]) -> Transcript:
    """A transcript of lines with their words' (start, end, text)."""
    made = [Line(a, b, " ".join(w[2] for w in ws), words=[Word(*w) for w in ws]) for a, b, ws in lines]
    return Transcript(made, "en", "test")


def karaoke(board: Storyboard, transcript: Transcript) -> list[tuple[str, list[int], list[str]]]:
    """Each karaoke event's start, its \\k and \\kf times (centiseconds) and the words after them."""
    script = captions.ass_script(board, 320, 240, word_times(board, transcript), transcript)
    events = [line for line in script.splitlines() if line.startswith("Dialogue:")]
    return [
        (e.split(",")[1], [int(k) for k in re.findall(r"\\kf?(\d+)", e)], re.findall(r"}([^{]+)", e)) for e in events
    ]


def test_overlapping_word_times_light_each_word_as_the_one_before_ends():
    board = Storyboard(audio=SongAudio(5.0), language="en", scenes=[Scene(0, "lyric", 0.0, 4.5, "one two three four")])
    words = [(0.0, 1.3, "one"), (1.0, 2.3, "two"), (2.0, 3.3, "three"), (3.0, 3.9, "four")]
    [(start, times, texts)] = karaoke(board, heard([(0.0, 4.0, words)]))
    assert (start, times) == ("0:00:00.00", [130, 100, 100, 60])  # lit until 1.3, 2.3, 3.3, 3.9: never past 4.5
    assert [t.strip() for t in texts] == ["one", "two", "three", "four"]


def test_a_first_line_sung_in_the_lead_in_is_captioned_from_its_singing():
    # its scene starts at 0 (frame 0 shows its picture), its words at 0.7: enhanced LRC's or Whisper's
    board = Storyboard(
        audio=SongAudio(10.0), language="en", scenes=[Scene(0, "lyric", 0.0, 5.0, "first line sung late")]
    )
    words = [(0.7, 1.5, "first"), (1.5, 2.5, "line"), (2.5, 3.0, "sung"), (3.0, 3.5, "late")]
    assert karaoke(board, heard([(0.7, 3.5, words)])) == [
        ("0:00:00.70", [80, 100, 50, 50], ["first ", "line ", "sung ", "late"])  # no wait: shown as it is sung
    ]
    plain = Transcript([Line(0.7, 3.5, "first line sung late")], "en", "lyrics:a.lrc")  # a plain LRC's line
    [(start, times, _)] = karaoke(board, plain)
    assert start == "0:00:00.70" and sum(times) == 280  # its letters share the line's 0.7 → 3.5
    assert parse_srt(subtitles.srt(board, plain), "the .srt")[0].start == 0.7


def test_right_to_left_lines_are_shown_whole_in_karaoke_and_a_duets_lines_lit_each_in_its_own_row(tmp_path):
    """A duet's two lines sung at once are one caption: in one ASS line the fills sweep one word after another, so
    the second line lit only after the first; it was shown whole, unlit."""
    board = lyric_board(["שלום עולם", "abc مرحبا بالعالم", "hello world", "I will stay / And you will go"])
    script = captions.ass_script(board, 320, 240, word_times(board, None))
    shown = dialogue(script)
    assert shown[:2] == [captions.LINE_COLOUR + "שלום עולם", captions.LINE_COLOUR + "abc مرحبا بالعالم"]
    assert "\\kf" in shown[2] and len(shown) == 5
    # each line its own event, the first sung on top (libass stacks an event over the one before), both lit over
    # the caption's whole time
    assert [[letters for _, letters in syllables(text)] for text in shown[3:]] == [
        ["And", "you", "will", "go"],
        ["I", "will", "stay"],
    ]
    assert abs(sum(f for f, _ in syllables(shown[3])) - sum(f for f, _ in syllables(shown[4]))) <= 1
    emoji = lyric_board(["🔥🔥 / hello there"])  # a line of nothing drawable has no event
    assert dialogue(captions.ass_script(emoji, 320, 240, word_times(emoji, None))) == ["{\\kf50}hello {\\kf50}there"]
    said = "have words written right to left"
    assert captions.shown_whole_note(board) == (
        f"2 of 4 lyric lines {said} (scenes 0-1): karaoke shows them whole, not lit word by word"
    )
    assert captions.shown_whole_note(board, name="rows", first=1) == (  # (the page's table counts from 1)
        f"2 of 4 lyric lines {said} (rows 1-2): karaoke shows them whole, not lit word by word"
    )
    scene = Scene(index=0, kind="lyric", start=0.0, end=4.0, text="I will stay / And you will go")
    duet = Storyboard(audio=SongAudio(4.0), language="", scenes=[scene])
    captions.write_script(tmp_path / "duet.ass", captions.ass_script(duet, 320, 240, word_times(duet, None)))
    grey = np.full((240, 320, 3), 90, dtype=np.uint8)
    mux.encode_video(
        [grey] * 8,
        width=320,
        height=240,
        fps=2,
        audio=None,
        output=tmp_path / "duet.mp4",
        subtitles=tmp_path / "duet.ass",
    )
    frame = decoded(tmp_path / "duet.mp4", {2})[2].astype(int)  # 1 s into the 4 s line: each row lit in part
    gold = (frame[..., 0] > 180) & (frame[..., 1] > 150) & (frame[..., 2] < 90)
    white = frame.min(axis=2) > 200
    rows = [y for y in range(240) if gold[y].any()]
    assert rows and max(rows) - min(rows) > 20  # gold in both rows, one over the other
    top, bottom = (slice(min(rows), (min(rows) + max(rows)) // 2), slice((min(rows) + max(rows)) // 2, max(rows) + 1))
    assert all(gold[part].sum() > 20 and white[part].sum() > 20 for part in (top, bottom))
    # a mark of direction is no word: a line that ends in one is lit word by word
    assert (
        "\\kf"
        in dialogue(captions.ass_script(marked := lyric_board(["we sing\u200f"]), 320, 240, word_times(marked, None)))[
            0
        ]
    )
    # Syriac, right to left, but in no caption font: the line is not shown at all (undrawn_note says why)
    assert captions.shown_whole_note(lyric_board(["hello world", "ܐܒܓ"])) == ""


def event_spans(script: str) -> list[tuple[float, float]]:
    """Each ASS event's (start, end), in seconds."""
    events = [line.split(",")[1:3] for line in script.splitlines() if line.startswith("Dialogue:")]
    seconds = [[sum(float(part) * 60**k for k, part in enumerate(reversed(t.split(":")))) for t in e] for e in events]
    return [(round(a, 2), round(b, 2)) for a, b in seconds]


def shown_spans(board: Storyboard, transcript: Transcript | None) -> list[tuple[float, float]]:
    """Each caption's (start, end) in the .srt, which the burned-in lyrics (line and karaoke alike) show too."""
    cues = [(c.start, c.end) for c in parse_srt(subtitles.srt(board, transcript), "the .srt")]
    for words in (None, word_times(board, transcript)):
        assert event_spans(captions.ass_script(board, 320, 240, words, transcript)) == cues
    return cues


def test_a_caption_goes_soon_after_its_line_is_sung_not_at_the_next_line():
    scenes = [
        Scene(0, "intro", 0.0, 2.0),
        Scene(1, "lyric", 2.0, 12.0, "hold me close"),  # sung 2-4, then an instrumental stretch until 12
        Scene(2, "lyric", 12.0, 14.0, "let go"),
    ]
    board = Storyboard(audio=SongAudio(14.0), language="en", scenes=scenes)
    transcript = heard(
        [
            (2.0, 4.0, [(2.0, 2.6, "hold"), (2.7, 3.2, "me"), (3.3, 4.0, "close")]),
            (12.0, 12.3, [(12.0, 12.1, "let"), (12.1, 12.3, "go")]),
        ]
    )
    (start, end), (second, last) = shown_spans(board, transcript)
    assert start == 2.0 and 4.0 < end < 12.0 and end == 4.0 + HOLD_SECONDS
    assert second == 12.0 and last == 12.0 + MIN_SHOWN_SECONDS  # a line sung quickly: shown long enough to read
    assert shown_spans(board, None) == [(2.0, 12.0), (12.0, 14.0)]  # no transcript: the scenes' times, as before


def test_an_srt_lyrics_files_own_cue_times_are_its_captions():
    text = "1\n00:00:02,000 --> 00:00:06,000\nfirst line here\n\n2\n00:00:08,000 --> 00:00:08,400\nsecond line sung quickly\n"
    lines = parse_srt(text, "song.srt")
    board = Storyboard(audio=SongAudio(10.0), language="en", scenes=scenes_from_lines(lines, 10.0))
    assert [(s.start, s.end) for s in board.scenes if s.text] == [(2.0, 8.0), (8.0, 10.0)]  # gaps too short to break
    transcript = Transcript(lines, "en", "lyrics:song.srt")
    assert shown_spans(board, transcript) == [(2.0, 6.0), (8.0, 8.0 + 24 / READ_CHARS_PER_SECOND)]  # no hold; read
    words = word_times(board, transcript)
    assert words[1][-1][1] == 6.0 and words[2][-1][1] == 8.4  # karaoke fills the line by the cue's end


def test_an_edited_scene_and_a_typed_title_keep_their_scenes_times():
    scenes = [
        Scene(0, "intro", 0.0, 2.0, text="The Lighthouse Song"),  # typed by a person: no line sings it
        Scene(1, "lyric", 2.0, 8.0, "my whole heart"),  # the person edited what was heard
        Scene(2, "lyric", 8.0, 10.0, "and soul"),
    ]
    board = Storyboard(audio=SongAudio(10.0), language="en", scenes=scenes)
    transcript = heard(
        [(2.0, 3.0, [(2.0, 2.5, "my"), (2.5, 3.0, "heart")]), (8.0, 8.6, [(8.0, 8.3, "and"), (8.3, 8.6, "soul")])]
    )
    assert shown_spans(board, transcript) == [(0.0, 2.0), (2.0, 8.0), (8.0, 9.1)]


def test_no_caption_overlaps_the_next_and_karaoke_stays_inside_its_caption():
    long = "a long line of many words that takes a while to read"  # 3.5 s to read, sung in 0.8
    scenes = [
        Scene(0, "lyric", 0.0, 1.0, long),
        Scene(1, "lyric", 1.0, 2.5, "sung to the end"),
        Scene(2, "lyric", 2.5, 6.0, "short"),
    ]
    board = Storyboard(audio=SongAudio(6.0), language="en", scenes=scenes)
    transcript = heard(
        [
            (0.0, 0.8, [(0.0 + k * 0.07, 0.07 + k * 0.07, w) for k, w in enumerate(long.split())]),
            (1.1, 2.7, [(1.1, 1.5, "sung"), (1.5, 1.9, "to"), (1.9, 2.2, "the"), (2.2, 2.7, "end")]),  # past its scene
            (2.6, 2.9, [(2.6, 2.9, "short")]),
        ]
    )
    spans = shown_spans(board, transcript)
    assert spans == [(0.0, 1.0), (1.1, 2.5), (2.6, 3.6)]  # read as long as the scene allows; the end kept; a second
    assert all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:]))
    for (start, times, _), (a, b) in zip(karaoke(board, transcript), spans):
        assert sum(times) <= round((b - a) * 100), (start, times)  # every \\k and \\kf inside the event


def test_a_line_written_decomposed_is_drawn_composed():
    korean = unicodedata.normalize("NFD", "사랑해 너를")  # (as text copied from macOS often is)
    board = lyric_board([korean])
    assert captions.undrawable(korean) == "" and captions.undrawn_note(board) == ""
    assert "사랑해" in dialogue(captions.ass_script(board, 320, 240))[0]
    assert korean in subtitles.srt(board)  # the .srt as written


def test_a_portrait_videos_letters_are_sized_by_its_width_and_a_usual_line_shown_whole():
    assert captions.block_of(1080, 1920).size == captions.block_of(1920, 1080).size
    line = "Started from the bottom now we here, started from the bottom now my whole team here"
    text = dialogue(captions.ass_script(lyric_board([line]), 1080, 1920))[0]
    assert captions.ELLIPSIS not in text and shown(text) == line


def test_braces_and_backslashes_in_a_lyric_are_shown_as_written_not_read_as_markup(tmp_path):
    """`{forever}`, `\\o/`, `AC\\DC`: ASS would take a brace for an override tag and `\\N` for a break. Shown, they
    take the room their letters do: one row, at the style's size, unlike the same letters with a tag taking effect."""
    lines = ["{\\fs60}big {forever}", "(/fs60)big (forever)", "one\\Ntwo \\o/ C:\\new", "one/Ntwo /o/ C:/new"]
    tags, parens, breaks, slashes = burned_in(tmp_path, lines, 480, 270)

    def rows_inked(frame) -> int:
        return int((np.abs(frame - 90).max(axis=2) > 40).any(axis=1).sum())

    assert abs(rows_inked(tags) - rows_inked(parens)) <= 3 and abs(rows_inked(breaks) - rows_inked(slashes)) <= 3
    for shown_as_written, other in ((tags, parens), (breaks, slashes)):  # braces and backslashes drawn, not ( and /
        assert (np.abs(shown_as_written - other).max(axis=2) > 40).sum() > 30
