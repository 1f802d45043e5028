"""ViPE's input strings, exactly as the released checkpoints were trained."""

from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from musicvid.storyboard.elaborate import scene_contexts
from vipe_core.context import lyric_context, model_input, scene_context

LINES = [f"line {i}" for i in range(10)]


def test_context_7_on_a_song_of_10_lines():
    expected = [
        "line 0",
        "line 0 ; line 1",
        "line 0 ; line 1 ; line 2",
        "line 0 ; line 1 ; line 2 ; line 3",
        "line 0 ; line 1 ; line 2 ; line 3 ; line 4",
        "line 0 ; line 1 ; line 2 ; line 3 ; line 4 ; line 5",
        "line 0 ; line 1 ; line 2 ; line 3 ; line 4 ; line 5 ; line 6",
        "line 0 ; line 1 ; line 2 ; line 3 ; line 4 ; line 5 ; line 6 ; line 7",
        "line 1 ; line 2 ; line 3 ; line 4 ; line 5 ; line 6 ; line 7 ; line 8",
        "line 2 ; line 3 ; line 4 ; line 5 ; line 6 ; line 7 ; line 8 ; line 9",
    ]
    assert [lyric_context(LINES, i, 7) for i in range(10)] == expected
    assert model_input(expected[9], "<|endoftext|>") == f"<|endoftext|>{expected[9]}<|endoftext|>"


def test_context_0_is_the_line_alone():
    assert [lyric_context(LINES, i, 0) for i in range(10)] == LINES
    assert model_input("line 3", "<|endoftext|>") == "<|endoftext|>line 3<|endoftext|>"


def test_scenes_without_words():
    assert scene_context("intro", title="Skyfall", artist="Adele") == "Skyfall by Adele; musical intro"
    assert (
        scene_context("break", title="Thunder", artist="Imagine Dragons", previous_lines=LINES[:3], context_size=3)
        == "Thunder by Imagine Dragons; line 1 ; line 2 ; musical break"
    )
    assert (
        scene_context("outro", title="T", artist="A", previous_lines=LINES, context_size=0) == "T by A; musical outro"
    )


def test_contexts_stay_within_the_length_the_model_was_trained_on():
    # trained on a line and the 7 before it: 8 places, of which the song and "musical …" take two here
    for kind in ("break", "outro"):
        context = scene_context(kind, title="T", artist="A", previous_lines=LINES, context_size=7)
        assert context == f"T by A; line 4 ; line 5 ; line 6 ; line 7 ; line 8 ; line 9 ; musical {kind}"
        assert len(context.replace("; ", " ; ").split(" ; ")) == 8
    assert len(lyric_context(LINES, 9, 7).split(" ; ")) == 8


def test_vipe_reads_lines_without_sentence_punctuation():
    sung = ["Hello, darkness, my old friend.", "I've come to talk with you again!", "Is it—really—you?"]
    assert (
        lyric_context(sung, 2, 7)
        == "Hello darkness my old friend ; I've come to talk with you again ; Is it really you"
    )
    board = Storyboard(
        SongAudio(3),
        "Song",
        "Band",
        "en",
        scenes=[
            Scene(0, "lyric", 0, 1, "Hola, amigo.", text_en="Hello, friend."),
            Scene(1, "lyric", 1, 2, "Rock-and-roll, tonight!"),
            Scene(2, "outro", 2, 3),
        ],
    )
    contexts = scene_contexts(board, 7)
    assert contexts == [
        "Hello friend",
        "Hello friend ; Rock-and-roll tonight",
        "Song by Band; Hello friend ; Rock-and-roll tonight ; musical outro",
    ]
    assert not any(mark in c for c in contexts for mark in ".,!?")
    assert board.scenes[0].text == "Hola, amigo."  # captions keep the lyric as sung


def test_storyboard_contexts_use_only_lines_sung_before():
    scenes = [
        Scene(0, "intro", 0, 1),
        Scene(1, "lyric", 1, 2, "first"),
        Scene(2, "lyric", 2, 3, "zweite", text_en="second"),
        Scene(3, "break", 3, 4),
        Scene(4, "lyric", 4, 5, "third"),
        Scene(5, "outro", 5, 6),
    ]
    board = Storyboard(SongAudio(6), "Song", "Band", scenes=scenes)
    assert scene_contexts(board, 7) == [
        "Song by Band; musical intro",
        "first",
        "first ; second",
        "Song by Band; first ; second ; musical break",
        "first ; second ; third",
        "Song by Band; first ; second ; third ; musical outro",
    ]


def test_elaborations_are_cleaned_of_special_tokens_and_broken_characters():
    from vipe_core.inference import clean_elaboration

    raw = " a lighthouse<|endoftext|> in the \ufffd\ufffdrain\x1a ;  , "
    assert clean_elaboration(raw) == "a lighthouse in the rain"
