"""The song's form read from the music, where too few lines are recognized to give it: a generated song of
two contrasting parts played twice between a calm intro and outro, and a band's recording (Debian's
fretsonfire-songs-muldjord, where it is installed)."""

import itertools

import numpy as np
import pytest

from musicvid.core.audio import load_audio
from musicvid.lyrics.transcript import Line
from musicvid.storyboard.form import mark_form
from musicvid.storyboard.scenes import scenes_from_lines
from tests.fixtures.recordings import SUNG, mix
from tests.fixtures.songs import MINOR, RATE, band

CALM = dict(roots=(110.0, 87.3), chord=MINOR, drums=0.0)
VERSE = dict(roots=(110.0, 87.3, 130.8, 98.0), chord_beats=4, drums=0.3)
CHORUS = dict(roots=(146.8, 164.8, 123.5, 185.0), chord_beats=4, drums=1.0)
PARTS = [
    ("intro", 10.0, CALM),
    ("verse", 16.0, VERSE),
    ("chorus", 16.0, CHORUS),
    ("verse", 16.0, VERSE),
    ("chorus", 16.0, CHORUS),
    ("outro", 10.0, CALM),
]
PART_STARTS = np.cumsum([0.0] + [seconds for _, seconds, _ in PARTS[:-1]])


@pytest.fixture(scope="module")
def two_parts_twice() -> np.ndarray:
    return np.concatenate([band(seconds, seed=n, **sound) for n, (_, seconds, sound) in enumerate(PARTS)]).astype(
        np.float32
    )


def test_an_instrumental_is_cut_and_named_where_its_music_changes(two_parts_twice):
    scenes = scenes_from_lines([], two_parts_twice.size / RATE)  # five equal scenes of 16.8 s, all "intro"
    scenes = mark_form(scenes, two_parts_twice, bars_per_scene=4)
    # cut where the part changes, on a bar line; within a part, at least every 4 bars (8 s at 120 bpm)
    assert np.allclose([s.start for s in scenes if s.cut == "music"], PART_STARTS[1:], atol=0.6)
    assert all(s.duration <= 8.0 * 1.02 for s in scenes) and len(scenes) == 12
    part = [int(np.searchsorted(PART_STARTS, s.start + 0.6, side="right")) - 1 for s in scenes]
    assert [s.section for s in scenes] == [PARTS[p][0] for p in part]
    chorus = [s.motif for s in scenes if s.section == "chorus"]
    assert chorus == ["chorus-1", "chorus-2"] * 2  # the chorus returns to its pictures, in order
    assert all(s.mood for s in scenes)


def test_a_persons_storyboard_keeps_its_scenes_and_takes_the_sections_of_the_music(two_parts_twice):
    scenes = scenes_from_lines([], two_parts_twice.size / RATE)  # as a person's --storyboard may be: no prompts
    planned = [(s.start, s.end) for s in scenes]
    scenes = mark_form(scenes, two_parts_twice)
    assert [(s.start, s.end) for s in scenes] == planned
    sections = [s.section for s in scenes]
    assert sections[0] == "intro" and sections[-1] == "outro" and {"verse", "chorus"} <= set(sections)


def test_a_few_recognized_lines_take_the_section_of_the_music_they_are_sung_over(two_parts_twice):
    line = Line(60.0, 63.0, "hold on to the light tonight")  # in the second chorus
    scenes = scenes_from_lines([line], two_parts_twice.size / RATE)
    scenes = mark_form(scenes, two_parts_twice, bars_per_scene=4)
    lyric = next(s for s in scenes if s.kind == "lyric")
    assert lyric.section == "chorus" and lyric.motif is None  # its own picture: the words are its own
    # the intro before the line is cut where the music changes (not 4 s before the line: a scene lasts)
    before = [s.start for s in scenes if s.end <= lyric.start and s.cut == "music"]
    assert np.allclose(before, PART_STARTS[1:4], atol=0.6)
    sections = [section for section, _ in itertools.groupby(s.section for s in scenes)]
    assert sections == ["intro", "verse", "chorus", "verse", "chorus", "outro"]
    first_chorus = [s.motif for s in scenes if s.section == "chorus" and s.end <= PART_STARTS[3] + 0.6]
    assert first_chorus == ["chorus-1", "chorus-2"]


@pytest.mark.skipif(
    not (SUNG["chaos_god"] / "song.ogg").is_file(), reason="fretsonfire-songs-muldjord is not installed"
)
def test_a_band_recording_without_recognized_lines_is_no_one_section_from_end_to_end(tmp_path):
    recording = mix(SUNG["chaos_god"], tmp_path / "chaos_god.wav", 0, 90)  # the band with its guitar: 90 s
    audio = load_audio(recording)
    scenes = scenes_from_lines([], audio.info.duration)
    scenes = mark_form(scenes, audio.samples, bars_per_scene=4)
    sections = [s.section for s in scenes]
    changes = [s.start for s in scenes if s.cut == "music"]
    assert sections[0] == "intro" and changes[0] == pytest.approx(10.0, abs=1.0)  # its quiet opening
    assert len(changes) > 3 and len(set(sections)) >= 3  # cut where the music changes
    chorus_runs = [i for i, s in enumerate(sections) if s == "chorus" and (i == 0 or sections[i - 1] != "chorus")]
    assert len(chorus_runs) >= 2 and len({scenes[i].motif for i in chorus_runs}) == 1  # the chorus comes back
