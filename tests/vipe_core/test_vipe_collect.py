"""collect: the real lyricsgenius client, talking to a fake transport instead of Genius."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from requests.adapters import BaseAdapter

from vipe_core.cli import main
from vipe_core.collect import Collector, artist_file, collect, read_artists

SONGS = [  # the artist's songs, most popular first, as Genius lists them
    {"id": 11, "title": "First", "language": "en"},
    {"id": 12, "title": "Featured", "language": "en", "primary_artist": {"id": 99}},
    {"id": 13, "title": "Premiere", "language": "fr"},
    {"id": 14, "title": "Unfinished", "language": "en", "lyrics_state": "unreleased"},
    {"id": 15, "title": "Second"},  # no language in the listing: the song's own record says "en"
    {"id": 16, "title": "Third", "language": "en"},
]


class FakeGenius(BaseAdapter):
    """Answers the requests lyricsgenius makes; `fail_first` paths answer 500 once."""

    def __init__(self, fail_first: set[str] = frozenset()):
        super().__init__()
        self.calls: list[str] = []
        self.fail_first = set(fail_first)

    def send(self, request, **kwargs):
        url = urlparse(request.url)
        self.calls.append(url.path)
        if url.path in self.fail_first:
            self.fail_first.discard(url.path)
            return self._response(request, 500, {"meta": {"status": 500}})
        if url.netloc == "genius.com" and url.path == "/api/search/artist":
            query = parse_qs(url.query)["q"][0]
            hits = [{"result": {"id": 98, "name": "Test Artist Tribute"}}, {"result": {"id": 7, "name": "Test Artist"}}]
            return self._response(
                request, 200, {"response": {"sections": [{"type": "artist", "hits": hits}]}} if query else {}
            )
        if url.path == "/artists/7/songs":
            assert parse_qs(url.query)["sort"] == ["popularity"]
            songs = [
                {
                    "lyrics_state": "complete",
                    "instrumental": False,
                    "primary_artist": {"id": 7},
                    "url": f"https://genius.com/song-{s['id']}-lyrics",
                    **s,
                }
                for s in SONGS
            ]
            page = int(parse_qs(url.query).get("page", ["1"])[0])
            return self._response(
                request,
                200,
                {"response": {"songs": songs[(page - 1) * 3 : page * 3], "next_page": page + 1 if page < 2 else None}},
            )
        if url.path.startswith("/songs/"):
            return self._response(
                request, 200, {"response": {"song": {"id": int(url.path.split("/")[-1]), "language": "en"}}}
            )
        if url.netloc == "genius.com" and url.path.startswith("/song-"):
            number = url.path.split("-")[1]
            html = (
                f'<html><body><div data-lyrics-container="true">[Verse]<br/>line one of {number}<br/>'
                f"line two of {number}</div></body></html>"
            )
            return self._response(request, 200, html)
        return self._response(request, 404, {"meta": {"status": 404}})

    @staticmethod
    def _response(request, status, body):
        response = requests.Response()
        response.status_code = status
        response._content = (body if isinstance(body, str) else json.dumps(body)).encode()
        response.headers["Content-Type"] = "text/html" if isinstance(body, str) else "application/json"
        response.url = request.url
        response.request = request
        return response

    def close(self):
        pass


def genius_with(adapter: FakeGenius):
    import lyricsgenius

    genius = lyricsgenius.Genius("fake-token", sleep_time=0, retries=0)
    genius._session.mount("https://", adapter)
    return genius


def test_collect_keeps_the_artists_own_english_songs_in_popularity_order(tmp_path):
    adapter = FakeGenius()
    tally = collect(["Test Artist"], tmp_path, genius=genius_with(adapter), max_songs=3, delay=0, progress=False)
    data = json.loads(artist_file(tmp_path, "Test Artist").read_text())
    assert data["artist"] == "Test Artist" and data["artist_id"] == "7"
    assert [(s["song_id"], s["rank"]) for s in data["songs"]] == [("11", 1), ("15", 2), ("16", 3)]
    assert data["songs"][0]["lyrics"] == "[Verse]\nline one of 11\nline two of 11"
    assert tally["collected"] == 1 and tally["songs"] == 3
    assert tally["not_english"] == 1 and tally["not_primary_artist"] == 1 and tally["no_lyrics"] == 1


def test_an_artist_with_a_file_is_not_asked_for_again(tmp_path):
    adapter = FakeGenius()
    collect(["Test Artist"], tmp_path, genius=genius_with(adapter), max_songs=2, delay=0, progress=False)
    calls = len(adapter.calls)
    tally = collect(["Test Artist"], tmp_path, genius=genius_with(adapter), max_songs=2, delay=0, progress=False)
    assert len(adapter.calls) == calls and tally["already_done"] == 1


def test_a_failing_request_is_retried_after_a_pause():
    adapter = FakeGenius(fail_first={"/artists/7/songs"})
    pauses = []
    collector = Collector(genius_with(adapter), max_songs=1, delay=0.25, backoff=3.0, sleep=pauses.append)
    songs = collector.collect_artist("Test Artist").songs
    assert [s.song_id for s in songs] == ["11"]
    assert adapter.calls.count("/artists/7/songs") == 2
    assert 3.0 in pauses  # the backoff after the 500
    assert all(p <= 0.25 for p in pauses if p != 3.0)  # the polite pause between requests


def test_collect_without_a_token_is_one_clear_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GENIUS_ACCESS_TOKEN", raising=False)
    (tmp_path / "artists.txt").write_text("# my artists\nTest Artist\n\n")
    assert read_artists(tmp_path / "artists.txt") == ["Test Artist"]
    assert main(["collect", "--artists", str(tmp_path / "artists.txt"), "--out", str(tmp_path / "lyrics" / "a")]) == 2
    err = capsys.readouterr().err
    assert "GENIUS_ACCESS_TOKEN" in err and err.count("\n") == 1
    assert not (tmp_path / "lyrics").exists()  # (refused before the folder, and its lock, are made)


@pytest.mark.parametrize("content", ["", "# only a comment\n"])
def test_an_empty_artist_list_is_refused(tmp_path, capsys, content):
    (tmp_path / "artists.txt").write_text(content)
    assert main(["collect", "--artists", str(tmp_path / "artists.txt")]) == 2
    assert "names no artist" in capsys.readouterr().err
