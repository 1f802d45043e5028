"""Stage 2, filter: the paper's §3.1 rules, with the authors' defaults.

Per line:  strip section headers ("[Chorus]") and Genius page furniture; drop lines with fewer
           than 2 unique words or more than 20 words.
Per song:  English only; keep a song with at least 15 lines of at least 4 unique words;
           at most 50 songs per artist, in popularity order; each song once.

The result is lyrics.clean.jsonl (one CleanSong a line) and a summary of what each rule removed.
Filtering is cheap and deterministic, so a rerun simply redoes it (the output is replaced atomically).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable

from vipe_core.atomic import records_in
from vipe_core.errors import VipeError
from vipe_core.guards import check_output_kind, refuse_foreign, refuse_overlap
from vipe_core.records import (
    ArtistLyrics,
    CleanSong,
    RawSong,
    line_refusal,
    read_json,
    read_jsonl,
    record_from,
    write_jsonl,
)

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
SECTION_HEADER = re.compile(r"\[[^\]]*\]")
# Text Genius puts around the lyrics: "123 Contributors…Song Lyrics", "You might also like", "45Embed".
PAGE_HEADER = re.compile(r"^\d*\s*Contributors?.*Lyrics", re.IGNORECASE)
EMBED_TAIL = re.compile(r"\d*\s*Embed$")
FURNITURE = {"you might also like", "see live performances", "get tickets as low as"}


@dataclass(frozen=True)
class FilterConfig:
    min_unique_words: int = 2  # per line, inclusive
    max_words: int = 20  # per line, inclusive
    min_rich_lines: int = 15  # per song: lines with at least `rich_line_unique_words` unique words
    rich_line_unique_words: int = 4
    max_songs_per_artist: int = 50
    strip_headers: bool = True
    english_only: bool = True


def words(line: str) -> list[str]:
    return WORD.findall(line.casefold())


def clean_lines(lyrics: str, config: FilterConfig, removed: Counter) -> list[str]:
    """The lines of one song that pass the line rules; `removed` counts the lines each rule dropped."""
    raw = lyrics.splitlines()
    kept: list[str] = []
    for number, line in enumerate(raw):
        if config.strip_headers and SECTION_HEADER.search(line):
            line = SECTION_HEADER.sub(" ", line)
            if not line.strip():
                removed["section_header"] += 1
                continue
        line = " ".join(line.split())
        if number == len(raw) - 1:
            line = EMBED_TAIL.sub("", line).strip()
        if not line:
            continue  # blank lines separate verses; they are not lyrics
        if (number == 0 and PAGE_HEADER.match(line)) or line.casefold() in FURNITURE:
            removed["genius_furniture"] += 1
            continue
        tokens = words(line)
        if len(set(tokens)) < config.min_unique_words:
            removed["too_few_unique_words"] += 1
        elif len(tokens) > config.max_words:
            removed["too_many_words"] += 1
        elif line_refusal(line) is not None:  # (what label refuses: a line over its length, a control character)
            removed["no_lyric_line"] += 1
        else:
            kept.append(line)
    return kept


def filter_songs(
    artists: Iterable[ArtistLyrics], config: FilterConfig = FilterConfig()
) -> tuple[list[CleanSong], dict]:
    """Apply every rule; returns the clean songs and a summary (counts per rule, in and out)."""
    lines_removed: Counter = Counter()
    songs_removed: Counter = Counter()
    seen: set[str] = set()
    clean: list[CleanSong] = []
    totals = Counter()
    for artist in artists:
        kept_for_artist = 0
        for song in sorted(artist.songs, key=lambda s: s.rank or 0):
            totals["songs_in"] += 1
            totals["lines_in"] += sum(1 for line in song.lyrics.splitlines() if line.strip())
            if song.song_id in seen:
                songs_removed["duplicate"] += 1
                continue
            seen.add(song.song_id)
            if config.english_only and song.language not in (None, "en"):
                songs_removed["not_english"] += 1
                continue
            lines = clean_lines(song.lyrics, config, lines_removed)
            rich = sum(1 for line in lines if len(set(words(line))) >= config.rich_line_unique_words)
            if rich < config.min_rich_lines:
                songs_removed["too_few_rich_lines"] += 1
                continue
            if kept_for_artist >= config.max_songs_per_artist:
                songs_removed["over_artist_limit"] += 1
                continue
            kept_for_artist += 1
            clean.append(CleanSong(song_id=song.song_id, title=song.title, artist=song.artist, lines=lines))
    summary = {
        "songs_in": totals["songs_in"],
        "songs_out": len(clean),
        "lines_in": totals["lines_in"],
        "lines_out": sum(len(s.lines) for s in clean),
        "lines_removed": dict(lines_removed),
        "songs_removed": dict(songs_removed),
    }
    return clean, summary


def read_lyrics_dir(path: str | os.PathLike) -> list[ArtistLyrics]:
    """The artist files written by `collect` (sorted by file name, so the result is reproducible)."""
    folder = Path(path)
    files = records_in(folder, "*.json")
    if not files:
        raise VipeError(f"{folder} holds no artist files (*.json) to filter.")
    artists = []
    for file in files:
        data = read_json(file, "the lyrics file")
        if not isinstance(data, dict) or not isinstance(data.get("songs"), list):
            raise VipeError(f"{file} is not an artist lyrics file (it needs a 'songs' list).")
        refusal = f"{file} has a song that is not as collect writes it"
        artist = record_from(ArtistLyrics, data, refusal)
        artist.songs = [record_from(RawSong, song, refusal) for song in artist.songs]
        artists.append(artist)
    return artists


def run_filter(lyrics_dir: str | os.PathLike, out: str | os.PathLike, config: FilterConfig = FilterConfig()) -> dict:
    check_output_kind(out, folder=False)
    if not Path(lyrics_dir).is_dir():  # (before the overlap's check, which would call a file given a folder)
        raise VipeError(f"{lyrics_dir} is not a folder of lyrics (run `vipe collect` to make one).")
    refuse_overlap([("--out", out)], scanned=[("the lyrics folder", lyrics_dir)])
    refuse_foreign(Path(out), filtered_by_vipe, "a lyrics file")
    songs, summary = filter_songs(read_lyrics_dir(lyrics_dir), config)
    write_jsonl(out, songs)
    return summary


def filtered_by_vipe(path: Path) -> bool:
    """Whether `path` holds what `filter` writes, one song a line as CleanSong's fields (none: it kept no song), so that
    a person's file at --out is never replaced (round 11: a file of notes was emptied, exit 0)."""
    names = {field.name for field in fields(CleanSong)}
    return all(isinstance(song, dict) and set(song) == names for song in read_jsonl(path, what="--out"))


def format_summary(summary: dict) -> str:
    rows = [
        f"songs: {summary['songs_in']} in, {summary['songs_out']} kept",
        f"lines: {summary['lines_in']} in, {summary['lines_out']} kept",
    ]
    for rule, count in sorted(summary["lines_removed"].items()):
        rows.append(f"  lines removed by {rule}: {count}")
    for rule, count in sorted(summary["songs_removed"].items()):
        rows.append(f"  songs removed by {rule}: {count}")
    return "\n".join(rows)


__all__ = ["FilterConfig", "clean_lines", "filter_songs", "format_summary", "read_lyrics_dir", "run_filter", "words"]
