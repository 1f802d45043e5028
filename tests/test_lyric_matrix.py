"""The lyric matrix's parts (benchmarks/lyrics.py): the fresh songs it makes, the measure it judges by, and the
docs' tables, which must be the ones its results make."""

import shutil
from pathlib import Path

import pytest

from benchmarks.lyric_table import BEGIN, END, results, tables
from musicvid.lyrics.transcript import Line
from tests.fixtures.fresh_songs import LONG_SECONDS, fresh_song, judged_timing

ROOT = Path(__file__).resolve().parents[1]
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")


def test_the_docs_lyric_tables_are_the_ones_the_results_make():
    page = (ROOT / "docs" / "lyrics.md").read_text()
    shown = page.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == tables(results(ROOT / "benchmarks" / "results")), "python -m benchmarks.lyrics --table --docs"


def test_a_line_counts_where_a_scene_starts_within_half_a_second_of_it_and_no_scene_starts_unsung():
    sung = [(3.0, 6.0, "the morning sun"), (30.0, 33.0, "the quiet town")]
    lines = [Line(2.45, 6.0, "the morning sun"), Line(17.0, 18.0, "an invention"), Line(30.4, 33.0, "the quiet town")]
    judged = judged_timing(lines, 40.0, sung)
    assert judged["errors"] == [None, 0.4] and judged["within"] == 1  # 0.55 s early: not where it is sung
    assert judged["unsung_scenes"] == [2.45, 17.0]  # an early start, and an invention


@needs_espeak
def test_fresh_songs_are_drawn_from_their_seed_in_every_hard_kind(tmp_path):
    again = fresh_song("gaps", 3, tmp_path)
    assert again == fresh_song("gaps", 3, tmp_path) and again != fresh_song("gaps", 4, tmp_path)
    gaps = [b[0] - a[1] for a, b in zip(again.sung, again.sung[1:])]
    assert sorted(round(g) for g in gaps)[-3:] == [10, 17, 25]
    intro = fresh_song("intro", 3, tmp_path)
    assert intro.sung[0][0] == 20.0 and (intro.singer, intro.bpm) != (again.singer, again.bpm)
    refrain = fresh_song("refrain", 3, tmp_path)
    assert [text for *_, text in refrain.sung].count(refrain.sung[-1][2]) == 3
    assert fresh_song("loud", 3, tmp_path).voice_level < 0.5
    long = fresh_song("long", 3, tmp_path)
    assert long.seconds == LONG_SECONDS and long.sung[-1][1] <= LONG_SECONDS - 3
