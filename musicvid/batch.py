"""`musicvid batch PLAYLIST -o DIR`: render every song of an M3U/M3U8 playlist, a folder or a CSV.

Models are loaded once for the whole batch; a song that fails is reported and the batch goes on.
A rerun skips songs whose video exists (unless --force) and resumes cut-off songs through the
render's own work directory. Exit 0 if every song succeeded, 1 if any failed, 2 if the playlist
itself is unusable."""

from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import io
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from musicvid.errors import UserError

AUDIO_SUFFIXES = {".mp3", ".wav", ".flac", ".m4a", ".ogg", ".opus", ".aac", ".wma", ".aiff", ".aif", ".webm"}
PLAYLIST_SUFFIXES = {".m3u", ".m3u8"}
# These pick the models, which the whole batch shares, so a CSV row may not change them.
SHARED_OPTIONS = {"models", "asr", "asr_model", "vipe", "diffusion", "device", "workdir", "output", "quiet"}
INSTALL_RAY = "--engine ray needs Ray: pip install 'musicvid[ray]' (or: pip install ray)"


@dataclass
class Entry:
    """One song of a playlist: where it is, and what the playlist says about it."""

    path: Path
    title: str | None = None
    artist: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    song: str
    status: str  # done, skipped (video already there) or failed
    output: str
    duration: float | None = None
    seconds: float = 0.0
    error: str = ""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from musicvid.cli import add_render_options, add_song_options

    add_song_options(p)
    add_render_options(p)
    for action in p._actions:  # the song options are shared with `render`; adapt the few that differ
        if action.dest == "song":
            action.dest, action.metavar = "playlist", "PLAYLIST"
            action.help = "M3U/M3U8 playlist, folder of audio files, or CSV (path,title,artist,[render options])"
        elif action.dest == "output":
            action.required, action.help = True, "folder for the videos, report.json and the table"
        elif action.dest == "workdir":
            action.help = "folder for the songs' work directories (default musicvid-work/)"
        elif action.dest in ("title", "artist"):
            action.help = argparse.SUPPRESS  # per song: from the playlist, tags or file name
    p.add_argument("--force", action="store_true", help="render songs again even if their video exists")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="local (one process) or ray")
    p.set_defaults(batch_parser=p)


# --- playlists ----------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read playlist {path}: {e.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # plain .m3u is often Latin-1
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_artist_title(text: str) -> tuple[str | None, str | None]:
    if " - " in text:
        artist, title = (part.strip() for part in text.split(" - ", 1))
        return title or None, artist or None
    return text.strip() or None, None


def read_m3u(path: Path) -> list[Entry]:
    entries, title, artist = [], None, None
    for line in _read_text(path).split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#EXTINF:"):
            title, artist = _split_artist_title(line.partition(",")[2])
        elif line.startswith("#"):
            continue
        else:
            song = Path(line)
            entries.append(Entry(song if song.is_absolute() else path.parent / song, title, artist))
            title = artist = None
    return entries


def read_folder(path: Path) -> list[Entry]:
    songs = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    return [Entry(song) for song in songs]


def read_csv(path: Path, parser: argparse.ArgumentParser) -> list[Entry]:
    rows = list(csv.DictReader(io.StringIO(_read_text(path))))
    if not rows or "path" not in (rows[0].keys()):
        raise UserError(f"{path}: a batch CSV needs a header row with a 'path' column (then title, artist, options)")
    entries = []
    for number, row in enumerate(rows, start=2):
        song = (row.pop("path") or "").strip()
        if not song:
            raise UserError(f"{path} line {number}: empty path")
        title = (row.pop("title", None) or "").strip() or None
        artist = (row.pop("artist", None) or "").strip() or None
        overrides = {key.strip(): value.strip() for key, value in row.items() if key and value and value.strip()}
        for key in overrides:
            _option(parser, key, f"{path} line {number}")  # refuse unknown columns before any rendering
        song_path = Path(song)
        entries.append(Entry(song_path if song_path.is_absolute() else path.parent / song_path, title, artist, overrides))
    return entries


def read_playlist(path: Path, parser: argparse.ArgumentParser) -> list[Entry]:
    if path.is_dir():
        entries = read_folder(path)
    elif not path.exists():
        raise UserError(f"playlist not found: {path}")
    elif path.suffix.lower() in PLAYLIST_SUFFIXES:
        entries = read_m3u(path)
    elif path.suffix.lower() == ".csv":
        entries = read_csv(path, parser)
    else:
        raise UserError(f"{path}: not a playlist (use .m3u, .m3u8, .csv or a folder of audio files)")
    if not entries:
        raise UserError(f"{path}: no songs in it")
    return entries


# --- per-song settings --------------------------------------------------------------------------


def _option(parser: argparse.ArgumentParser, column: str, where: str) -> argparse.Action:
    dest = column.replace("-", "_")
    action = next((a for a in parser._actions if a.dest == dest and a.option_strings), None)
    if action is None or dest in SHARED_OPTIONS or dest in ("title", "artist", "force", "engine"):
        raise UserError(f"{where}: column '{column}' is not a per-song render option")
    return action


def song_args(args: argparse.Namespace, entry: Entry, output: Path, workdir: Path | None) -> argparse.Namespace:
    """The batch's options with this song's file, names, output and CSV overrides filled in."""
    song = copy.copy(args)
    song.song, song.title, song.artist, song.output, song.workdir = entry.path, entry.title, entry.artist, output, workdir
    for column, text in entry.overrides.items():
        action = _option(args.batch_parser, column, str(entry.path))
        if action.nargs == 0:  # on/off flags: any of 1/true/yes switches them
            value = action.const if text.lower() in ("1", "true", "yes", "on") else action.default
        else:
            try:
                value = action.type(text) if action.type else text
            except (ValueError, argparse.ArgumentTypeError) as e:
                raise UserError(f"{entry.path}: bad {column} '{text}': {e}") from None
        setattr(song, action.dest, value)
    return song


def output_names(entries: list[Entry]) -> list[str]:
    """`<stem>` per song; songs sharing a stem get a short hash of their full path so none overwrites another."""
    stems = [entry.path.stem for entry in entries]
    names = []
    for entry, stem in zip(entries, stems):
        if stems.count(stem) > 1:
            stem += "-" + hashlib.sha256(str(entry.path.resolve()).encode()).hexdigest()[:8]
        names.append(stem)
    return names


def audio_duration(path: Path) -> float | None:
    from musicvid.audio import _declared_duration, ffmpeg_exe

    try:
        probe = subprocess.run([ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True, text=True)
    except OSError:
        return None
    return _declared_duration(probe.stderr)


# --- running ------------------------------------------------------------------------------------


def render_one(args, entry: Entry, output: Path, workdir: Path | None, registry) -> Result:
    from musicvid.cli import render_settings, song_request
    from musicvid.render import render_song

    started = time.perf_counter()
    result = Result(song=str(entry.path), status="done", output=str(output))
    try:
        song = song_args(args, entry, output, workdir)
        render_song(song_request(song), render_settings(song, registry), registry, output=output)
        result.duration = audio_duration(entry.path)
    except KeyboardInterrupt:
        raise
    except Exception as error:  # any one song's failure is reported; the batch goes on
        result.status, result.error = "failed", str(error) or type(error).__name__
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def table(results: list[Result]) -> str:
    rows = [("status", "seconds", "duration", "output", "error")]
    for r in results:
        duration = "" if r.duration is None else f"{r.duration:.1f}"
        rows.append((r.status, f"{r.seconds:.1f}", duration, r.output, r.error))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def write_report(path: Path, playlist: Path, results: list[Result], total: int) -> None:
    from musicvid.files import write_json

    write_json(path, {"playlist": str(playlist), "total": total, "songs": [asdict(r) for r in results]})


def run(args) -> int:
    if args.engine == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError(INSTALL_RAY) from None
        raise UserError("--engine ray is not available yet; use --engine local")
    from musicvid.cli import model_registry

    entries = read_playlist(args.playlist, args.batch_parser)
    out_dir: Path = args.output
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"-o must be a folder for a batch, and {out_dir} is a file")
    out_dir.mkdir(parents=True, exist_ok=True)
    for entry in entries:  # refuse bad CSV values before loading any model
        song_args(args, entry, out_dir, None)
    registry = model_registry(args, keep_loaded=True)

    results: list[Result] = []
    report = out_dir / "report.json"
    for number, (entry, name) in enumerate(zip(entries, output_names(entries)), start=1):
        output = out_dir / f"{name}.preview.mp4" if args.preview else out_dir / f"{name}.mp4"
        workdir = args.workdir / name if args.workdir else None
        print(f"[{number}/{len(entries)}] {entry.path}", file=sys.stderr, flush=True)
        if output.exists() and not args.force:
            result = Result(str(entry.path), "skipped", str(output), audio_duration(entry.path))
        else:
            result = render_one(args, entry, output, workdir, registry)
        if result.status == "failed":
            print(f"[{number}/{len(entries)}] failed: {result.error}", file=sys.stderr, flush=True)
        results.append(result)
        write_report(report, args.playlist, results, len(entries))  # after each song, so a kill loses little
    print(table(results))
    failed = sum(r.status == "failed" for r in results)
    print(f"\n{len(results) - failed}/{len(results)} songs ok; report: {report}")
    return 1 if failed else 0
