"""Stage 1, collect: the English lyrics of each artist's most popular songs, from Genius.

One file per artist (lyrics/<artist>.json, an ArtistLyrics); an artist whose file exists is
skipped, so a rerun continues where a killed one stopped. Requests go through the `lyricsgenius`
client with a pause between them and retries with exponential backoff.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from vipe_core.atomic import name_of, remove_temporaries
from vipe_core.bars import progress_bar
from vipe_core.errors import StageError, VipeError
from vipe_core.guards import check_output_kind, hold_folder
from vipe_core.records import ArtistLyrics, RawSong, read_text, write_json

TOKEN_ENV = "GENIUS_ACCESS_TOKEN"
log = logging.getLogger(__name__)


def read_artists(path: str | os.PathLike) -> list[str]:
    """Artist names, one a line; blank lines and lines starting with '#' are ignored."""
    text = read_text(path, "the artist list")
    names = [line.strip() for line in text.splitlines()]
    names = list(dict.fromkeys(n for n in names if n and not n.startswith("#")))
    if not names:
        raise VipeError(f"the artist list {path} names no artist (one name a line).")
    return names


def artist_file(out_dir: str | os.PathLike, artist: str) -> Path:
    slug = re.sub(r"[^\w.-]+", "_", artist.strip().lower()).strip("._") or "artist"
    return Path(out_dir) / f"{name_of(slug, artist)}.json"


def make_genius(token: str | None = None, *, timeout: float = 15.0):
    """A `lyricsgenius.Genius` client; the token comes from the argument or GENIUS_ACCESS_TOKEN."""
    import lyricsgenius

    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise VipeError(f"collect needs a Genius API token: create one at genius.com/api-clients and set {TOKEN_ENV}.")
    # Pauses and retries are ours (Collector), so the client makes exactly one attempt per call.
    return lyricsgenius.Genius(token, timeout=timeout, sleep_time=0, retries=0, remove_section_headers=False)


def _normalise(name: str) -> str:
    return re.sub(r"\W+", " ", name).strip().casefold()


class Collector:
    """Fetches one artist's songs at a time, politely: at most one request every `delay` seconds."""

    def __init__(
        self,
        genius,
        *,
        max_songs: int = 50,
        delay: float = 0.5,
        retries: int = 4,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.genius = genius
        self.max_songs = max_songs
        self.delay = delay
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self._last_request = float("-inf")
        self.skipped = {"not_english": 0, "no_lyrics": 0, "not_primary_artist": 0}

    def _call(self, what: str, fn, *args, **kwargs):
        for attempt in range(self.retries + 1):
            wait = self.delay - (time.monotonic() - self._last_request)
            if wait > 0:
                self.sleep(wait)
            self._last_request = time.monotonic()
            try:
                return fn(*args, **kwargs)
            # lyricsgenius reports failures as requests errors, AssertionError (an unexpected HTTP
            # status) and the like; all of them are worth another try after a pause.
            except Exception as error:  # noqa: BLE001
                if attempt == self.retries:
                    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                    raise StageError(f"Genius kept failing on {what}: {first_line[:200]}") from error
                pause = self.backoff * 2**attempt
                log.warning("Genius failed on %s (%s); retrying in %.1f s", what, type(error).__name__, pause)
                self.sleep(pause)

    def find_artist(self, name: str) -> dict | None:
        """The Genius artist whose name matches `name` (the first hit when none matches exactly)."""
        response = self._call(f"the search for {name!r}", self.genius.search_artists, name, per_page=5)
        hits = [hit["result"] for section in response.get("sections", []) for hit in section.get("hits", [])]
        for artist in hits:
            if _normalise(artist.get("name", "")) == _normalise(name):
                return artist
        return hits[0] if hits else None

    def collect_artist(self, name: str) -> ArtistLyrics | None:
        artist = self.find_artist(name)
        if artist is None:
            return None
        artist_id = artist["id"]
        result = ArtistLyrics(artist=artist["name"], artist_id=str(artist_id))
        page = 1
        while page and len(result.songs) < self.max_songs:
            listing = self._call(
                f"the song list of {artist['name']!r}",
                self.genius.artist_songs,
                artist_id,
                per_page=50,
                page=page,
                sort="popularity",
            )
            for info in listing.get("songs", []):
                if len(result.songs) >= self.max_songs:
                    break
                song = self._song(info, artist_id, artist["name"], rank=len(result.songs) + 1)
                if song is not None:
                    result.songs.append(song)
            page = listing.get("next_page")
        return result

    def _song(self, info: dict, artist_id, artist_name: str, rank: int) -> RawSong | None:
        if (info.get("primary_artist") or {}).get("id", artist_id) != artist_id:
            self.skipped["not_primary_artist"] += 1  # a feature on someone else's song
            return None
        if info.get("lyrics_state", "complete") != "complete" or info.get("instrumental"):
            self.skipped["no_lyrics"] += 1
            return None
        language = info.get("language")
        if language is None:  # not in the listing: ask for the song's full record
            language = self._call(f"song {info['id']}", self.genius.song, info["id"])["song"].get("language")
        if language not in ("en", None):
            self.skipped["not_english"] += 1
            return None
        lyrics = self._call(f"the lyrics of {info.get('title')!r}", self.genius.lyrics, song_url=info["url"])
        if not lyrics or not lyrics.strip():
            self.skipped["no_lyrics"] += 1
            return None
        return RawSong(
            song_id=str(info["id"]),
            title=info.get("title", ""),
            artist=artist_name,
            lyrics=lyrics,
            rank=rank,
            url=info.get("url", ""),
            language=language,
        )


def collect(
    artists: list[str],
    out_dir: str | os.PathLike,
    *,
    genius=None,
    token: str | None = None,
    max_songs: int = 50,
    delay: float = 0.5,
    retries: int = 4,
    backoff: float = 2.0,
    progress: bool = True,
) -> dict[str, int]:
    """Write lyrics/<artist>.json for every artist that has none yet; returns a tally.

    The Genius client (`genius`, else one made with `token` or GENIUS_ACCESS_TOKEN) is only needed
    when some artist is still to be collected.
    """
    out_dir = Path(out_dir)
    check_output_kind(out_dir, folder=True)
    if genius is None and not all(artist_file(out_dir, a).exists() for a in artists):
        genius = make_genius(token)  # (a missing token refused before the folder and its lock are made)
    with hold_folder(out_dir):  # one run per folder: two would fetch (and pay for) the same artists
        remove_temporaries(out_dir)  # a killed run's: `filter` reads this folder
        todo = [a for a in artists if not artist_file(out_dir, a).exists()]
        tally = {"artists": len(artists), "already_done": len(artists) - len(todo), "collected": 0, "not_found": 0}
        tally["songs"] = 0
        if not todo:
            return tally
        collector = Collector(
            genius or make_genius(token), max_songs=max_songs, delay=delay, retries=retries, backoff=backoff
        )
        for name in progress_bar(todo, desc="collect", unit="artist", disable=not progress):
            result = collector.collect_artist(name)
            if result is None:
                tally["not_found"] += 1
                log.warning("no Genius artist found for %r", name)
                continue
            write_json(artist_file(out_dir, name), asdict(result))
            tally["collected"] += 1
            tally["songs"] += len(result.songs)
        tally.update(collector.skipped)
        return tally
