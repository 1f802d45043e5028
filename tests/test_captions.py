"""The lyrics on screen (musicvid.delivery.captions): Chinese, Japanese and Korean burned in as their letters, each
character in a font that has it, and what no caption font has left out and said."""

import numpy as np

from musicvid.delivery import captions, mux
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import decoded


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
        "the burned-in lyrics leave them out; the .srt keeps them"
    )
    assert "fire 🔥 and 𓀀" in captions.srt(board)
    assert captions.undrawn_note(lyric_board(["la 中文 la", "ok 😀"])) == ""
    # karaoke: a word with nothing drawable lights nothing up, its time is a wait before the next
    words = captions.word_times(board, None)
    (_, fire_end, _), _, (and_start, and_end, _), _ = words[1]
    wait, fill = round(and_start * 100) - round(fire_end * 100), round(and_end * 100) - round(and_start * 100)
    assert wait > 0 and dialogue(captions.ass_script(board, 512, 288, words))[1].endswith(
        f"fire {{\\k{wait}}}{{\\kf{fill}}}and"
    )


def test_words_typed_into_a_scene_without_lyrics_are_shown_as_the_lyrics_are():
    """An intro's title typed into its storyboard scene: the .srt, the burned-in lyrics and karaoke show it."""
    scenes = [
        Scene(index=0, kind="intro", start=0.0, end=2.0, text="The Lighthouse Song"),
        Scene(index=1, kind="lyric", start=2.0, end=3.0, text="my heart"),
        Scene(index=2, kind="break", start=3.0, end=4.0),
    ]
    board = Storyboard(audio=SongAudio(4.0), language="", scenes=scenes)
    assert captions.srt(board).startswith("1\n00:00:00,000 --> 00:00:02,000\nThe Lighthouse Song\n\n2\n")
    assert dialogue(captions.ass_script(board, 512, 288)) == ["The Lighthouse Song", "my heart"]
    words = captions.word_times(board, None)
    assert sorted(words) == [0, 1] and [word for _, _, word in words[0]] == ["The", "Lighthouse", "Song"]
