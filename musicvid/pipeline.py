"""The run, stage by stage, with the work directory caching what each one made.

audio -> transcript -> storyboard -> pictures (musicvid.pictures.render) -> video (musicvid.delivery.mux). Each stage
takes and returns plain dataclasses; the work directory keeps their JSON and PNGs so a rerun continues
where the last one stopped. make_video is the one way every front door (CLI, batch, page, benchmarks)
makes a video; get_storyboard the way to a storyboard alone.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import torch

from musicvid.audio import Audio, AudioInfo, find_beats, load_audio
from musicvid.delivery import captions
from musicvid.delivery.mux import encode_video, interpolate
from musicvid.delivery.upscale import Upscaler
from musicvid.errors import UserError
from musicvid.files import check_not_inputs, check_picture, file_sha256, same_file
from musicvid.form import mark_form
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.known import (
    PLAIN,
    check_line_count,
    check_lyrics_file,
    lyrics_label,
    read_lyrics,
    read_plain_lyrics,
)
from musicvid.lyrics.transcribe import transcribe
from musicvid.lyrics.transcript import Transcript
from musicvid.lyrics.vocals import separate_vocals
from musicvid.memory import follow, render_plan, upscaler_settings
from musicvid.models.loading import Drawing, weights_file
from musicvid.models.registry import ModelRegistry
from musicvid.outputs import (
    check_outputs,
    check_replaceable,
    default_output,
    inputs_of,
    outputs_of,
    write_output,
)
from musicvid.pictures import camera
from musicvid.pictures.elaborate import elaborate
from musicvid.pictures.pacing import accent_per_frame, motion_per_frame
from musicvid.pictures.render import (
    PendingPictures,
    Picture,
    job_pipeline,
    plan_pictures,
    render_pictures,
    stale_pictures,
    uses_reference,
    video_frames,
)
from musicvid.pictures.schedule import FrameSchedule, frame_schedule, to_frame
from musicvid.pictures.sheet import write_contact_sheet
from musicvid.pictures.transitions import (
    Transition,
    plan_transitions,
    render_transitions,
    stale_transitions,
    video_job,
)
from musicvid.review import fallback_note, unsure_note
from musicvid.run_report import run_summary
from musicvid.settings import RenderSettings, SongRequest
from musicvid.storyboard import (
    Storyboard,
    instrumental_cuts,
    load_storyboard,
    plan_scenes,
    scene_seed,
    snap_cuts_to_beats,
)
from musicvid.timing import Timings
from musicvid.workdir import Workdir
from vipe_core.files import write_json, write_text

log = logging.getLogger("musicvid")


def cached_transcript(path: Path, audio_sha256: str) -> Transcript | None:
    """The work directory's transcript of this audio; None where there is none, or it is unreadable
    (a cache is redone, not trusted)."""
    try:
        cached = Transcript.load(path)
    except (UserError, OSError, UnicodeDecodeError):
        return None
    return cached if cached.audio_sha256 == audio_sha256 else None


def get_transcript(
    audio: Audio, request: SongRequest, registry: ModelRegistry, workdir: Workdir, timings: Timings
) -> Transcript:
    """The timed lines: from a timed lyrics file; or known words (plain text) aligned by the ASR model;
    or recognized by it; on the vocals alone if asked. The work directory keeps what the ASR model made."""
    lyrics = request.lyrics_file
    if lyrics and lyrics.suffix.lower() != PLAIN:
        return read_lyrics(lyrics, audio.info.duration, audio.info.sha256)
    texts = read_plain_lyrics(lyrics) if lyrics else None
    if texts:
        check_line_count(len(texts), audio.info.duration, lyrics)
    path = workdir.transcript
    models = registry.models
    source = f"{models.asr_backend}:{models.asr}"
    if request.separate_vocals:
        source += f"+vocals:{models.separator}"
    if lyrics:
        source = f"aligned:{source}:{lyrics_label(lyrics)}"
    cached = cached_transcript(path, audio.info.sha256)
    if cached and cached.model == source:
        return cached
    samples = audio.samples
    if request.separate_vocals:
        with registry.use("separator", timings) as separator, timings.measure("separate vocals", registry.device):
            samples = separate_vocals(separator, Path(audio.info.path), samples.size, quiet=request.quiet)
    with registry.use("asr", timings) as asr, timings.measure("align" if texts else "transcribe", registry.device):
        if texts:
            transcript = align_lyrics(asr, samples, texts, audio.info.sha256, quiet=request.quiet)
        else:
            transcript = transcribe(asr, samples, audio.info.sha256, quiet=request.quiet)
    transcript.model = source  # what the cache is checked against
    transcript.save(path)
    return transcript


def storyboard_settings(request: SongRequest, registry: ModelRegistry, transcript: Transcript) -> dict:
    return {
        "context_size": request.context_size,
        "seed": request.seed,
        "break_seconds": request.break_seconds,
        "candidates": request.candidates,
        "lens": request.lens,
        "transcript": transcript.model,
        "models": registry.models.describe(),
    }


def _same_making(saved: Storyboard, settings: dict, title: str, artist: str) -> bool:
    """Whether a saved storyboard came from the same inputs (then it is reused, edits and all)."""
    keys = ("context_size", "seed", "break_seconds", "candidates", "lens", "transcript")
    # storyboards made before candidates and lenses existed were made with their defaults
    made_before = {"candidates": SongRequest.candidates, "lens": SongRequest.lens}
    return (
        all(saved.settings.get(k, made_before.get(k)) == settings[k] for k in keys)
        and (saved.settings.get("models") or {}).get("vipe") == settings["models"]["vipe"]
        and (saved.title, saved.artist) == (title, artist)
    )


def check_matches_audio(storyboard: Storyboard, info: AudioInfo, source: str) -> None:
    if abs(storyboard.duration - info.duration) > 0.05:
        raise UserError(
            f"storyboard {source} is for audio of {storyboard.duration:.2f} s, but {info.path} lasts {info.duration:.2f} s"
        )


def get_storyboard(
    request: SongRequest,
    registry: ModelRegistry,
    timings: Timings | None = None,
    wait: bool = False,
) -> tuple[Storyboard, Workdir, Audio]:
    """Transcribe and elaborate (or reuse what the work directory has); returns the storyboard,
    the work directory and the decoded audio. The work directory is held while it is written
    (musicvid.workdir; `wait`: for another run to let it go, else refused)."""
    timings = timings if timings is not None else Timings()
    check_inputs(request)
    audio = decode_song(request, timings)
    with song_workdir(request, audio, wait) as workdir:
        return storyboard_in(workdir, request, registry, audio, timings), workdir, audio


@contextmanager
def song_workdir(request: SongRequest, audio: Audio, wait: bool) -> Iterator[Workdir]:
    """The request's work directory, held by this run (musicvid.workdir; `wait`: for another run to let it
    go, else refused) and checked again, now that no other run writes it, to hold no other song's work."""
    workdir = Workdir.of_request(request)
    with workdir.held(wait):
        workdir.check_song(request.song, audio.info.sha256)
        yield workdir


def check_inputs(request: SongRequest, settings: RenderSettings | None = None) -> None:
    """The files a request names, checked before any work: the lyrics, and a storyboard (its every field,
    and its pinned pictures); a work directory that cannot be one, that holds another song's work, or
    whose files are among the inputs."""
    if request.lyrics_file:
        check_lyrics_file(request.lyrics_file)
    storyboard = load_storyboard(request.storyboard_file) if request.storyboard_file else None
    if storyboard:
        check_pictures(storyboard)
    if request.workdir:
        Workdir(request.workdir).check()
    if request.song.is_file():
        workdir = Workdir.of_request(request)
        workdir.check_song(request.song, file_sha256(request.song))
        check_workdir_inputs(workdir, request, settings, storyboard)


def check_workdir_inputs(
    workdir: Workdir, request: SongRequest, settings: RenderSettings | None, storyboard: Storyboard | None
) -> None:
    """Refuse an input that is one of the files a run writes in its work directory (a song named
    video.mp4 there, lyrics in its lyrics.srt): no input is an output. The work directory's own
    storyboard.json may be rendered (it is then not written), and its transcript.json read as lyrics
    (a timed file: nothing is transcribed, so it is not written)."""
    for what, path in inputs_of(request, storyboard, settings).items():
        name = workdir.holds(path)
        read_only = {"storyboard": "storyboard.json", "lyrics file": "transcript.json"}.get(what)
        if name is not None and name != read_only:
            where = f"lies in the work directory's {name}" if name.endswith("/") else f"is the work directory's {name}"
            raise UserError(
                f"the {what} {path} {where}, which the run writes: copy it elsewhere first, or give another --workdir"
            )


def check_pictures(storyboard: Storyboard) -> None:
    for scene in storyboard.scenes:
        if scene.picture:
            check_picture(Path(scene.picture), f"pinned picture of scene {scene.index}")
        if scene.reference:
            check_picture(Path(scene.reference), f"reference picture of scene {scene.index}")


def check_drawing_inputs(settings: RenderSettings) -> None:
    """The reference picture's header, and that each style LoRA is a file or is found on the hub (fetched
    now, on a first run, rather than after the storyboard's work)."""
    if settings.reference:
        check_picture(settings.reference, "reference picture")
    for lora in settings.lora:
        weights_file(lora.source, "style LoRA")


def decode_song(request: SongRequest, timings: Timings) -> Audio:
    with timings.measure("decode audio"):
        return load_audio(request.song, request.max_seconds)


def storyboard_in(
    workdir: Workdir, request: SongRequest, registry: ModelRegistry, audio: Audio, timings: Timings
) -> Storyboard:
    """The storyboard of `request` in a work directory this run holds."""
    info = audio.info
    path = workdir.storyboard
    title = request.title if request.title is not None else info.title
    artist = request.artist if request.artist is not None else info.artist

    if request.storyboard_file:
        storyboard = load_storyboard(request.storyboard_file)
        check_matches_audio(storyboard, info, str(request.storyboard_file))
    else:
        transcript = get_transcript(audio, request, registry, workdir, timings)
        settings = storyboard_settings(request, registry, transcript)
        saved = load_storyboard(path) if path.exists() else None
        if saved and _same_making(saved, settings, title, artist):
            check_matches_audio(saved, info, str(path))
            storyboard = saved
        else:
            scenes = plan_scenes(transcript.lines, info.duration, request.break_seconds)
            if instrumental_cuts(scenes):  # beat tracking costs seconds: only when there is a cut to place
                with timings.measure("beats"):
                    snap_cuts_to_beats(scenes, find_beats(audio.samples).seconds)
            storyboard = Storyboard(
                audio={"path": info.path, "sha256": info.sha256, "duration": info.duration},
                title=title,
                artist=artist,
                language=transcript.language,
                settings=settings,
                scenes=scenes,
            )
            read_form(storyboard, audio, timings, planned=True)
            for scene in storyboard.scenes:
                scene.seed = scene_seed(request.seed, scene.motif or scene.index)
    read_form(storyboard, audio, timings)  # a storyboard made before sections, or a section cleared
    if not request.storyboard_file:  # a file's pictures were decoded whole by check_inputs already
        check_pictures(storyboard)

    if any(not s.prompt.strip() for s in storyboard.scenes):
        with registry.use("vipe", timings) as vipe, timings.measure("elaborate", registry.device):
            elaborate(
                storyboard,
                vipe,
                context_size=request.context_size,
                seed=request.seed,
                candidates=request.candidates,
                lens=request.lens,
                quiet=request.quiet,
            )
    if not (request.storyboard_file and same_file(request.storyboard_file, path)):  # an input is never rewritten
        storyboard.audio = {**storyboard.audio, "path": info.path, "sha256": info.sha256}  # of this song now
        storyboard.save(path)
    return storyboard


def read_form(storyboard: Storyboard, audio: Audio, timings: Timings, planned: bool = False) -> None:
    """Sections, motifs and moods for the scenes without a section (musicvid.form); scenes just `planned`
    may be cut where the music changes."""
    if any(s.section is None for s in storyboard.scenes):
        with timings.measure("form"):
            mark_form(storyboard.scenes, audio.samples, planned)


@dataclass(frozen=True)
class Video:
    """What make_video made, and what it cost."""

    video: Path  # the MP4 at the output path
    subtitles: Path  # its .srt beside it
    workdir: Workdir
    storyboard: Storyboard
    duration: float  # seconds of song
    frames: int  # in the video (at --output-fps where given)
    pictures_drawn: int  # pictures drawn anew in this run; the rest were kept from an earlier one
    timings: dict  # seconds per stage, as in timings.json


def check_before_work(request: SongRequest, settings: RenderSettings, output: Path, named: bool = True) -> None:
    """Everything a render will read or write outside the models that can be checked before its first
    second of work: its outputs (those beside the `named` -o video replaced only if musicvid wrote them
    for this song), the files it names, and its work directory (a batch checks every row so)."""
    check_outputs(request, settings, output)
    check_inputs(request, settings)
    check_drawing_inputs(settings)
    if request.song.is_file():  # a batch reports a missing song at its turn
        workdir = Workdir.of_request(request)
        replaced = outputs_of(output, settings)[1:] if named else outputs_of(output, settings)
        check_replaceable(replaced, workdir, request.overwrite)


@dataclass(frozen=True)
class PicturePlan:
    """The pictures of a render, and which of them draw_pictures is to write (`stale`: missing, or drawn
    from other inputs): Stable Diffusion's groups, and with --transitions video the video model's
    transitions between the keyframes (SD then draws the keyframes alone, as with `settings.preview`)."""

    drawing: Drawing
    sd_settings: RenderSettings
    groups: list[list[Picture]]
    transitions: list[Transition]
    stale: set[Path]


def plan_drawing(
    storyboard: Storyboard, schedule: FrameSchedule, settings: RenderSettings, registry: ModelRegistry, workdir: Workdir
) -> PicturePlan:
    """Every picture of `schedule` keyed by its inputs (keyframes alone with `settings.preview`), and
    which of them a killed run left undone or an edit made stale."""
    by_video = settings.transitions == "video" and not settings.preview
    drawing = Drawing(settings.fast, settings.lora, uses_reference(storyboard, settings))
    sd_settings = dataclasses.replace(settings, preview=True) if by_video else settings
    groups = plan_pictures(storyboard, schedule, sd_settings, drawing.key(registry.models), workdir)
    transitions = []
    if by_video:
        keyframes = {group[0].scene: group[0] for group in groups}
        transitions = plan_transitions(schedule, settings, keyframes, registry.models.video, workdir)
    stale = stale_pictures(groups, settings) | stale_transitions(transitions, settings)
    return PicturePlan(drawing, sd_settings, groups, transitions, stale)


def draw_pictures(
    plan: PicturePlan,
    storyboard: Storyboard,
    settings: RenderSettings,
    registry: ModelRegistry,
    workdir: Workdir,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None,
    on_saved: Callable[[Path], object] = lambda path: None,
) -> int:
    """The plan's stale pictures; returns how many were drawn. With --transitions video, Stable Diffusion
    draws the keyframes, then the video model the frames between them (musicvid.pictures.transitions).
    `on_saved` hears of each picture once it is on disk."""
    drawn = 0
    if any(p.path in plan.stale for group in plan.groups for p in group):
        drawn += draw_keyframes_and_morphs(plan, storyboard, registry, timings, quiet, stop, on_saved)
    if any(p.path in plan.stale for t in plan.transitions for p in t.pictures):
        # (Stable Diffusion is released by now: no name here holds it while the video model loads)
        with registry.use("video", timings) as loaded:
            job = video_job(loaded, settings, registry.offloads("transitions"))
            drawn += render_transitions(
                job, storyboard, plan.transitions, plan.stale, settings, workdir, timings, quiet, stop, on_saved
            )
    return drawn


def draw_keyframes_and_morphs(
    plan: PicturePlan,
    storyboard: Storyboard,
    registry: ModelRegistry,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None,
    on_saved: Callable[[Path], object],
) -> int:
    """Stable Diffusion's pictures of the plan, in a function of their own so that its pipeline and the job
    made of it are let go when it returns."""
    with registry.use(plan.drawing, timings) as loaded:
        job = job_pipeline(loaded, plan.sd_settings, registry.offloads("pictures"))
        return render_pictures(
            job, storyboard, plan.groups, plan.stale, plan.sd_settings, timings, quiet, stop, on_saved
        )


@dataclass(frozen=True)
class Keyframes:
    """What draw_keyframes made."""

    storyboard: Storyboard
    workdir: Workdir
    contact_sheet: Path
    pictures_drawn: int
    scenes: list[int]  # the shown scenes, whose keyframes are workdir.keyframe(scene)


def draw_keyframes(
    request: SongRequest,
    settings: RenderSettings,
    registry: ModelRegistry,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
    wait: bool = False,
) -> Keyframes:
    """Song -> storyboard, each shown scene's keyframe and the contact sheet (docs/frames.md). The
    keyframes are the very pictures a render draws first, so a render after this draws only the morphs;
    a scene whose seed or prompt was edited since gets its keyframe redrawn, and no other does. `wait`:
    for another run to let the work directory go, else that is refused."""
    timings = timings if timings is not None else Timings()
    check_inputs(request, settings)
    check_drawing_inputs(settings)
    render_plan(registry, request, dataclasses.replace(settings, preview=True))  # on CUDA: what it fits in
    audio = decode_song(request, timings)
    check_frames(audio.info.duration, settings)
    with song_workdir(request, audio, wait) as workdir:
        workdir.remove_leftovers()
        storyboard = storyboard_in(workdir, request, registry, audio, timings)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
        keyframes_only = dataclasses.replace(settings, preview=True)
        plan = plan_drawing(storyboard, schedule, keyframes_only, registry, workdir)
        drawn = draw_pictures(plan, storyboard, keyframes_only, registry, workdir, timings, request.quiet, stop)
        sheet = write_contact_sheet(storyboard, workdir, schedule.shown_scenes)
    return Keyframes(storyboard, workdir, sheet, drawn, schedule.shown_scenes)


def check_frames(duration: float, settings: RenderSettings) -> None:
    """A song too short for one frame at the drawn rate makes no video (refused before any work)."""
    if to_frame(duration, settings.fps) < 1:
        raise UserError(f"the song lasts {duration:.3f} s: at --fps {settings.fps:g} that is not one frame of video")


def on_the_beat(
    audio: Audio, duration: float, settings: RenderSettings, timings: Timings
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per drawn frame, how far the morphs move (--pacing beats) and the beats' accent (--pulse); None
    for what is not asked for (the beats are only tracked if one is)."""
    if settings.pacing != "beats" and not settings.pulse:
        return None, None
    frame_count = to_frame(duration, settings.fps)
    with timings.measure("beats"):
        beats = find_beats(audio.samples)
    motion = motion_per_frame(beats, settings.fps, frame_count) if settings.pacing == "beats" else None
    accent = accent_per_frame(beats, settings.fps, frame_count) if settings.pulse else None
    return motion, accent


def lyrics_script(storyboard: Storyboard, settings: RenderSettings, workdir: Workdir, audio_sha256: str) -> Path | None:
    """The lyrics on screen as an ASS script at the video's size (karaoke: each word's time, Whisper's
    where it heard the line); None without captions."""
    if settings.captions == "none":
        return None
    words = None
    if settings.captions == "karaoke":
        words = captions.word_times(storyboard, cached_transcript(workdir.transcript, audio_sha256))
    captions.write_script(workdir.lyrics_script, captions.ass_script(storyboard, *settings.video_size, words))
    return workdir.lyrics_script


def mux_video(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    audio: Audio,
    settings: RenderSettings,
    workdir: Workdir,
    script: Path | None,
    accent: np.ndarray | None,
    upscale: Upscaler | None,
    timings: Timings,
    ready: Callable[[Path], object] = lambda path: None,
) -> Path:
    """The work directory's video: the drawn frames through the camera, at the output rate and size,
    encoded with the song and the lyrics' `script` burned in (docs/frames.md, "Delivery"). One ffmpeg
    does all but the camera and a learned upscaler. That network sees the drawn frames where the frames
    between are blends (a third of the frames, at 30 fps from 10; the blends are made at the video's
    size); minterpolate's motion search is too slow at the video's size (2 frames/s at 1080p), so there
    the frames between are made at the drawn size first and come back to be upscaled. Each picture is
    read once `ready(path)` returns."""
    video = workdir.video(settings.preview)
    views = camera.views(schedule, settings.motion, accent, settings.pulse)
    drawn = video_frames(storyboard, schedule, workdir, settings, ready)
    frames = (camera.look_through(frame, view) for frame, view in zip(drawn, views))
    frame_count = to_frame(storyboard.duration, settings.video_fps)
    rate = dict(output_fps=settings.output_fps, interpolator=settings.interpolator, frame_count=frame_count)
    (width, height), fps = settings.size, settings.fps
    with timings.measure("mux"):
        if upscale is not None and settings.output_fps and settings.interpolator == "minterpolate":
            frames = interpolate(frames, width=width, height=height, fps=fps, **rate)
            rate, fps = {}, settings.video_fps
        if upscale is not None:
            frames, (width, height) = upscale(frames), settings.video_size
        encode_video(
            frames,
            width=width,
            height=height,
            fps=fps,
            **rate,
            video_size=settings.video_size,
            audio=Path(audio.info.path),
            output=video,
            subtitles=script,
        )
    return video


def delivers_while_drawing(device: torch.device) -> bool:
    """Whether the delivery (on the CPU) runs beside a drawing on `device`: only where that is not the CPU."""
    return device.type != "cpu"


def draw_and_deliver(
    plan: PicturePlan,
    storyboard: Storyboard,
    schedule: FrameSchedule,
    audio: Audio,
    settings: RenderSettings,
    registry: ModelRegistry,
    workdir: Workdir,
    script: Path | None,
    accent: np.ndarray | None,
    upscale: Upscaler | None,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None,
) -> tuple[int, Path]:
    """The plan's pictures drawn while the video is delivered from them (mux_video) in another thread,
    each frame as soon as its picture is written: on a GPU the CPU's part of the delivery (interpolation,
    scaling, captions, x264) then ends about when the drawing does instead of starting there. The frames
    reach ffmpeg in the same order with the same bytes as after the drawing, so the video is the same.
    Returns the pictures drawn and the video. A drawing that fails or is stopped ends the delivery too,
    leaving no video; "mux" counts the delivery's time but not its waits for pictures.

    Where the pictures are drawn on the CPU the delivery waits for the drawing instead: both then share
    the same cores, and overlapped they took 11% more wall time and 20% more CPU time on two cores."""
    if not delivers_while_drawing(registry.device):
        drawn = draw_pictures(plan, storyboard, settings, registry, workdir, timings, quiet, stop)
        return drawn, mux_video(storyboard, schedule, audio, settings, workdir, script, accent, upscale, timings)
    pending = PendingPictures(plan.stale)

    def ready(path: Path) -> None:
        with timings.waiting("mux"):
            pending.wait(path)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deliver") as delivery:
        video = delivery.submit(
            mux_video, storyboard, schedule, audio, settings, workdir, script, accent, upscale, timings, ready
        )
        try:
            drawn = draw_pictures(plan, storyboard, settings, registry, workdir, timings, quiet, stop, pending.saved)
        finally:
            pending.close()  # a delivery waiting for a picture never drawn stops there
        return drawn, video.result()


def copy_out(storyboard: Storyboard, workdir: Workdir, video: Path, script: Path | None, output: Path) -> None:
    """The video to `output`, with its .srt (also kept in the work directory) and, for editors, the
    lyrics' .ass beside it; each recorded as this song's (musicvid.outputs)."""
    subtitles = captions.srt(storyboard)
    write_text(workdir.subtitles, subtitles)
    if output.resolve() != video.resolve():
        write_output(workdir, output, copy_of=video)
    write_output(workdir, output.with_suffix(".srt"), subtitles)
    if script is not None:
        write_output(workdir, output.with_suffix(".ass"), script.read_text(encoding="utf-8"))


def warn_of_doubts(storyboard: Storyboard, captioned: bool) -> None:
    """Log what a person should look at: lyrics that may be misheard, prompts that fell back to their
    lyric and, with lyrics on screen (only they need glyphs), characters no caption font draws."""
    undrawn = captions.undrawn_note(storyboard) if captioned else ""
    for note in (unsure_note(storyboard), fallback_note(storyboard), undrawn):
        if note:
            log.warning(note)


def make_video(
    request: SongRequest,
    settings: RenderSettings,
    registry: ModelRegistry,
    output: Path | None = None,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
    wait: bool = False,
) -> Video:
    """Song -> music video, with its .srt beside it (beside the song unless `output` names the video).
    `wait`: for another run to let the work directory go, else that is refused. Setting `stop` ends the
    run within one denoising step (what is written stays, for a resume)."""
    # 1. check inputs, before any work: the outputs (none may be an input, none replaces a file that is
    #    not ours), the files the request names, its work directory, and that the song lasts a frame
    check_before_work(request, settings, output or default_output(request, settings), named=output is not None)
    #    and on CUDA the memory plan (musicvid.memory): the batches and offloads that fit, or a refusal
    settings = follow(settings, render_plan(registry, request, settings))
    output = output or default_output(request, settings)
    timings = timings if timings is not None else Timings()
    started = time.perf_counter()
    audio = decode_song(request, timings)
    check_frames(audio.info.duration, settings)
    # 2. load the upscaler (a broken file is named now, not after the drawing); hold the work directory
    with (
        registry.use("upscaler", timings) if settings.resolution else nullcontext() as upscaler,
        song_workdir(request, audio, wait) as workdir,
    ):
        workdir.remove_leftovers(output)
        # 3. storyboard: made, or reused from the work directory with its edits; its pinned pictures are
        #    inputs too
        storyboard = storyboard_in(workdir, request, registry, audio, timings)
        check_not_inputs(outputs_of(output, settings), inputs_of(request, storyboard, settings))
        check_workdir_inputs(workdir, request, settings, storyboard)
        # 4. frame schedule, paced by the beats if asked
        motion, accent = on_the_beat(audio, storyboard.duration, settings, timings)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps, motion)
        # 5. the pictures to draw: those whose inputs changed, or that a killed run left undone
        plan = plan_drawing(storyboard, schedule, settings, registry, workdir)
        # 6. lyrics on screen
        script = lyrics_script(storyboard, settings, workdir, audio.info.sha256)
        # 7. the pictures drawn while their frames are delivered and muxed with the song
        planned = upscaler_settings(registry.plan)  # its batch and input
        upscale = Upscaler(upscaler, settings.video_size, **planned) if upscaler is not None else None
        drawn, video = draw_and_deliver(
            plan, storyboard, schedule, audio, settings, registry, workdir, script, accent, upscale, timings,
            request.quiet, stop,
        )  # fmt: skip
        # 8. the copy to `output`, its subtitles, timings.json
        copy_out(storyboard, workdir, video, script, output)
        summary = run_summary(
            timings, registry.device, schedule, storyboard.duration, settings, drawn, upscale, started
        )
        write_json(workdir.timings, summary)
    # 9. what a person should look at
    warn_of_doubts(storyboard, captioned=script is not None)
    return Video(
        output,
        output.with_suffix(".srt"),
        workdir,
        storyboard,
        audio.info.duration,
        summary["video_frames"],
        drawn,
        summary,
    )
