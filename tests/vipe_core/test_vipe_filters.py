"""The paper's §3.1 filters, rule by rule, at their boundaries."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict

import pytest

from vipe_core.cli import main
from vipe_core.filters import FilterConfig, clean_lines, filter_songs, words
from vipe_core.records import ArtistLyrics, RawSong, read_jsonl


def rich(n: int, tag: str = "x") -> list[str]:
    """n lines of 5 unique words each (rich lines), made unique by `tag`."""
    return [f"the {tag} river runs line{i}" for i in range(n)]


def song(song_id: str, lines: list[str], rank: int = 1, language: str | None = "en") -> RawSong:
    return RawSong(
        song_id=song_id, title=f"T{song_id}", artist="A", lyrics="\n".join(lines), rank=rank, language=language
    )


def run(*songs: RawSong, config: FilterConfig | None = None):
    return filter_songs([ArtistLyrics(artist="A", artist_id="1", songs=list(songs))], config or FilterConfig())


def test_line_with_exactly_two_unique_words_is_kept_and_one_is_dropped():
    removed = Counter()
    kept = clean_lines("love me love me\nyeah yeah yeah\nno", FilterConfig(), removed)
    assert kept == ["love me love me"]
    assert removed["too_few_unique_words"] == 2


def test_line_of_exactly_twenty_words_is_kept_and_twenty_one_dropped():
    twenty = " ".join(f"w{i}" for i in range(20))
    twenty_one = " ".join(f"w{i}" for i in range(21))
    removed = Counter()
    assert clean_lines(f"{twenty}\n{twenty_one}", FilterConfig(), removed) == [twenty]
    assert removed["too_many_words"] == 1


def test_a_line_label_would_refuse_is_dropped_not_kept():
    removed, long = Counter(), " ".join(f"word{n}" for n in range(300))  # (over 1000 characters: label refuses it)
    text = f"the river runs\x00 wild\n{long}\nthe moon is bright"
    assert clean_lines(text, FilterConfig(max_words=100_000), removed) == ["the moon is bright"]
    assert removed == {"no_lyric_line": 2}


def test_words_counts_contractions_once_and_ignores_punctuation():
    assert words("Don't stop, don't STOP!") == ["don't", "stop", "don't", "stop"]


def test_song_with_fifteen_rich_lines_is_kept_and_fourteen_is_dropped():
    padding = ["oh my love"] * 10  # 3 unique words: a kept line, but not a rich one
    kept, summary = run(song("15", rich(15) + padding), song("14", rich(14, "y") + padding, rank=2))
    assert [s.song_id for s in kept] == ["15"]
    assert summary["songs_removed"] == {"too_few_rich_lines": 1}
    assert len(kept[0].lines) == 25


def test_a_line_dropped_for_length_does_not_count_as_rich():
    long_lines = [" ".join(f"w{i}{j}" for j in range(21)) for i in range(2)]
    kept, summary = run(song("1", rich(14) + long_lines))
    assert kept == [] and summary["songs_removed"] == {"too_few_rich_lines": 1}


def test_section_headers_are_stripped_alone_and_inline():
    removed = Counter()
    lines = clean_lines("[Chorus: Someone]\n[Verse 1] the river runs wild tonight\n\n", FilterConfig(), removed)
    assert lines == ["the river runs wild tonight"]
    assert removed["section_header"] == 1
    assert clean_lines("[Chorus] the river", FilterConfig(strip_headers=False), Counter()) == ["[Chorus] the river"]


def test_genius_page_furniture_is_removed():
    removed = Counter()
    text = "12 ContributorsMy Song Lyrics\nthe river runs wild\nYou might also like\nthe moon is bright tonight42Embed"
    assert clean_lines(text, FilterConfig(), removed) == ["the river runs wild", "the moon is bright tonight"]
    assert removed["genius_furniture"] == 2


def test_at_most_fifty_songs_per_artist_in_popularity_order():
    songs = [song(str(i), rich(15, f"s{i}"), rank=i) for i in range(1, 53)]
    kept, summary = run(*reversed(songs))
    assert [s.song_id for s in kept] == [str(i) for i in range(1, 51)]
    assert summary["songs_removed"] == {"over_artist_limit": 2}
    kept, _ = run(*songs, config=FilterConfig(max_songs_per_artist=3))
    assert len(kept) == 3


def test_non_english_and_duplicate_songs_are_dropped():
    kept, summary = run(song("1", rich(15)), song("1", rich(15), rank=2), song("2", rich(15), rank=3, language="es"))
    assert [s.song_id for s in kept] == ["1"]
    assert summary["songs_removed"] == {"duplicate": 1, "not_english": 1}


def test_filter_command_writes_jsonl_and_prints_what_each_rule_removed(tmp_path, capsys):
    lyrics = tmp_path / "lyrics"
    lyrics.mkdir()
    artist = ArtistLyrics("A", "1", [song("1", ["[Intro]", *rich(15), "yeah yeah"]), song("2", rich(3), rank=2)])
    (lyrics / "a.json").write_text(json.dumps(asdict(artist)))
    out = tmp_path / "clean.jsonl"
    assert main(["filter", str(lyrics), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "lines removed by section_header: 1" in printed
    assert "lines removed by too_few_unique_words: 1" in printed
    assert "songs removed by too_few_rich_lines: 1" in printed
    rows = list(read_jsonl(out))
    assert [r["song_id"] for r in rows] == ["1"] and len(rows[0]["lines"]) == 15
    # Options reach the rules.
    assert main(["filter", str(lyrics), "--out", str(out), "--min-rich-lines", "3"]) == 0
    assert len(list(read_jsonl(out))) == 2


def test_filter_of_a_missing_folder_is_one_line_and_exit_code_2(tmp_path, capsys):
    assert main(["filter", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_filter_of_a_file_given_as_its_lyrics_folder_says_it_is_no_folder(tmp_path, capsys):
    """Round 10: `vipe filter dup.jsonl --out dup.jsonl` said the output "lies in the lyrics folder dup.jsonl"."""
    (given := tmp_path / "dup.jsonl").write_text("{}\n")
    assert main(["filter", str(given), "--out", str(given)]) == 2
    assert (
        capsys.readouterr().err == f"vipe filter: {given} is not a folder of lyrics (run `vipe collect` to make one).\n"
    )
    assert given.read_text() == "{}\n"


@pytest.mark.parametrize("theirs", ["my precious notes\n", '{"song_id": "1", "lines": []}\n', "[1, 2]\n"])
def test_filter_replaces_only_a_file_it_wrote_at_its_out(tmp_path, capsys, theirs):
    """Round 11: `vipe filter lyrics --out mynotes.txt` emptied a person's notes, exit 0."""
    (lyrics := tmp_path / "lyrics").mkdir()
    (lyrics / "a.json").write_text(json.dumps(asdict(ArtistLyrics("A", "1", [song("1", rich(3))]))))  # kept: none
    (out := tmp_path / "notes.txt").write_text(theirs)
    assert main(["filter", str(lyrics), "--out", str(out)]) == 2
    said = f"vipe filter: {out} is not a lyrics file vipe wrote; move it away or choose another --out.\n"
    assert capsys.readouterr().err == said and out.read_text() == theirs
    out.unlink()
    for _ in range(2):  # its own (empty: it kept no song), then one with a song, each replaced
        assert main(["filter", str(lyrics), "--out", str(out)]) == 0 and out.read_text() == ""
    assert main(["filter", str(lyrics), "--out", str(out), "--min-rich-lines", "3"]) == 0
    assert main(["filter", str(lyrics), "--out", str(out), "--min-rich-lines", "3"]) == 0
    assert [row["song_id"] for row in read_jsonl(out)] == ["1"]
