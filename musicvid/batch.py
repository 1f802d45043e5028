"""`musicvid batch PLAYLIST -o DIR`: render every song of an M3U/M3U8 playlist, a folder or a CSV.

Models are loaded once for the whole batch; a song that fails is reported and the batch goes on.
A rerun skips songs whose video exists (unless --force) and resumes cut-off songs through the
render's own work directory. Exit 0 if every song succeeded, 1 if any failed, 2 if the playlist
itself is unusable."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import io
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from musicvid.errors import UserError
from musicvid.files import check_file, check_output
from musicvid.settings import ModelChoice, RenderSettings, SongRequest

AUDIO_SUFFIXES = {".mp3", ".wav", ".flac", ".m4a", ".ogg", ".opus", ".aac", ".wma", ".aiff", ".aif", ".webm"}
PLAYLIST_SUFFIXES = {".m3u", ".m3u8"}
INSTALL_RAY = "--engine ray needs Ray: pip install 'musicvid[ray]' (or: pip install ray)"


@dataclass
class Entry:
    """One song of a playlist: where it is, and what the playlist says about it."""

    path: Path
    title: str | None = None
    artist: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)  # CSV column -> text, as written


@dataclass
class Result:
    song: str
    status: str  # done, skipped (video already there) or failed
    output: str
    duration: float | None = None
    seconds: float = 0.0
    error: str = ""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "playlist",
        type=Path,
        help="M3U/M3U8 playlist, folder of audio files, or CSV (path,title,artist,[per-song settings])",
    )
    p.add_argument("-o", "--output", type=Path, required=True, help="folder for the videos, report.json and the table")
    p.add_argument("--workdir", type=Path, help="folder for the songs' work directories (default musicvid-work/)")
    SongRequest.add_options(p, skip=("title", "artist", "workdir"))  # title and artist: per song
    ModelChoice.add_options(p)
    RenderSettings.add_options(p)
    p.add_argument("--force", action="store_true", help="render songs again even if their video exists")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="local (one process) or ray")
    p.add_argument("--address", help="Ray cluster to join (e.g. auto); default: start Ray on this machine")
    p.add_argument(
        "--workers", type=int, help="Ray actors, each keeping its models loaded (default: one per GPU, else 1)"
    )
    p.add_argument(
        "--gpus-per-song", type=float, help="GPUs each Ray actor asks for (default: 1 if the cluster has GPUs)"
    )


# --- playlists ----------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    check_file(path, "playlist")
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


def read_csv(path: Path) -> list[Entry]:
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
        song_path = Path(song)
        entries.append(
            Entry(song_path if song_path.is_absolute() else path.parent / song_path, title, artist, overrides)
        )
    return entries


def read_playlist(path: Path) -> list[Entry]:
    if path.is_dir():
        entries = read_folder(path)
    elif not path.exists():
        raise UserError(f"playlist not found: {path}")
    elif path.suffix.lower() in PLAYLIST_SUFFIXES:
        entries = read_m3u(path)
    elif path.suffix.lower() == ".csv":
        entries = read_csv(path)
    else:
        raise UserError(f"{path}: not a playlist (use .m3u, .m3u8, .csv or a folder of audio files)")
    if not entries:
        raise UserError(f"{path}: no songs in it")
    return entries


# --- per-song settings --------------------------------------------------------------------------


def song_settings(
    entry: Entry, request: SongRequest, settings: RenderSettings, base: Path, where: str
) -> tuple[SongRequest, RenderSettings]:
    """The batch's settings with this song's file, names and CSV cells filled in, each checked. A
    column is a per-song setting, by its option's name or its field's; relative paths in a row are
    relative to the CSV, like its songs."""
    changes: dict[type, dict] = {SongRequest: {}, RenderSettings: {}}
    try:
        for column, text in entry.overrides.items():
            owner = next((cls for cls in (*changes, ModelChoice) if cls.column(column)), None)
            f = owner.column(column) if owner else None
            if f is None or not f.metadata["per_song"]:
                shared = " (the whole batch shares it: give it on the command line)" if f else ""
                raise UserError(f"column '{column}' is not a per-song setting{shared}")
            changes[owner][f.name] = owner.parse(f.name, text, base)
        request = dataclasses.replace(
            request, song=entry.path, title=entry.title, artist=entry.artist, **changes[SongRequest]
        )
        # the row's look, and its shape at the batch's pixel count
        render = RenderSettings.completed(changes[RenderSettings], settings.size) if changes[RenderSettings] else {}
        settings = dataclasses.replace(settings, **render)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    return request, settings


def output_names(entries: list[Entry]) -> list[str]:
    """`<stem>` per song; songs sharing a stem get a short hash of their full path so none overwrites another."""
    stems = [entry.path.stem for entry in entries]
    names = []
    for entry, stem in zip(entries, stems):
        if stems.count(stem) > 1:
            stem += "-" + hashlib.sha256(str(entry.path.resolve()).encode()).hexdigest()[:8]
        names.append(stem)
    return names


# --- running ------------------------------------------------------------------------------------


@dataclass
class Job:
    number: int  # 1-based place in the playlist
    entry: Entry
    request: SongRequest  # this song's settings
    settings: RenderSettings
    output: Path


def render_one(job: Job, registry) -> Result:
    from musicvid.pipeline import make_video

    started = time.perf_counter()
    result = Result(song=str(job.entry.path), status="done", output=str(job.output))
    try:
        result.duration = make_video(job.request, job.settings, registry, output=job.output).duration
    except KeyboardInterrupt:
        raise
    except Exception as error:  # any one song's failure is reported; the batch goes on
        result.status, result.error = "failed", str(error) or type(error).__name__
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def render_locally(args, choice: ModelChoice, jobs: list[Job], finished) -> None:
    registry = choice.registry(keep_loaded=True)
    for job in jobs:
        finished(job, render_one(job, registry))


class SongRenderer:
    """A Ray actor: loads the models once, then renders the songs it is handed."""

    def __init__(self, choice: ModelChoice):
        self.registry = choice.registry(keep_loaded=True)

    def render(self, job: Job) -> Result:
        return render_one(job, self.registry)


def render_on_ray(args, choice: ModelChoice, jobs: list[Job], finished) -> None:
    """Songs as tasks on Ray actors (one GPU each where the cluster has GPUs). An actor whose process
    dies is restarted and its song retried once; a song that still fails is reported as failed."""
    import ray

    if not ray.is_initialized():
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    cluster = ray.cluster_resources()
    gpus = args.gpus_per_song if args.gpus_per_song is not None else (1.0 if cluster.get("GPU") else 0.0)
    workers = args.workers or (int(cluster["GPU"] // gpus) if gpus else 1)
    actor = ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=1, max_task_retries=1)(SongRenderer)
    idle = [actor.remote(choice) for _ in range(max(1, min(workers, len(jobs))))]
    waiting, running = list(jobs), {}
    while waiting or running:
        while waiting and idle:
            worker, job = idle.pop(), waiting.pop(0)
            running[worker.render.remote(job)] = (job, worker)
        [ready], _ = ray.wait(list(running), num_returns=1)
        job, worker = running.pop(ready)
        try:
            result = ray.get(ready)
        except ray.exceptions.RayError as error:  # the worker died twice on this song
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            result = Result(str(job.entry.path), "failed", str(job.output), error=f"worker failed: {reason}")
        idle.append(worker)
        finished(job, result)


def table(results: list[Result]) -> str:
    rows = [("status", "seconds", "duration", "output", "error")]
    for r in results:
        duration = "" if r.duration is None else f"{r.duration:.1f}"
        rows.append((r.status, f"{r.seconds:.1f}", duration, r.output, r.error))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def write_report(path: Path, playlist: Path, results: list[Result], total: int) -> None:
    from vipe_core.files import write_json

    write_json(path, {"playlist": str(playlist), "total": total, "songs": [asdict(r) for r in results]})


def run(args) -> int:
    from musicvid.ffmpeg import declared_duration

    if args.engine == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError(INSTALL_RAY) from None
    entries = read_playlist(args.playlist)
    out_dir: Path = args.output
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"-o must be a folder for a batch, and {out_dir} is a file")
    check_output(out_dir / "report.json", "-o")
    # Every song's settings are checked before the first song is rendered: a bad row costs nothing.
    choice = ModelChoice(**ModelChoice.given(args))
    base_request = SongRequest(song=args.playlist, **SongRequest.given(args))
    base_settings = RenderSettings.for_models(choice.model_set(), **RenderSettings.given(args))
    base = args.playlist if args.playlist.is_dir() else args.playlist.parent
    jobs = []
    for number, (entry, name) in enumerate(zip(entries, output_names(entries)), start=1):
        where = f"{args.playlist} song {number} ({entry.path.name})"
        request, settings = song_settings(entry, base_request, base_settings, base, where)
        if args.workdir:
            request = dataclasses.replace(request, workdir=args.workdir / name)
        output = out_dir / (f"{name}.preview.mp4" if settings.preview else f"{name}.mp4")
        check_output(output)
        jobs.append(Job(number, entry, request, settings, output))
    out_dir.mkdir(parents=True, exist_ok=True)

    report = out_dir / "report.json"
    results: dict[int, Result] = {}

    def finished(job: Job, result: Result) -> None:
        results[job.number] = result
        note = f"failed: {result.error}" if result.status == "failed" else result.status
        print(f"[{len(results)}/{len(jobs)}] {job.entry.path}: {note}", file=sys.stderr, flush=True)
        # rewritten after each song, in playlist order, so a killed batch loses little
        write_report(report, args.playlist, [results[n] for n in sorted(results)], len(jobs))

    todo = []
    for job in jobs:
        if job.output.exists() and not args.force:
            finished(job, Result(str(job.entry.path), "skipped", str(job.output), declared_duration(job.entry.path)))
        else:
            todo.append(job)
    if todo:
        (render_on_ray if args.engine == "ray" else render_locally)(args, choice, todo, finished)
    ordered = [results[n] for n in sorted(results)]
    print(table(ordered))
    failed = sum(r.status == "failed" for r in ordered)
    print(f"\n{len(ordered) - failed}/{len(ordered)} songs ok; report: {report}")
    return 1 if failed else 0
