"""`musicvid batch PLAYLIST -o DIR`: render every song of an M3U/M3U8 playlist, a folder or a CSV.

Before the first render every row is planned and checked: its cells, its own output name (two rows
never write one file; a row that repeats an earlier one is made once), the files it names, and the
upscaler. Models are loaded once for the whole batch; a song that fails is reported and the batch
goes on. A rerun skips songs whose video exists (unless --force) and resumes cut-off songs through
the render's own work directory. Exit 0 if every song succeeded, 1 if any failed, 2 if the playlist
itself is unusable."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import io
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from musicvid.errors import UserError
from musicvid.files import VIDEO_SUFFIXES, check_file, check_output
from musicvid.settings import ModelChoice, RenderSettings, SongRequest, resolve_render_settings
from musicvid.workdir import video_name

AUDIO_SUFFIXES = {".mp3", ".wav", ".flac", ".m4a", ".ogg", ".opus", ".aac", ".wma", ".aiff", ".aif", ".webm"}
PLAYLIST_SUFFIXES = {".m3u", ".m3u8"}
INSTALL_RAY = "--engine ray needs Ray: pip install 'musicvid[ray]' (or: pip install ray)"
# A file name is at most 255 bytes on common file systems: room is left for "-<hash>.preview.mkv".
MAX_NAME_BYTES = 200
MAX_TITLE_BYTES = 100


@dataclass
class Entry:
    """One song of a playlist: where it is, and what the playlist says about it."""

    path: Path
    title: str | None = None
    artist: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)  # CSV column -> text, as written
    output: str | None = None  # the CSV's output cell: the video's file name inside -o


@dataclass
class Result:
    song: str
    status: str  # done, skipped (video already there), failed, or repeat (made by the song `same_as`)
    output: str
    duration: float | None = None
    seconds: float = 0.0
    error: str = ""
    same_as: int | None = None  # a repeat's earlier row, by its number in the playlist


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "playlist",
        type=Path,
        help="M3U/M3U8 playlist, folder of audio files, or CSV (path,title,artist,output,[per-song settings])",
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


NAMED_COLUMNS = ("title", "artist", "output")  # a CSV's columns besides path that are no setting


def read_csv(path: Path) -> list[Entry]:
    rows = list(csv.DictReader(io.StringIO(_read_text(path))))
    if not rows or "path" not in (rows[0].keys()):
        raise UserError(f"{path}: a batch CSV needs a header row with a 'path' column (then title, artist, options)")
    entries = []
    for number, row in enumerate(rows, start=2):
        song = (row.pop("path") or "").strip()
        if not song:
            raise UserError(f"{path} line {number}: empty path")
        title, artist, output = ((row.pop(column, None) or "").strip() or None for column in NAMED_COLUMNS)
        overrides = {key.strip(): value.strip() for key, value in row.items() if key and value and value.strip()}
        song_path = Path(song)
        song_path = song_path if song_path.is_absolute() else path.parent / song_path
        entries.append(Entry(song_path, title, artist, overrides, output))
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
    entry: Entry, request: SongRequest, given: dict, models, base: Path, where: str
) -> tuple[SongRequest, RenderSettings]:
    """This song's request (the batch's with the song's file, names and cells) and its settings, resolved
    from the command line's options (`given`) with the row's cells over them; each cell is checked. A
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
        settings = resolve_render_settings(models, given, changes[RenderSettings])
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    return request, settings


def output_file_name(text: str) -> tuple[str, str]:
    """The stem and suffix of an `output` cell: a plain file name inside -o, with a video suffix or
    none (then .mp4)."""
    name = Path(text)
    if name.name != text or text.startswith(".") or not text.isprintable() or len(text.encode()) > MAX_NAME_BYTES:
        raise UserError(f"output {text!r} must be a plain file name inside -o (no folders), e.g. video.mp4")
    if not name.suffix:
        return text, ".mp4"
    if name.suffix.lower() not in VIDEO_SUFFIXES:
        raise UserError(f"output {text!r} must end in {', '.join(VIDEO_SUFFIXES)} or have no suffix (then .mp4)")
    return name.stem, name.suffix


def title_slug(title: str) -> str:
    """A title as a file name: its letters and digits, anything else as single dashes ('' if none)."""
    slug = re.sub(r"\W+", "-", title).strip("-")
    return slug.encode()[:MAX_TITLE_BYTES].decode(errors="ignore").rstrip("-")


def row_hash(entry: Entry) -> str:
    """What tells a row from another of the same name: the song's full path and the row's own cells, as
    written (so a rerun of the same playlist gives the same names; the command line's options, which
    every row shares, change none). Not its preview cell: a preview is named as its video, with .preview."""
    cells = {"title": entry.title, "artist": entry.artist, **entry.overrides, "preview": None}
    text = "\n".join([str(entry.path.resolve()), *(f"{k}={v}" for k, v in sorted(cells.items()) if v is not None)])
    return hashlib.sha256(text.encode()).hexdigest()[:8]


# --- planning -----------------------------------------------------------------------------------


@dataclass
class Job:
    number: int  # 1-based place in the playlist
    entry: Entry
    request: SongRequest  # this song's settings
    settings: RenderSettings
    output: Path | None = None  # in -o, once every row's name is decided
    same_as: int | None = None  # an earlier job with the same song and settings, which makes this video

    @property
    def label(self) -> str:
        return f"song {self.number} ({self.entry.path.name})"

    def where(self, playlist: Path) -> str:
        return f"{playlist} {self.label}"


def resolved(request: SongRequest) -> SongRequest:
    """The request with every path it names made absolute: how two rows are told to be the same."""
    paths = {
        f.name: value.resolve()
        for f in dataclasses.fields(request)
        if isinstance(value := getattr(request, f.name), Path)
    }
    return dataclasses.replace(request, **paths)


@dataclass
class Naming:
    """A job's output name while names are decided: its stem and whether the row named it."""

    job: Job
    stem: str
    suffix: str
    named: bool  # from the row's output cell: never changed, and refused when it clashes

    def file_name(self) -> str:
        return video_name(self.stem, self.job.settings.preview, self.suffix)

    def files(self) -> set[str]:
        """What the job writes in -o, as a case-insensitive file system tells names apart."""
        from musicvid.pipeline import outputs_of

        return {path.name.casefold() for path in outputs_of(Path(self.file_name()), self.job.settings)}


def clash(namings: list[Naming]) -> bool:
    """Whether jobs of one stem cannot have it: they are of different songs (with --workdir they would
    share a work directory), or two would write one file (a video and its preview write distinct ones)."""
    songs = {naming.job.request.song.resolve() for naming in namings}
    files = [name for naming in namings for name in naming.files()]
    return len(songs) > 1 or len(files) != len(set(files))


def by_stem(namings: list[Naming]) -> list[list[Naming]]:
    groups: dict[str, list[Naming]] = {}
    for naming in namings:
        groups.setdefault(naming.stem.casefold(), []).append(naming)
    return list(groups.values())


def name_outputs(namings: list[Naming], playlist: Path) -> None:
    """Every job's own stem: where automatic names clash, each gets its row's hash; names the rows gave
    that still clash are refused, naming both rows."""
    for group in by_stem(namings):
        if clash(group):
            for naming in group:
                if not naming.named:
                    naming.stem += "-" + row_hash(naming.job.entry)
    for group in by_stem(namings):
        if clash(group):
            first, second = sorted(group, key=lambda naming: not naming.named)[:2]
            raise UserError(
                f"{first.job.where(playlist)} and {second.job.label} would both be named {first.stem} in -o: "
                "give each row an output of its own"
            )


def plan(args, entries: list[Entry], choice: ModelChoice) -> list[Job]:
    """One job per row, each with its own output in -o (and with --workdir its own work directory); a
    row with the same song and settings as an earlier row, naming no other output, repeats it. Each
    cell is checked here."""
    request = SongRequest(song=args.playlist, **SongRequest.given(args))
    models, given = choice.model_set(), RenderSettings.given(args)
    settings = resolve_render_settings(models, given)  # the command line's alone: a mistake there names no row
    base = args.playlist if args.playlist.is_dir() else args.playlist.parent
    jobs: list[Job] = []
    namings: list[Naming] = []
    first: dict[tuple, Job] = {}  # ((resolved request, settings), output cell or None) -> the job
    for number, entry in enumerate(entries, start=1):
        job = Job(number, entry, request, settings)
        where = job.where(args.playlist)
        job.request, job.settings = song_settings(entry, request, given, models, base, where)
        try:
            stem, suffix = output_file_name(entry.output) if entry.output else (None, ".mp4")
        except UserError as e:
            raise UserError(f"{where}: {e}") from None
        same, named = (resolved(job.request), job.settings), (stem + suffix).casefold() if stem else None
        earlier = first.get((same, named))
        if earlier is not None:
            job.same_as = earlier.number
        else:
            first.setdefault((same, None), job)  # a row that names no output repeats the first of its kind
            first[(same, named)] = job
            automatic = title_slug(entry.title or "") or entry.path.stem
            namings.append(Naming(job, stem or automatic, suffix, named=stem is not None))
        jobs.append(job)
    name_outputs(namings, args.playlist)
    for naming in namings:
        job = naming.job
        job.output = args.output / naming.file_name()
        if args.workdir:
            job.request = dataclasses.replace(job.request, workdir=args.workdir / naming.stem)
    for job in jobs:
        if job.same_as is not None:
            job.output = jobs[job.same_as - 1].output
    return jobs


# --- running ------------------------------------------------------------------------------------


def render_one(job: Job, registry) -> Result:
    from musicvid.pipeline import make_video

    started = time.perf_counter()
    result = Result(song=str(job.entry.path), status="done", output=str(job.output))
    try:
        # rows of one song share its work directory (without --workdir): one waits for another's render
        result.duration = make_video(job.request, job.settings, registry, output=job.output, wait=True).duration
    except KeyboardInterrupt:
        raise
    except Exception as error:  # any one song's failure is reported; the batch goes on
        result.status, result.error = "failed", str(error) or type(error).__name__
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def render_locally(registry, jobs: list[Job], finished) -> None:
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

    from musicvid.form import compile_librosa

    compile_librosa()  # once, before the workers start
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


def note(result: Result) -> str:
    """Why a song failed, or which song made a repeat's video."""
    return f"same as song {result.same_as}" if result.same_as else result.error


def table(results: list[Result]) -> str:
    rows = [("status", "seconds", "duration", "output", "note")]
    for r in results:
        duration = "" if r.duration is None else f"{r.duration:.1f}"
        rows.append((r.status, f"{r.seconds:.1f}", duration, r.output, note(r)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def write_report(path: Path, playlist: Path, results: list[Result], total: int) -> None:
    from vipe_core.files import write_json

    write_json(path, {"playlist": str(playlist), "total": total, "songs": [asdict(r) for r in results]})


def check_jobs(todo: list[Job], jobs: list[Job], playlist: Path) -> None:
    """Refuse, before any render, a row to make whose outputs or named files would fail it later
    (musicvid.pipeline.check_before_work), or that would write over a file another row reads, in one
    sentence that names the row."""
    from musicvid.pipeline import check_before_work, inputs_of, outputs_of

    for job in todo:
        try:
            check_before_work(job.request, job.settings, job.output)
        except UserError as e:
            raise UserError(f"{job.where(playlist)}: {e}") from None
    read = {
        path.resolve(): (what, job)
        for job in jobs
        for what, path in inputs_of(job.request, settings=job.settings).items()
    }
    for job in todo:
        for output in outputs_of(job.output, job.settings):
            if output.resolve() in read:
                what, reader = read[output.resolve()]
                raise UserError(
                    f"{job.where(playlist)}: its {output.name} would write over the {what} of {reader.label}"
                )


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
    # Every row is planned and checked before the first song is rendered: a bad row costs nothing.
    choice = ModelChoice(**ModelChoice.given(args))
    jobs = plan(args, entries, choice)
    choice.check_upscaler_used(job.settings for job in jobs)
    made = [job for job in jobs if job.same_as is None]
    skipped = {job.number for job in made if job.output.exists() and not args.force}
    todo = [job for job in made if job.number not in skipped]
    check_jobs(todo, jobs, args.playlist)
    # The local engine renders with this registry; on Ray it only loads the upscaler to check it.
    registry = choice.registry(keep_loaded=args.engine == "local")
    if any(job.settings.resolution for job in todo):
        with registry.use("upscaler"):  # a bad --upscaler is refused now, not after the drawing
            pass
    out_dir.mkdir(parents=True, exist_ok=True)

    report = out_dir / "report.json"
    results: dict[int, Result] = {}

    def finished(job: Job, result: Result) -> None:
        results[job.number] = result
        told = f"{result.status}: {note(result)}" if note(result) else result.status
        print(f"[{len(results)}/{len(jobs)}] {job.entry.path}: {told}", file=sys.stderr, flush=True)
        # rewritten after each song, in playlist order, so a killed batch loses little
        write_report(report, args.playlist, [results[n] for n in sorted(results)], len(jobs))

    to_render = []
    for job in jobs:
        if job.same_as is not None:
            finished(job, Result(str(job.entry.path), "repeat", str(job.output), same_as=job.same_as))
        elif job.number in skipped:
            finished(job, Result(str(job.entry.path), "skipped", str(job.output), declared_duration(job.output)))
        else:
            try:  # a song that is not there, or a pipe, is reported as failed like one that is not audio
                check_file(job.request.song, "audio file")
                to_render.append(job)
            except UserError as error:
                finished(job, Result(str(job.entry.path), "failed", str(job.output), error=str(error)))
    if to_render and args.engine == "ray":
        render_on_ray(args, choice, to_render, finished)
    elif to_render:
        render_locally(registry, to_render, finished)
    ordered = [results[n] for n in sorted(results)]
    print(table(ordered))

    def has_video(result: Result) -> bool:
        return (results[result.same_as] if result.same_as else result).status != "failed"

    ok = sum(map(has_video, ordered))
    print(f"\n{ok}/{len(ordered)} songs ok; report: {report}")
    return 0 if ok == len(ordered) else 1
