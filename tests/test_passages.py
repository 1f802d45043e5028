"""Passages without words cut with the music (musicvid.storyboard.passages): where it changes first, then at least every
few bars on a bar line at the tempo librosa hears; each new scene its own mood, prompt and seed, shown in the
storyboard's table and on the contact sheet."""

import random
import warnings

import numpy as np
import pytest

from musicvid.core.audio import SAMPLE_RATE, find_beats, load_audio
from musicvid.lyrics.transcript import Line
from musicvid.review.sheet import cell_texts
from musicvid.storyboard.board import load_storyboard
from musicvid.storyboard.music import HOP, SongSound
from musicvid.storyboard.passages import MIN_CUT_SECONDS, Bars, cut_with_the_music, in_bars
from musicvid.storyboard.scenes import scenes_from_lines
from tests.fixtures.songs import band, write_song
from tests.helpers import run

GRID = Bars(tuple(0.3 + 2.0 * n for n in range(40)), 2.0)  # 120 bpm, the first bar line at 0.3 s


def check_cut(scenes, bars: Bars, most: int, duration: float) -> None:
    """The scenes tile the song; no scene without words lasts more than `most` bars (as the bar lines count
    them), and every cut inside a passage is on a bar line."""
    assert scenes[0].start == 0 and scenes[-1].end == pytest.approx(duration)
    assert all(a.end == b.start for a, b in zip(scenes, scenes[1:]))
    for before, scene in zip(scenes, scenes[1:]):
        if scene.kind != "lyric" and scene.kind == before.kind:
            assert scene.cut in ("music", "bars") and min(abs(scene.start - t) for t in bars.lines) < 1e-9
    assert all(bars.counted(s.end) - bars.counted(s.start) <= most + 1e-6 for s in scenes if s.kind != "lyric")


def test_a_passage_is_cut_where_the_music_changes_first_then_on_bar_lines():
    scenes = scenes_from_lines([Line(31.0, 34.0, "a line"), Line(36.0, 39.0, "and another")], 60.0)
    cut = cut_with_the_music(scenes, [13.0, 50.1], GRID, 4)
    check_cut(cut, GRID, 4, 60.0)
    assert [s.text for s in cut if s.kind == "lyric"] == ["a line", "and another"]  # the lines stay as they are
    intro = [s for s in cut if s.kind == "intro"]
    # the music changes at 13 s: the cut moves onto the bar line at 12.3 s; the parts on either side in bars
    assert [s.start for s in intro if s.cut == "music"] == [pytest.approx(12.3)]
    assert [s.cut for s in intro] == [None, "bars", "music", "bars", "bars"]
    assert [s.cut for s in cut if s.kind == "outro"] == [None, "bars", "music", "bars"]
    calmer = cut_with_the_music(scenes, [13.0, 50.1], GRID, 8)
    check_cut(calmer, GRID, 8, 60.0)
    assert len(calmer) < len(cut)


def test_a_change_near_a_passages_end_and_a_short_passage_make_no_flash():
    scenes = scenes_from_lines([Line(9.0, 10.0, "a line")], 15.0)
    cut = cut_with_the_music(scenes, [9.5 - MIN_CUT_SECONDS / 2], GRID, 4)
    assert [(s.kind, s.cut) for s in cut] == [("intro", None), ("intro", "bars"), ("lyric", None), ("outro", None)]
    assert all(s.duration >= 0.5 * GRID.seconds for s in cut)


def test_without_bar_lines_a_passage_is_split_evenly():
    assert in_bars(0.0, 20.0, Bars((), 2.0), 4) == [(0.0, 20 / 3), (20 / 3, 40 / 3), (40 / 3, 20.0)]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_bars_are_those_of_the_tempo_played_and_begin_where_the_chords_change(seed):
    bpm = random.Random(seed).uniform(85.0, 155.0)
    samples = band(40.0, seed, bpm=bpm, chord_beats=4).astype(np.float32)
    bars = Bars.of(find_beats(samples), SongSound.of(samples).chroma, HOP / SAMPLE_RATE, 40.0)
    bar = 4 * 60.0 / bpm
    assert bars.seconds == pytest.approx(bar, rel=0.03)
    # a chord a bar, from 0 s: each bar line within a tenth of a bar of one
    assert all(abs(t / bar - round(t / bar)) < 0.1 for t in bars.lines)


@pytest.mark.slow
def test_an_instrumental_of_15_s_is_several_scenes_each_with_its_own_prompt_and_seed(capsys, tmp_path):
    song = write_song(tmp_path / "song.wav", band(15.0, 3, bpm=128.0), [], 0.0)
    samples = load_audio(song).samples
    bars = Bars.of(find_beats(samples), SongSound.of(samples).chroma, HOP / SAMPLE_RATE, 15.0)
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "--workdir", tmp_path / "w", "-q")
    assert code == 0, err
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    scenes = board.scenes
    assert len(scenes) >= 2
    check_cut(scenes, bars, 4, board.duration)
    assert len({s.prompt for s in scenes}) == len(scenes) and len({s.seed for s in scenes}) == len(scenes)
    assert all(s.mood for s in scenes)
    cuts = [row for row in out.splitlines() if "  bars  " in row]  # the table's cut column
    assert len(cuts) == sum(s.cut == "bars" for s in scenes) > 0
    assert cell_texts(scenes[1], None)["head"].endswith("✂ bars")  # the contact sheet marks the cut


@pytest.mark.parametrize("seconds", [0.05, 1.5])
def test_a_song_shorter_than_librosas_windows_is_heard_without_a_warning_to_the_person(seconds):
    samples = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (librosa's "n_fft=2048 is too large" reached the person at 0.05 s)
        sound, beats = SongSound.of(samples), find_beats(samples)
    assert sound.rms.size == sound.centroid.size == sound.chroma.shape[1] >= 1 and beats.onset.size >= 1
