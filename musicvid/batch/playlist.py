"""A batch's playlist, read: an M3U/M3U8 playlist, a folder of audio files or a CSV, as one Entry per
row, and a Job of each (musicvid.batch.command plans and renders them; musicvid.batch.names names their videos).

A playlist is refused, before any job is made of it, beyond MAX_ROWS rows or MAX_PLAYLIST_BYTES: each row is a
render of minutes on a GPU, so a bigger one is a mistake or is better split into several batches. A folder's or an
M3U's song takes the timed lyrics beside it (beside_lyrics); what a folder holds that is no song of it is said in a
line (folder_notes)."""

from __future__ import annotations

import csv
import errno
import io
import itertools
import logging
import os
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

from musicvid.batch.folder import beside_lyrics, counted, folder_notes, listing_of
from musicvid.core.errors import UserError
from musicvid.core.files import check_file, check_not_stream, is_url
from musicvid.core.paths import printable, resolved, shown
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest, inputs_of
from musicvid.storyboard.board import Storyboard, load_storyboard

log = logging.getLogger("musicvid")

# A Windows drive's or network share's path (`C:\Music\a.mp3`, `\\nas\music`; a file:/// URL's `/C:/...`).
WINDOWS_PATH = re.compile(r"/?[A-Za-z]:[\\/]|\\\\")
PLAYLIST_SUFFIXES = {".m3u", ".m3u8"}
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16's byte order marks, little- and big-endian
NUL_SHARE = 8  # a file whose every 8th byte or more is NUL is no text: UTF-16 (ASCII in it: every 2nd) or binary
# nor one with 8 or more control bytes (not tab or line end), every 32nd byte or more (random bytes: 1 in 10)
CONTROL_SHARE, CONTROLS = 32, bytes(set(range(32)) - {9, 10, 13})
# An M3U's directives (#EXTM3U, #EXTINF, #EXTGRP, #EXT-X-..., #PLAYLIST): any other `#` line is a comment, or a song
# whose name starts with `#` (`#9 Dream.mp3`) where it names a file beside the playlist (read_m3u).
DIRECTIVE = re.compile(r"#(EXT|PLAYLIST)")
# A row is minutes of a GPU: 1,000 rows are days of one GPU, and a longer list likelier a mistake (a whole library).
MAX_ROWS = 1000
# MAX_ROWS rows of long paths and every per-song column take well under this; a bigger file is not read.
MAX_PLAYLIST_BYTES = 16 * 1024 * 1024
NAMED_COLUMNS = ("title", "artist", "output")  # a CSV's columns besides path that are no setting
NAME_MAX, MAX_PATH_BYTES = 255, 4096  # a file name's and a path's most bytes on Linux's file systems


@dataclass
class Entry:
    """One song of a playlist: where it is, and what the playlist says about it."""

    path: Path
    title: str | None = None
    artist: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)  # CSV column -> text, as written
    output: str | None = None  # the CSV's output cell: the video's file name inside -o
    lyrics_beside: str | None = None  # a folder's or an M3U's row: its lyrics cell, the file beside its song
    refused: str | None = None  # why the playlist's line names no song on this machine (its row fails at its turn)
    written: str | None = None  # such a line's song as written (a URL is no path: Path() would fold its `//`)


def _read_text(path: Path) -> str:
    check_file(path, "playlist")
    if path.stat().st_size > MAX_PLAYLIST_BYTES:
        raise UserError(
            f"{path} is over {MAX_PLAYLIST_BYTES // 1024**2} MB: more than a playlist of {MAX_ROWS} songs takes"
        )
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read playlist {path}: {e.strerror}") from None
    return _decoded(data, path).replace("\r\n", "\n").replace("\r", "\n")


def _decoded(data: bytes, path: Path) -> str:
    """The playlist's text: UTF-16 after its byte order mark (Notepad's "Unicode", PowerShell 5's `>`, Excel's
    "Unicode text"); UTF-8 (after its mark too); else Latin-1 (as a plain .m3u often is, or a CSV saved on Windows),
    but not where the file is UTF-8 but for a stray byte: read as Latin-1, its every other accented name would be
    another. Many NUL bytes without a mark are no text to read: UTF-16 without one, or not a playlist at all."""
    if data.startswith(UTF16_MARKS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise UserError(f"{path} starts as UTF-16 but is not UTF-16 text: save it as UTF-8") from None
    if data.count(b"\0") * NUL_SHARE >= len(data):  # (one NUL in a line: that line is refused, naming it)
        raise UserError(f"{path} holds NUL bytes: it is UTF-16 (or binary), not text musicvid reads: save it as UTF-8")
    controls = sum(data.count(control) for control in CONTROLS)
    if controls >= 8 and controls * CONTROL_SHARE >= len(data):
        raise UserError(f"{path} is no text (control bytes all through it): give a playlist, a .csv or an .m3u")
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if any(ord(c) > 127 for c in data.decode("utf-8", errors="ignore")):
            line = data[: error.start].count(b"\n") + 1
            raise UserError(
                f"{path} line {line}: byte {data[error.start]:#04x} is not UTF-8, "
                "though the rest of the file is: save it as UTF-8"
            ) from None
        return data.decode("latin-1")


def _split_artist_title(text: str) -> tuple[str | None, str | None]:
    if " - " in text:
        artist, title = (part.strip() for part in text.split(" - ", 1))
        return title or None, artist or None
    return text.strip() or None, None


class ElsewhereError(UserError):
    """A playlist's line names a song on another machine."""


def listed_song(text: str, playlist: Path, number: int, **cells) -> Entry:
    """The row of a playlist's line naming its song (song_path); one naming none on this machine (a URL, a Windows
    drive's path) is a row that fails at its turn with the sentence saying so: one line stops no other song."""
    try:
        return Entry(song_path(text, playlist, number), **cells)
    except ElsewhereError as e:
        return Entry(Path(text), **cells, refused=str(e), written=text)


def song_path(text: str, playlist: Path, number: int) -> Path:
    """A row's song as its playlist names it: a path, relative to the playlist's folder, or a file:// URL of this
    machine; the file it means where it names none (found_as). Another URL and a Windows path naming no file are
    refused (ElsewhereError), and a name no file system takes, in one sentence naming it as written (a batch renders
    files on this machine)."""
    where = f"{playlist} line {number}"
    name = local_path(text, where) if is_url(text) else text
    song = Path(name)
    song = song if song.is_absolute() else playlist.parent / song
    too_long = len(os.fsencode(song)) > MAX_PATH_BYTES or any(len(os.fsencode(p)) > NAME_MAX for p in song.parts)
    if "\0" in name or too_long:
        why = "holds a NUL character" if "\0" in name else "is longer than a file system takes"
        raise UserError(f"{where}: {text[:60]!r}{'…' if len(text) > 60 else ''} {why}, so it names no file")
    found = found_as(song, name, playlist)
    if found is None and WINDOWS_PATH.match(name):
        raise ElsewhereError(f"{where}: {shown(text)} is a Windows path: give its path on this machine")
    return found or song


def local_path(url: str, where: str) -> str:
    """The path a file:// URL names on this machine (as VLC and Kodi save playlists: no host, or localhost),
    percent-decoded to the file name's bytes; any other URL is refused in one sentence."""
    parts = urllib.parse.urlsplit(url, allow_fragments=False)  # (a `#` in a file name is no fragment)
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        raise ElsewhereError(
            f"{where}: {shown(url)} is a URL; a batch renders audio files on this machine: download it, or give its path"
        )
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return os.fsdecode(urllib.parse.unquote_to_bytes(path))


def found_as(song: Path, text: str, playlist: Path) -> Path | None:
    """`song` where something is there (a link to nowhere too: it fails at its turn); else the file the entry
    (`text`) means: written on Windows (`Music\\one.mp3`, a relative entry: its `\\` read as `/`), or in another
    Unicode form than its name on disk (macOS keeps names decomposed, NFD). None where there is none."""
    tries = [song]
    if "\\" in text and not Path(text).is_absolute():
        tries.append(playlist.parent / text.replace("\\", "/"))
    return next((found for path in tries if (found := unicode_twin(path)) is not None), None)


def unicode_twin(path: Path) -> Path | None:
    """`path` where something is there; else the one name in its folder (found so too) that is `path`'s in
    Unicode's composed form (NFC); None where there is none, or more than one."""
    if os.path.lexists(path):
        return path
    if path.name in ("", ".", "..") or path.parent == path:
        return None
    folder = unicode_twin(path.parent)
    if folder is None:
        return None
    name = unicodedata.normalize("NFC", path.name)
    try:
        names = [n for n in os.listdir(folder) if unicodedata.normalize("NFC", n) == name]
    except OSError:
        return None
    return folder / names[0] if len(names) == 1 else None


def song_entry(song: Path, base: Path, title: str | None = None, artist: str | None = None) -> Entry:
    """A folder's or an M3U's row: its song, with the timed lyrics beside it as its `lyrics` cell (beside_lyrics)."""
    lyrics = beside_lyrics(song, base)
    return Entry(song, title, artist, {"lyrics": lyrics} if lyrics else {}, lyrics_beside=lyrics)


def read_m3u(path: Path) -> Iterator[Entry]:
    """An M3U's songs; an #EXTINF's title and artist are its next entry's (blank lines and other directives between),
    never a later one's: a comment or a song line between drops it. A `#` line that is no directive but names a file
    beside the playlist is that song, said in a line (a player writes `#9 Dream.mp3` as it is)."""
    title = artist = None
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#EXTINF:"):
            title, artist = _split_artist_title(line.partition(",")[2])
        elif DIRECTIVE.match(line):
            if os.path.isfile(path.parent / line):
                log.warning(f"{shown(path)} line {number}: {shown(line)} reads as a directive: write ./{shown(line)}")
        elif line.startswith("#") and not os.path.isfile(path.parent / line):
            title = artist = None  # a comment
        else:
            if line.startswith("#"):
                log.warning(f"{shown(path)} line {number}: {shown(line)} names a file beside it: taken as a song")
            entry = listed_song(line, path, number, title=title, artist=artist)
            yield entry if entry.refused else song_entry(entry.path, path.parent, title, artist)
            title = artist = None


# --- a folder's songs ---------------------------------------------------------------------------


def read_folder(path: Path, output: Path | None = None) -> Iterator[Entry]:
    """A folder's songs: its files with an audio suffix, its hidden ones not (AUDIO_SUFFIXES); its subfolders' not
    (a batch is one folder's files: an album's), but counted. Each kind skipped is said in a line (folder_notes)."""
    listing = listing_of(path, output)
    for note in folder_notes(listing, path):
        log.warning(note)
    if not listing.songs and listing.below:
        raise UserError(
            f"{shown(path)}: no audio files directly in it ({counted(listing.below, 'audio file')} in its subfolders: a "
            "batch reads one folder's files; give an album's folder, or a playlist)"
        )
    return (song_entry(song, path) for song in listing.songs)


def csv_reader(text: str, path: Path) -> csv.DictReader:
    """The CSV `text`'s rows, parted as its first line says (Excel's "sep=;") or as its header is: by ',', else ';'
    (Excel's where a comma is the decimal mark), else a tab; the header's names trimmed, in lower case ("Path,
    Title"); refused without 'path' or with a name empty or repeated."""
    first = text.partition("\n")[0]
    said = re.fullmatch(r"sep=(.)", first.rstrip("\r"))
    mark = said[1] if said else next((mark for mark in ",;\t" if mark in first), ",")
    reader = csv.DictReader(io.StringIO(text), delimiter=mark, strict=True)
    if said:  # (a line naming the mark, not the header: counted, so that every line is named by its number)
        next(reader.reader)
    reader.fieldnames = [name.strip().lower() for name in reader.fieldnames or ()]
    if "path" not in reader.fieldnames:
        raise UserError(f"{path}: a batch CSV needs a header row with a 'path' column (then title, artist, options)")
    repeated = next((name for name in reader.fieldnames if reader.fieldnames.count(name) > 1 or not name), None)
    if repeated is not None:
        what = f"names the column '{repeated}' twice" if repeated else "has a column with no name"
        raise UserError(f"{path} line {reader.line_num}: the header {what}: give each column one name")
    return reader


def read_csv(path: Path) -> Iterator[Entry]:
    csv.field_size_limit(MAX_PLAYLIST_BYTES)  # a cell may be as big as a playlist may be
    text, read = _read_text(path), 1  # the lines read whole: a malformed row starts on the next (an open quote runs on)
    try:
        for row in (reader := csv_reader(text, path)):
            number = reader.line_num
            cells = [cell for value in row.values() for cell in (value if isinstance(value, list) else [value])]
            if not any((cell or "").strip() for cell in cells):
                continue  # a row of empty cells (",,": a spreadsheet's trailing rows), as a blank line
            if None in row:  # DictReader keeps the cells beyond the header under None
                raise UserError(
                    f"{path} line {number}: more cells than the header has columns: quote a cell with a comma"
                )
            song = (row.pop("path") or "").strip()
            if not song:
                raise UserError(f"{path} line {number}: empty path")
            title, artist, output = ((row.pop(column, None) or "").strip() or None for column in NAMED_COLUMNS)
            overrides = {key: value.strip() for key, value in row.items() if value and value.strip()}
            yield listed_song(song, path, number, title=title, artist=artist, overrides=overrides, output=output)
            read = number
    except csv.Error as error:
        raise UserError(f"{path} line {read + 1}: not a well-formed CSV ({error})") from None


def read_playlist(path: Path, output: Path | None = None) -> list[Entry]:
    """The playlist's rows, refused if there are none or more than MAX_ROWS (read no further); the lyrics each row
    takes from beside its song said in a line. A folder's count of songs in its subfolders leaves out -o (`output`)."""
    if path.is_dir():
        rows = read_folder(path, output)
    elif not path.exists():
        resolved(path)  # (a loop of symbolic links is said so)
        raise UserError(f"playlist not found: {path}")
    elif path.suffix.lower() in PLAYLIST_SUFFIXES:
        rows = read_m3u(path)
    elif path.suffix.lower() == ".csv":
        rows = read_csv(path)
    else:
        raise UserError(f"{path}: not a playlist (use .m3u, .m3u8, .csv or a folder of audio files)")
    entries = list(itertools.islice(rows, MAX_ROWS + 1))
    if not entries:
        raise UserError(f"{path}: no songs in it")
    if len(entries) > MAX_ROWS:
        raise UserError(
            f"{path} has more than {MAX_ROWS} songs, more than a batch takes (each is a render of minutes on a "
            "GPU): split it into several playlists"
        )
    return entries


@dataclass
class Job:
    number: int  # 1-based place in the playlist
    entry: Entry
    request: SongRequest  # this song's settings
    settings: RenderSettings
    output: Path | None = None  # in -o, once every row's name is decided
    same_as: int | None = None  # an earlier job with the same song and settings, which makes this video
    refused: str | None = None  # why its song is none musicvid takes (it fails at its turn): then it reads nothing

    @property
    def song(self) -> str:
        """The row's song as said to a person: its path as named; a line naming none on this machine, as written."""
        return self.entry.written or str(self.entry.path)

    @property
    def label(self) -> str:
        return f"song {self.number} ({shown(self.entry.path.name)})"

    def where(self, playlist: Path) -> str:
        return f"{playlist} {self.label}"

    def inputs(self) -> dict[str, Path]:
        """The files the row reads, by what each is; not a song that leads into a loop of symbolic links: it names
        no file to compare others with (it fails at its turn, as a song that cannot be read); none of a row `refused`."""
        if self.refused is not None:
            return {}
        inputs = inputs_of(self.request, self.settings)
        return {what: path for what, path in inputs.items() if not (what == "song" and in_loop(path))}


def row_storyboard(request: SongRequest, read: dict[Path, Storyboard | None]) -> Storyboard | None:
    """The row's storyboard, read once per file, for its pinned pictures; None where there is none or it
    cannot be read (then it names no pictures, and a row to make is refused for it by its own check)."""

    path = request.storyboard_file
    if path is not None and path not in read:
        try:
            read[path] = load_storyboard(path)
        except UserError:
            read[path] = None
    return read.get(path) if path is not None else None


def files_read(job: Job, storyboards: dict[Path, Storyboard | None]) -> dict[str, Path]:
    """The files a row reads, by what each is: its inputs (Job.inputs) and the pictures its storyboard pins or
    refers to (`storyboards`: each file read once, row_storyboard)."""
    if job.refused is not None:
        return {}
    storyboard = row_storyboard(job.request, storyboards)
    return job.inputs() | (storyboard.picture_files() if storyboard else {})


def unusable_name(request: SongRequest, entry: Entry) -> str | None:
    """Why musicvid cannot take the row's song by its name (bytes not UTF-8, from an old Windows disk: no record
    holds them; one of this process's open files, check_not_stream), in the sentence its row fails with at its turn,
    or that no file has it; None where it can."""
    try:
        check_not_stream(entry.path, "audio file")  # (it resolves to the file redirected: another row's song)
        replace(request, song=entry.path)
    except UserError as e:
        return str(e) if os.path.lexists(entry.path) else f"audio file not found: {printable(os.fspath(entry.path))}"
    return None


def in_loop(path: Path) -> bool:
    """Whether `path` leads into a loop of symbolic links (itself, or a folder on its way)."""
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False
