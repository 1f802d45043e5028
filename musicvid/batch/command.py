"""`musicvid batch PLAYLIST -o DIR`: render every song of an M3U/M3U8 playlist, a folder or a CSV.

Before the first render every row is made a job and checked: its cells, its own output name (two rows
never write one file; a row that repeats an earlier one is made once), the files it names, and the
upscaler. Models are loaded once for the whole batch; a song that fails is reported and the batch
goes on. A rerun skips songs whose outputs all exist as made with the settings asked now (unless --force), and
renders the others again through the render's own work directory, which keeps what still fits. Exit 0 if every
song succeeded, 1 if any failed, 2 if the playlist itself is unusable. The playlist is read by
musicvid.batch.playlist, report.json written by musicvid.batch.report."""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from pathlib import Path

from musicvid.batch.earlier import changed_since, made_before, song_problem, song_read, take_over_outputs
from musicvid.batch.engines import check_engine_options, join_ray, render_locally, render_on_ray
from musicvid.batch.names import Naming, automatic_name, clear_of_inputs, folded, name_outputs, output_file_name
from musicvid.batch.playlist import Entry, Job, in_loop, read_playlist, unusable_name
from musicvid.batch.report import (
    REPORT_NAME,
    ReportWriter,
    Result,
    absolute_paths,
    check_lock_file,
    check_report,
    earlier_outputs,
    earlier_workdirs,
    files_read,
    held_output,
    made_with,
    note,
    other_batches_rows,
    report_key,
    table,
    video_of_ours,
)
from musicvid.core.errors import UserError, warnings_held
from musicvid.core.files import (
    check_creatable,
    check_output,
    file_identity,
    remove_temporaries,
    same_file,
)
from musicvid.core.outputs import check_name_length
from musicvid.core.paths import check_made, exists, is_folder, printable, shown
from musicvid.core.paths import resolved as resolved_path
from musicvid.core.workdir import WORK_ROOT, Workdir
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import check_used, reference_only, resolve_render_settings
from musicvid.settings.song import SongRequest, making_only

log = logging.getLogger("musicvid")

INSTALL_RAY = "--engine ray needs Ray: pip install 'musicvid[ray]' (or: pip install ray)"


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
        if request.storyboard_file and (said := making_only(changes[SongRequest])):  # (as --storyboard refuses them)
            raise UserError(f"{said}, not beside the row's storyboard")
        settings = resolve_render_settings(models, given, changes[RenderSettings])
        check_used(changes[RenderSettings], [settings])  # (a cell that acts only beside another, as an option)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    return request, settings


# --- the jobs --------------------------------------------------------------------------------------


def resolved(request: SongRequest) -> SongRequest:
    """The request with every path it names made absolute: how two rows are told to be the same (realpath: a path
    into a loop of symbolic links as far as it goes; check_no_loop judges those)."""
    paths = {
        f.name: Path(os.path.realpath(value))
        for f in dataclasses.fields(request)
        if isinstance(value := getattr(request, f.name), Path)
    }
    return dataclasses.replace(request, **paths)


def check_no_loop(job: Job, where: str) -> None:
    """Refuse a file of the row's cells (lyrics, storyboard, reference) that leads into a loop of symbolic links, in
    core.paths' sentence naming the row (`where`); its song is left to fail at its turn, as one that cannot be
    read."""
    for path in job.inputs().values():
        try:
            resolved_path(path)
        except UserError as e:
            raise UserError(f"{where}: {e}") from None


def jobs_of(args, entries: list[Entry], choice: ModelChoice) -> list[Job]:
    """One job per row, each with its own output in -o (and with --workdir its own work directory); a
    row with the same song and settings as an earlier row, naming no other output, repeats it. Each
    cell is checked here."""
    request = SongRequest(song=args.playlist, **SongRequest.given(args))
    from musicvid.models.choose import models_of  # (torch: not for the command line's start)

    models, given = models_of(choice), RenderSettings.given(args)
    settings = resolve_render_settings(models, given)  # the command line's alone: a mistake there names no row
    base = args.playlist if args.playlist.is_dir() else args.playlist.parent
    jobs: list[Job] = []
    namings: list[Naming] = []
    first: dict[tuple, Job] = {}  # ((resolved request, settings), output cell or None) -> the job
    workdirs, reports = [WORK_ROOT, *([args.workdir] if args.workdir else [])], {}  # (video_of_ours reads them)
    for number, entry in enumerate(entries, start=1):
        job = Job(number, entry, request, settings, refused=entry.refused or unusable_name(request, entry))
        where = job.where(args.playlist)
        if job.refused is None:  # (a name musicvid cannot take comes from a folder: a row of no cells)
            job.request, job.settings = song_settings(entry, request, given, models, base, where)
            job.refused = video_of_ours(entry.path, args.output, workdirs, reports)
        try:
            stem, suffix = output_file_name(entry.output) if entry.output else (None, ".mp4")
        except UserError as e:
            raise UserError(f"{where}: {e}") from None
        check_no_loop(job, where)
        same, named = (resolved(job.request), job.settings), folded(stem + suffix) if stem else None
        earlier = first.get((same, named)) if job.refused is None else None
        if earlier is not None:
            job.same_as = earlier.number
        else:
            if job.refused is None:
                first.setdefault((same, None), job)  # a row that names no output repeats the first of its kind
                first[(same, named)] = job
            namings.append(Naming(job, stem or automatic_name(entry), suffix, named=stem is not None))
        jobs.append(job)
    # A row whose song cannot be read writes nothing: its automatic name takes no other row's (an output cell is the
    # person's, and two naming one video are refused all the same).
    clear_of_inputs(namings, args.output)
    name_outputs([naming for naming in namings if naming.named or song_read(naming.job)], args.playlist)
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


def check_jobs(
    todo: list[Job],
    jobs: list[Job],
    playlist: Path,
    models: ModelSet,
    changed: frozenset[int] = frozenset(),
    reference_only: tuple[str, ...] = (),
) -> None:
    """Refuse, before any render, a row to make (`todo`) that would write over a file another row reads (its
    video, .srt, .ass, or any file of its work directory), or a row, skipped or not (no repeat), whose outputs or
    named files would fail it (musicvid.prepare.check_before_work), or whose files do not fit its song's length
    (musicvid.batch.lengths), in one sentence that names the row. Another row's input first: no --overwrite lets
    that be replaced. A row whose song `changed` (by number) may replace its outputs: changed_since checked them (or
    made_before, where another folder's work directory records them). The options given that act only where a
    reference picture is drawn (`reference_only`), where no row draws one, are refused last."""
    storyboards: dict = {}  # (each storyboard file read once)
    files = {job.number: files_read(job, storyboards) for job in jobs}
    read = {file_identity(path): (what, job) for job in jobs for what, path in files[job.number].items()}
    readable = {job.number for job in jobs if song_read(job)}  # (once a row: each row is checked against every other)
    for job in (job for job in todo if job.refused is None):  # (a refused row writes nothing)
        for output in job.settings.outputs(job.output):
            what, reader = read.get(file_identity(output), (None, job))
            if reader is not job:  # its own inputs: check_before_work names them
                raise UserError(
                    f"{job.where(playlist)}: its {output.name} would write over the {what} of {reader.label}"
                )
        check_workdir_unread(job, jobs, playlist, readable, files)
    from musicvid.batch.lengths import check_row_length  # (torch: once the playlist and its rows are read)
    from musicvid.prepare import UnreadableSong, check_before_work, check_reference_drawn

    drawn = False  # whether a row draws a reference picture (one whose song cannot be read here may)
    for job in (job for job in jobs if job.same_as is None and job.refused is None):
        if in_loop(job.request.song):  # (at its turn)
            drawn = True
            continue
        try:
            check_name_length_in_batch(job)
            request = dataclasses.replace(job.request, overwrite=True) if job.number in changed else job.request
            checked = check_before_work(request, models, job.settings, job.output)
            drawn |= job.settings.reference is not None or checked.references
            if job.number in readable:  # (else it fails at its turn)
                # (a song too short for a frame is one musicvid cannot take: it fails at its turn, as one not audio)
                job.refused = check_row_length(job.request, job.settings, checked)
        except UnreadableSong:  # reported as failed at its turn (run_jobs), as a missing song is
            drawn = True
        except UserError as e:
            raise UserError(f"{job.where(playlist)}: {e}") from None
    check_reference_drawn(reference_only, drawn, "no row of the batch draws one")


def check_name_length_in_batch(job: Job) -> None:
    """Refuse an output name too long to write (check_name_length) with what a batch's row can do about it: a name
    made from the song's is cut to fit, so this is one named by the row, or made long by a file system's limit."""
    for path in job.settings.outputs(job.output):
        check_name_length(path, "rename the song, or give its row a shorter output (a CSV's output cell)")


def check_workdir_unread(
    job: Job, jobs: list[Job], playlist: Path, readable: set[int], files: dict[int, dict[str, Path]]
) -> None:
    """Refuse another row's input (`files`: each row's, by number: files_read) that is a file of `job`'s work
    directory, which `job` writes (a row of one work directory with it reads what is its own: check_before_work
    judges that). A row whose song is not `readable` (by number) has no default work directory: it fails at its
    turn."""
    if not (job.request.workdir or job.number in readable):
        return
    workdir = Workdir.of_song(job.request.song, job.request.workdir)
    for reader in jobs:
        if reader.request.workdir is None and reader.number not in readable:
            continue
        if same_file(Workdir.of_song(reader.request.song, reader.request.workdir).root, workdir.root):
            continue
        for what, path in files[reader.number].items():
            if name := workdir.holds(path):
                raise UserError(
                    f"{reader.where(playlist)}: its {what} {path} is the {name} of {job.label}'s work directory, "
                    "which that row writes: copy it elsewhere first"
                )


def repeat_of(job: Job, made: Result) -> Result:
    """A repeat's outcome, once its row (`made`) has finished: that row's video, or its failure."""
    if made.status == "failed":
        error = f"same as song {job.same_as}, which failed: {made.error}"
        return Result(job.song, "failed", str(job.output), error=error, same_as=job.same_as)
    return Result(job.song, "repeat", str(job.output), made.duration, same_as=job.same_as)


def run_jobs(args, choice: ModelChoice, registry, jobs: list[Job], skipped: set[int], finished, plan=None) -> None:
    """Every job, in playlist order: skipped rows (their killed writers' temporaries beside their outputs swept) and
    missing songs finished at once, the others rendered (on Ray or here); a repeat finishes with its row, never
    before (a row not yet run has made nothing), with that row's outcome."""
    from musicvid.core.ffmpeg import declared_duration

    repeats: dict[int, list[Job]] = {}
    for job in jobs:
        if job.same_as is not None:
            repeats.setdefault(job.same_as, []).append(job)

    def done(job: Job, result: Result) -> None:
        finished(job, result)
        for repeat in repeats.get(job.number, ()):
            finished(repeat, repeat_of(repeat, result))

    to_render = []
    for job in (job for job in jobs if job.same_as is None):
        if job.number in skipped:
            for path in job.settings.outputs(job.output):  # (a rendered row's are swept by its render)
                remove_temporaries(path)
            done(job, Result(job.song, "skipped", str(job.output), declared_duration(job.output)))
        elif (problem := song_problem(job)) is None:
            to_render.append(job)
        else:  # a song that is not there, a pipe or a video musicvid made is reported as failed like one not audio
            done(job, Result(job.song, "failed", str(job.output), error=problem))
    if to_render and args.engine == "ray":
        render_on_ray(plan, choice, to_render, done)
    elif to_render:
        render_locally(registry, to_render, done)


def run(args) -> int:
    check_engine_options(args)
    if args.engine == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError(INSTALL_RAY) from None
    out_dir: Path = args.output
    check_made(out_dir, "-o")  # report.json and every row's outputs.json record paths in it
    if exists(out_dir, "-o") and not is_folder(out_dir, "-o"):
        raise UserError(f"-o must be a folder for a batch, and {out_dir} is a file")
    if args.workdir and same_file(args.workdir, out_dir):  # (a row's work directory is --workdir/<its video's name>)
        raise UserError(
            f"--workdir {args.workdir} is -o: a row's work directory would take the name of a file the batch writes "
            "there (report.json, a video); give --workdir a folder of its own"
        )
    check_lock_file(out_dir)  # (before the playlist's lines: another batch's -o is refused alone)
    entries = read_playlist(args.playlist, args.output)  # (-o: not counted among its subfolders)
    report = out_dir / REPORT_NAME
    check_output(report, "-o")
    check_creatable(report, "-o")
    # Every row is made a job and checked before the first song is rendered: a bad row costs nothing.
    from musicvid.models.choose import models_of
    from musicvid.models.footprint import UPSCALER_ROLES
    from musicvid.models.registry import registry_of  # (torch: not for the command line's start)

    choice = ModelChoice(**ModelChoice.given(args))
    jobs = jobs_of(args, entries, choice)
    check_report(report, jobs, args.playlist, bool(args.overwrite))
    choice.check_used((job.settings for job in jobs), any(job.request.separate_vocals for job in jobs))
    check_used(RenderSettings.given(args), (job.settings for job in jobs))
    if (said := making_only(SongRequest.given(args))) and all(job.request.storyboard_file for job in jobs):
        raise UserError(f"{said}, and every row names its storyboard")
    made = [job for job in jobs if job.same_as is None]
    earlier, places = earlier_outputs(report), earlier_workdirs(report)  # (read before this batch writes its own)
    # Before any render: a file edited while the batch runs is recorded as before it, so its row is made again.
    storyboards: dict = {}  # (each read once)
    recipes = {job.number: made_with(job, choice, storyboards) for job in jobs}
    recorded = {job.number: made_before(job, places) for job in made if not args.force}
    ours = [job for job in made if recorded.get(job.number)]
    skipped = {job.number for job in ours if earlier.get(report_key(job)) == recipes[job.number]}
    todo = [job for job in made if job.number not in skipped]
    changed = frozenset(job.number for job in todo if changed_since(job, earlier))
    own = {job.number: Workdir.of_song(job.request.song, job.request.workdir) for job in ours}
    moved = {job.number: recorded[job.number] for job in ours if recorded[job.number] != own[job.number]}
    with warnings_held():
        references = reference_only(RenderSettings.given(args), choice)
        check_jobs(todo, jobs, args.playlist, models_of(choice), changed | frozenset(moved), references)
    for job in (job for job in jobs if job.entry.lyrics_beside):  # (which file beside a song each row takes)
        log.warning(f"{job.where(args.playlist)}: lyrics {shown(job.entry.lyrics_beside)}")
    # The local engine renders with this registry; on Ray it only loads the upscaler to check it.
    here = choice if args.engine == "local" else dataclasses.replace(choice, device="auto")  # --device: the workers'
    registry = registry_of(here, keep_loaded=args.engine == "local")
    for role in {UPSCALER_ROLES[job.settings.fast] for job in todo if job.settings.resolution}:
        with registry.use(role):  # a bad --upscaler is refused now, not after the drawing
            pass
    plan = join_ray(args, choice) if todo and args.engine == "ray" else None  # its refusals before -o is made
    out_dir.mkdir(parents=True, exist_ok=True)
    with held_output(out_dir):
        for job in (job for job in todo if job.number in changed):
            take_over_outputs(job)
        for job in (job for job in ours if job.number not in skipped):
            print(f"{printable(job.song)}: made with other settings: rendering again", file=sys.stderr)
            if job.number in moved:  # (recorded in another folder's musicvid-work/)
                take_over_outputs(job, moved[job.number])
        writer = ReportWriter(report, args.playlist, len(jobs), other_batches_rows(report, jobs))
        homes = {number: str(place.root.absolute()) for number, place in recorded.items() if place}
        return run_held(args, choice, registry, jobs, skipped, writer, plan, (recipes, homes))


def run_held(args, choice, registry, jobs: list[Job], skipped: set[int], writer: ReportWriter, plan, made) -> int:
    """The batch's rows rendered, reported (`writer`, each row with its made_with and a skipped row with the work
    directory recording its outputs, by number: `made`) and tabled, with -o held by this batch."""
    results: dict[int, Result] = {}
    recipes, homes = made

    def finished(job: Job, result: Result) -> None:
        result = absolute_paths(result, job)  # (one form on both engines: a Ray job's paths are made absolute)
        result = dataclasses.replace(result, made_with=recipes[job.number] if result.status != "failed" else "")
        if result.status == "skipped":
            result = dataclasses.replace(result, workdir=homes.get(job.number, ""))
        results[job.number] = result
        told = f"{result.status}: {note(result)}" if note(result) else result.status
        print(f"[{len(results)}/{len(jobs)}] {printable(job.song)}: {told}", file=sys.stderr, flush=True)
        writer.add(job.number, result)

    try:
        run_jobs(args, choice, registry, jobs, skipped, finished, plan)
    finally:
        writer.close()  # the rows finished so far, however the batch ends (Ctrl-C, a failure)
    ordered = [results[n] for n in sorted(results)]
    print(table(ordered))
    ok = sum(result.status != "failed" for result in ordered)  # (a failed row's repeats are failed too)
    print(f"\n{ok}/{len(ordered)} songs ok; report: {writer.path}")
    return 0 if ok == len(ordered) else 1
