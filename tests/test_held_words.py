"""Words Whisper held over what it did not hear, from fresh generated songs (tiny.en, faster-whisper; the songs'
hearings as recorded, rounded): where such a word is sung, where its line ends, and what it says of Silero
(musicvid.lyrics.singing). Each line sung starts a lyric line within 0.5 s of where it was sung."""

from musicvid.lyrics.singing import Voice
from musicvid.lyrics.transcribe import sung_lines
from musicvid.lyrics.transcript import Line, Word


def heard(*segments: list[tuple[str, float, float, float]]) -> list[Line]:
    return [
        Line(words[0][1], words[-1][2], " ".join(w[0] for w in words), words=[Word(s, e, t, p) for t, s, e, p in words])
        for words in segments
    ]


def starts(segments: list[Line], stretches: list[tuple[float, float]], duration: float) -> list[float]:
    return [round(line.start, 2) for line in sung_lines(segments, Voice(stretches, duration), duration)]


def found(sung: list[float], lines: list[float]) -> list[bool]:
    return [any(abs(start - at) <= 0.5 for start in lines) for at in sung]


def test_a_segments_last_word_held_over_the_next_line_is_sung_where_it_begins():
    # loud-120: "of" (Whisper's "but I am out of" for "behind the mountain") held 21.02-27.6 s; the next line, heard
    # again in its stretch (21.92-24.61 s), ran on from "but" in one line when "of" was fitted there
    segments = heard(
        [("Your", 11.72, 13.10, 0.906), ("voice", 13.10, 13.54, 0.787), ("is", 13.54, 13.88, 0.991)]
        + [("running", 13.88, 14.28, 0.907), ("through", 14.28, 14.60, 0.99), ("the", 14.60, 14.92, 0.979)]
        + [("trees", 14.92, 16.24, 0.999), ("The", 16.24, 18.50, 0.938), ("ocean", 18.50, 18.86, 0.919)]
        + [("is", 18.86, 19.40, 0.985), ("rising,", 19.40, 19.58, 0.999), ("but", 19.96, 20.12, 0.692)]
        + [
            ("I", 20.12, 20.32, 0.53),
            ("am", 20.32, 20.68, 0.555),
            ("out", 20.68, 21.02, 0.284),
            ("of", 21.02, 27.60, 0.207),
        ],
        [("wind", 22.14, 22.50, 0.212), ("is", 22.50, 22.86, 0.937), ("breaking", 22.86, 23.34, 0.939)]
        + [("through", 23.34, 23.76, 0.353), ("the", 23.76, 24.08, 0.934), ("trees", 24.08, 24.52, 0.997)],
        [("I", 27.60, 28.04, 0.243)],
    )
    stretches = [(12.77, 15.36), (18.27, 21.47), (21.92, 24.61), (25.02, 28.22)]
    assert found([12.69, 18.19, 21.86, 24.99], starts(segments, stretches, 33.1)) == [True] * 4


def test_a_line_after_one_whose_last_word_whisper_crushed_into_its_stretch_begins_with_the_voice():
    # long-120: "the height is", its "is" given no time at 140.68 s, in the stretch the next line is sung in from 140.03 s
    segments = heard(
        [("river", 123.66, 124.06, 0.986), ("is", 124.06, 124.34, 0.989), ("fading", 124.34, 124.64, 0.18)]
        + [("through", 124.64, 125.00, 0.982), ("the", 125.00, 127.30, 0.931), ("trees,", 127.30, 127.30, 0.997)]
        + [("the", 130.74, 130.86, 0.832), ("city", 130.86, 131.22, 0.972), ("is", 131.22, 131.56, 0.97)]
        + [("rising", 131.56, 131.76, 0.997), ("on", 131.76, 132.00, 0.735), ("the", 132.00, 132.26, 0.995)]
        + [("quiet", 132.26, 132.68, 0.993), ("town,", 132.68, 133.78, 0.996), ("the", 134.80, 134.92, 0.836)]
        + [("height", 134.92, 140.68, 0.972), ("is", 140.68, 140.68, 0.998)],
        [("The", 140.68, 140.68, 0.053), ("sky", 140.68, 140.98, 0.851), ("is", 140.98, 141.16, 0.963)]
        + [("running", 141.16, 141.50, 0.99), ("through", 141.50, 141.78, 0.985), ("the", 141.78, 142.04, 0.969)]
        + [("trees.", 142.04, 142.50, 0.998)],
    )
    stretches = [(123.07, 125.6), (130.75, 133.12), (134.69, 137.15), (140.1, 142.43)]
    assert found([123.06, 130.69, 134.62, 140.03], starts(segments, stretches, 150.0)) == [True] * 4


def test_a_word_held_over_a_band_leaves_silero_trusted_over_the_lines_either_side():
    # gaps-117: "rain" held 7.5 s and "The" 3 s over 10 s of band, both lines in one segment after 24 s of band (and
    # "head." held 17 s before): Silero, weighed against the segments' spans, seemed deaf, and the lines were one
    segments = heard(
        [("this", 38.66, 38.94, 0.195), ("world", 38.94, 39.20, 0.211), ("inside", 39.20, 39.80, 0.883)]
        + [("my", 39.80, 40.34, 0.977), ("head.", 40.34, 57.46, 0.51)],
        [("The", 64.98, 65.98, 0.43), ("city", 65.98, 66.24, 0.982), ("is", 66.24, 66.60, 0.803)]
        + [("dancing", 66.60, 67.14, 0.89), ("beneath", 67.14, 67.64, 0.96), ("the", 67.64, 67.96, 0.882)]
        + [("rain", 67.96, 75.42, 0.965), ("The", 75.42, 78.54, 0.142), ("lonely", 78.54, 78.92, 0.986)]
        + [("bird", 78.92, 79.46, 0.882), ("keeps", 79.46, 79.96, 0.694), ("on", 79.96, 80.32, 0.987)]
        + [("dreaming", 80.32, 80.66, 0.535), ("around", 80.66, 81.28, 0.984), ("the", 81.28, 81.64, 0.971)]
        + [("fire", 81.64, 82.14, 0.969)],
    )
    stretches = [(38.05, 40.61), (65.66, 68.35), (78.27, 82.08)]
    assert found([37.98, 65.60, 78.26], starts(segments, stretches, 86.0)) == [True] * 3
