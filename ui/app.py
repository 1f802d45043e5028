"""The web page: upload a song, review and edit the storyboard, render, watch and download.

It calls the same pipeline functions as the command line (get_storyboard, make_video). Models are
loaded once per process and kept; one job runs at a time, whichever button started it (one Gradio
concurrency group, and a lock under it for any other caller), and the others wait in Gradio's queue,
seeing their place in it. Every job works in a directory of its own, belongs to the browser session
that made it, and is removed after a while.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import gradio as gr
from gradio.utils import get_upload_folder

from musicvid.assets import DEMO_SONG
from musicvid.audio import check_length, read_tags
from musicvid.errors import Cancelled, MusicvidError, UserError
from musicvid.files import check_file, check_picture
from musicvid.lyrics.known import PLAIN, starts_with_time
from musicvid.models import PRESETS, ModelRegistry, choose_models
from musicvid.pictures.render import keyframe_path
from musicvid.pipeline import draw_keyframes, get_storyboard, make_video
from musicvid.settings import RenderSettings, SongRequest
from musicvid.storyboard import Storyboard, fallback_note, parse_storyboard, unsure_note
from ui.config import UIConfig
from ui.controls import FOLLOWERS, SIZES, bounds, choices, chosen, chosen_request, followed, shown_controls, summary
from vipe_core.files import write_json

COLUMNS = ["start", "end", "kind", "lyric", "visual prompt"]
JOB_ID = re.compile(r"[0-9a-f]{12}")
MODELS_IN_USE = "models"  # the Gradio concurrency group of every event that runs the models
NO_STORYBOARD = "make the storyboard first (or press Make video)"


class Jobs:
    """Per-job directories under one root, each owned by the browser session that made it; models
    shared by all jobs (one registry per preset) and used by one job at a time.

    A job directory: `song/<the upload>`, `lyrics/`, `work/` (the pipeline's), then the results."""

    def __init__(self, config: UIConfig):
        self.config = config
        self.registries: dict[str, ModelRegistry] = {}
        self.stops: dict[str, threading.Event] = {}  # each browser session's running render
        self.owners: dict[str, str] = {}  # job -> the session that made it
        self.page_storyboards: dict[str, str] = {}  # session -> the job of the storyboard last sent to its page
        self.models_lock = threading.Lock()  # whatever runs a model holds it, across presets
        self.root = config.jobs_dir.resolve()  # absolute: the prefix `fail` takes off the files messages name
        self.root.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def running(self, session: str) -> Iterator[threading.Event]:
        """A stop flag for the session's job while it runs. Gradio's cancel only stops waiting for a
        function; the work itself, in a worker thread, stops when the Cancel button sets this."""
        self.stops[session] = flag = threading.Event()
        try:
            yield flag
        finally:
            if self.stops.get(session) is flag:
                del self.stops[session]

    def cancel(self, session: str) -> None:
        if session in self.stops:
            self.stops[session].set()

    def registry(self, preset: str) -> ModelRegistry:
        if preset not in self.registries:
            self.registries[preset] = ModelRegistry(choose_models(preset), self.config.device, keep_loaded=True)
        return self.registries[preset]

    def new(self, upload: str, session: str) -> tuple[str, Path]:
        """A fresh job (its id, and the copy of the upload in its directory); old jobs go first. The
        upload is checked before anything is copied: a file, and not longer than the page accepts."""
        self.remove_old()
        check_file(Path(upload), "audio file")
        check_length(Path(upload), self.config.max_minutes * 60)
        job = uuid.uuid4().hex[:12]
        song = self.root / job / "song" / Path(upload).name
        song.parent.mkdir(parents=True)
        shutil.copyfile(upload, song)
        self.owners[job] = session
        return job, song

    def discard(self, job: str) -> None:
        """A job whose song was refused, or an old one: nothing of it stays."""
        self.owners.pop(job, None)
        for session in [s for s, on_page in self.page_storyboards.items() if on_page == job]:
            del self.page_storyboards[session]
        shutil.rmtree(self.root / job, ignore_errors=True)

    @staticmethod
    def lyrics(song: Path, text: str) -> Path | None:
        """The pasted lyrics as a file beside the job's song: timed LRC if its lines start with times,
        else plain lines for Whisper to time; None if nothing was pasted."""
        if not text.strip():
            return None
        suffix = ".lrc" if any(starts_with_time(line) for line in text.splitlines()) else PLAIN
        path = song.parent.parent / "lyrics" / f"lyrics{suffix}"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def song(self, job: str, session: str) -> Path:
        """The song of a job this session made, with its storyboard; anything else (a path, another
        session's job, a job with no storyboard yet) is refused, without saying what the server holds."""
        ours = JOB_ID.fullmatch(job or "") and self.owners.get(job) == session
        folder = self.root / job / "song" if ours else None
        songs = [p for p in folder.iterdir() if p.is_file()] if folder and folder.is_dir() else []
        if len(songs) != 1 or not (folder.parent / "work" / "storyboard.json").is_file():
            raise UserError(NO_STORYBOARD)
        return songs[0]

    def remove_old(self) -> None:
        limit = time.time() - self.config.keep_hours * 3600
        for job in self.root.iterdir():
            if job.is_dir() and job.stat().st_mtime < limit:
                self.discard(job.name)


def rows(storyboard: Storyboard) -> list[list]:
    return [[round(s.start, 2), round(s.end, 2), s.kind, s.text, s.prompt] for s in storyboard.scenes]


def apply_edits(saved: dict, table) -> dict:
    """The saved storyboard with the table's times, kinds, lyrics and prompts; checked like a file."""
    data = table.values.tolist() if hasattr(table, "values") else table["data"] if isinstance(table, dict) else table
    if len(data) != len(saved["scenes"]):
        raise UserError("the scene table must keep one row per scene (edit the cells, not the rows)")
    edited = json.loads(json.dumps(saved))
    for scene, (start, end, kind, lyric, prompt) in zip(edited["scenes"], data):
        made = (scene["start"], scene["end"], scene["text"])
        try:
            scene.update(start=float(start), end=float(end))
        except (TypeError, ValueError):
            raise UserError(f"row {scene['index'] + 1}: start and end must be numbers of seconds") from None
        if str(prompt or "") != scene["prompt"]:
            scene.pop("fallback", None)  # the person wrote this prompt
        if (round(scene["start"], 2), round(scene["end"], 2), str(lyric or "")) != (
            round(made[0], 2),
            round(made[1], 2),
            made[2],
        ):
            scene.pop("confidence", None)  # ... or checked this lyric
        scene.update(kind=str(kind).strip(), text=str(lyric or ""), prompt=str(prompt or ""))
    try:
        parse_storyboard(edited, "table")
    except UserError as error:  # name the row as the person sees it: 1-based
        message = str(error).replace("storyboard table: ", "")
        for i in range(len(data)):
            message = message.replace(f"scenes[{i}]", f"row {i + 1}")
        raise UserError(message) from None
    return edited


def build_app(config: UIConfig = UIConfig()):
    jobs = Jobs(config)
    max_seconds = config.max_minutes * 60

    def by_name(values: dict) -> dict:
        """The settings controls' values by name (`controls` is made with the page, below)."""
        return {name: values[component] for name, component in controls.items()}

    # A message on the page names a file by its name alone: where the server keeps it (the jobs' folder,
    # Gradio's for uploads) is no business of the person's.
    folders = "|".join(re.escape(str(folder)) for folder in (jobs.root, Path(get_upload_folder()).resolve()))
    server_folders = re.compile(rf"(?:{folders})(?:/[^/\s]+)*/")

    def fail(error: MusicvidError):
        return gr.Error(server_folders.sub("", str(error)), print_exception=False)

    def fill_tags(upload):
        if not upload:
            return gr.update(), gr.update()
        title, artist = read_tags(Path(upload))
        return title, artist

    def storyboard_job(values: dict, session: str) -> tuple[Storyboard, str]:
        """A new job and its storyboard; the job is removed again if its song is refused."""
        if not values[upload]:
            raise UserError("upload a song first")
        chosen(by_name(values))  # bad settings are refused before the copy
        job, song = jobs.new(values[upload], session)
        try:
            request = SongRequest(
                song=song,
                title=values[title] or None,
                artist=values[artist] or None,
                workdir=song.parent.parent / "work",
                lyrics_file=jobs.lyrics(song, values[lyrics] or ""),
                max_seconds=max_seconds,
                **chosen_request(by_name(values)),
            )
            storyboard, _, _ = get_storyboard(request, jobs.registry(values[preset]))
        except BaseException:
            jobs.discard(job)
            raise
        return storyboard, job

    def pressed(values: dict, session: str) -> tuple[str, object]:
        """The job and table a button sent. The browser sends them as they are at the press, and the job then
        waits in the queue for the models: a press while this session's storyboard was being made sent no job,
        and means that storyboard, as made (its table was not on the page to edit)."""
        if values[job]:
            return values[job], values[table]
        return jobs.page_storyboards.get(session, ""), None

    def edited_request(values: dict, table_rows, job_id: str, session: str, change=None):
        """The job's song with its storyboard as the table shows it (as made where no table is given),
        with `change` (field, value) made to the chosen scene, and the page's settings."""
        settings = chosen(by_name(values))
        song = jobs.song(job_id, session)
        folder = song.parent.parent
        edited = json.loads((folder / "work" / "storyboard.json").read_text(encoding="utf-8"))
        if table_rows is not None:
            edited = apply_edits(edited, table_rows)
        if change is not None:
            chosen_scene = values[scene]
            number = int(chosen_scene) if isinstance(chosen_scene, (int, float)) else -1
            if not 0 <= number < len(edited["scenes"]):
                raise UserError(f"there is no scene {chosen_scene}: click a keyframe to choose one")
            field, value = change
            edited["scenes"][number][field] = value
        storyboard_file = folder / "storyboard.edited.json"
        write_json(storyboard_file, edited)
        request = SongRequest(
            song=song,
            title=values[title] or None,
            artist=values[artist] or None,
            workdir=folder / "work",
            storyboard_file=storyboard_file,
            max_seconds=max_seconds,
            **chosen_request(by_name(values)),
        )
        return request, settings

    def render_job(values: dict, table_rows, job_id: str, session: str, stop: threading.Event):
        request, settings = edited_request(values, table_rows, job_id, session)
        made = make_video(
            request,
            settings,
            jobs.registry(values[preset]),
            output=request.song.parent.parent / f"{request.song.stem}{'.preview' if settings.preview else ''}.mp4",
            stop=stop,
        )
        files = [str(made.video), str(made.workdir / "storyboard.json"), str(made.subtitles)]
        if settings.captions != "none":
            files.append(str(made.video.with_suffix(".ass")))
        return str(made.video), files

    def keyframes_job(values: dict, session: str, change=None):
        """Each scene's keyframe (only those whose seed, prompt or picture changed are drawn), for the
        gallery."""
        with jobs.running(session) as stop, jobs.models_lock:
            job_id, table_rows = pressed(values, session)
            request, settings = edited_request(values, table_rows, job_id, session, change)
            made = draw_keyframes(request, settings, jobs.registry(values[preset]), stop=stop)
        scenes = made.storyboard.scenes
        pictures = [
            (str(keyframe_path(made.workdir, i)), f"{i}: {scenes[i].text or scenes[i].kind}") for i in made.scenes
        ]
        files = [str(made.contact_sheet), str(made.workdir / "storyboard.json")]
        drawn = f"{made.pictures_drawn} drawn" if made.pictures_drawn else "none changed"
        status = (
            f"Keyframes ready ({drawn}): click one, then New picture to draw it again or Pin picture to use "
            "your own; Render draws the rest."
        )
        return pictures, made.scenes, files, status

    def storyboard_status(storyboard: Storyboard) -> str:
        status = "Storyboard ready: edit any prompt or time, then press Render."
        for note in (unsure_note(storyboard, name="rows", first=1), fallback_note(storyboard, name="rows", first=1)):
            if note:
                status += f"\n\n**Note:** {note}."
        return status

    # Each handler takes the page's inputs as one dict, component -> value (Gradio passes a set of
    # inputs so; their order in the API is the order the components were made in).
    def make_storyboard(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        try:
            with jobs.models_lock:
                storyboard, job_id = storyboard_job(values, request.session_hash)
                jobs.page_storyboards[request.session_hash] = job_id
        except MusicvidError as error:
            raise fail(error) from None
        return rows(storyboard), job_id, storyboard_status(storyboard)

    def render(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        session = request.session_hash
        try:
            with jobs.running(session) as stop, jobs.models_lock:
                job_id, table_rows = pressed(values, session)
                video_path, files = render_job(values, table_rows, job_id, session, stop)
        except MusicvidError as error:
            raise fail(error) from None
        return video_path, files, job_id, "Done: watch it above, or download the video, storyboard and lyrics."

    def keyframes(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        try:
            return keyframes_job(values, request.session_hash)
        except MusicvidError as error:
            raise fail(error) from None

    def new_picture(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        seed = secrets.randbelow(SongRequest.fields()["seed"].metadata["high"] + 1)
        try:
            return keyframes_job(values, request.session_hash, change=("seed", seed))
        except MusicvidError as error:
            raise fail(error) from None

    def pin_picture(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        """The uploaded picture, kept in the job's folder, becomes the chosen scene's keyframe."""
        try:
            if not values[pin_upload]:
                raise UserError("choose a picture to pin first")
            check_picture(Path(values[pin_upload]))  # its size from its header: nothing is decoded yet
            job_id, _ = pressed(values, request.session_hash)
            pins = jobs.song(job_id, request.session_hash).parent.parent / "pins"
            pins.mkdir(exist_ok=True)
            kept = pins / f"{uuid.uuid4().hex[:12]}{Path(values[pin_upload]).suffix.lower()}"
            shutil.copyfile(values[pin_upload], kept)
            return keyframes_job(values, request.session_hash, change=("picture", str(kept)))
        except MusicvidError as error:
            raise fail(error) from None

    def choose_scene(shown: list[int], selected: gr.SelectData) -> int:
        return shown[selected.index]

    def video_in_one_go(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
        session = request.session_hash
        # one flag for both steps: a Cancel while the storyboard is made stops the render before it starts
        try:
            with jobs.running(session) as stop, jobs.models_lock:
                storyboard, job_id = storyboard_job(values, session)
                if stop.is_set():
                    raise Cancelled("the job was cancelled")
                video_path, files = render_job(values, rows(storyboard), job_id, session, stop)
                jobs.page_storyboards[session] = job_id
        except MusicvidError as error:
            raise fail(error) from None
        return (
            rows(storyboard),
            video_path,
            files,
            job_id,
            "Done: watch it above, or download the video, storyboard and lyrics.",
        )

    # Gradio's own copies of uploads and results age out with the job directories.
    keep_seconds = int(config.keep_hours * 3600)
    with gr.Blocks(title="musicvid", delete_cache=(max(60, keep_seconds // 4), keep_seconds)) as app:
        gr.Markdown(
            "# musicvid\nTurn a song into a music video whose pictures show what the lyrics *mean*. "
            "Upload a song: Whisper finds the lyrics, ViPE turns each line into a picture idea, "
            "Stable Diffusion draws it, and the pictures morph from line to line in time with the singing. "
            "Review the storyboard before rendering, or make the video in one go."
        )
        with gr.Row():
            with gr.Column():
                upload = gr.Audio(sources=["upload"], type="filepath", label="Song (MP3, WAV, FLAC, M4A, OGG …)")
                title = gr.Textbox(label="Title")
                artist = gr.Textbox(label="Artist")
                lyrics = gr.Textbox(
                    label="Lyrics (optional)",
                    lines=4,
                    max_lines=20,
                    placeholder="Paste the words, one sung line per line: Whisper finds when each is "
                    "sung. Timed LRC lines work too. Empty: Whisper listens for them.",
                )
                # each control as the page shows it untouched, its range and choices from its setting
                shows = shown_controls(config.models)
                with gr.Accordion("Advanced", open=False):
                    preset = gr.Dropdown(
                        list(PRESETS), value=config.models, label="Models (tiny: offline, noise pictures)"
                    )
                    fps = gr.Number(shows["fps"], label="Frames per second", **bounds(RenderSettings, "fps"))
                    context_size = gr.Slider(
                        value=SongRequest.context_size,
                        label="Lyric lines of context for ViPE",
                        **bounds(SongRequest, "context_size"),
                    )
                    steps = gr.Number(
                        shows["steps"], label="Denoising steps", precision=0, **bounds(RenderSettings, "steps")
                    )
                    guidance = gr.Slider(
                        value=shows["guidance"], label="Guidance scale", **bounds(RenderSettings, "guidance")
                    )
                    size = gr.Dropdown(SIZES, value=shows["size"], allow_custom_value=True, label="Size (W×H)")
                    seed = gr.Number(SongRequest.seed, label="Seed", precision=0, **bounds(SongRequest, "seed"))
                    style = gr.Textbox(label="Style (added to every prompt)", placeholder="e.g. oil painting")
                    align = gr.Checkbox(shows["align"], label="Chunked Similarity Alignment (smoother morphs)")
                with gr.Accordion("Look", open=False):
                    look = gr.Dropdown(
                        choices(RenderSettings, "look"),
                        value=shows["look"],
                        label="A look (music-video: on the beat, 30 fps, 16:9, 1080p, karaoke)",
                    )
                    captions = gr.Dropdown(
                        choices(RenderSettings, "captions"),
                        value=shows["captions"],
                        label="Lyrics on screen (line: the sung line; karaoke: each word lights up as it is sung)",
                    )
                    aspect = gr.Dropdown(
                        choices(RenderSettings, "aspect"),
                        value=shows["aspect"],
                        label="Shape (empty: the size above; 16:9, 9:16, 1:1, 4:5)",
                    )
                    pacing = gr.Dropdown(
                        choices(RenderSettings, "pacing"),
                        value=shows["pacing"],
                        label="Motion (beats: morphs move on the beat)",
                    )
                    output_fps = gr.Dropdown(
                        choices(RenderSettings, "output_fps"),
                        value=shows["output_fps"],
                        label="Video frame rate (empty: as drawn; the frames between are interpolated)",
                    )
                    resolution = gr.Dropdown(
                        choices(RenderSettings, "resolution"),
                        value=shows["resolution"],
                        label="Resolution (empty: as drawn; else upscaled)",
                    )
                    motion = gr.Dropdown(
                        choices(RenderSettings, "motion"), value=shows["motion"], label="Camera move over each scene"
                    )
                    pulse = gr.Slider(
                        value=shows["pulse"], label="Pulse: a zoom on strong beats", **bounds(RenderSettings, "pulse")
                    )
                    preview = gr.Checkbox(shows["preview"], label="Preview: keyframes crossfaded, in this look (fast)")
                    fast = gr.Checkbox(
                        shows["fast"],
                        label="Fast drawing: 4 steps of LCM-LoRA and the TAESD decoder (softer pictures)",
                    )
                    outcome = gr.Markdown(summary({"preset": config.models, **shows}))
                with gr.Row():
                    storyboard_button = gr.Button("Make storyboard")
                    keyframes_button = gr.Button("Draw keyframes")
                    render_button = gr.Button("Render", variant="primary")
                with gr.Row():
                    video_button = gr.Button("Make video (no review)")
                    cancel_button = gr.Button("Cancel", variant="stop")
                gr.Examples(
                    [[str(DEMO_SONG), "Lighthouse", "The Tiny Models"]],
                    inputs=[upload, title, artist],
                    label="Example: the demo song",
                )
            with gr.Column():
                status = gr.Markdown("")
                video = gr.Video(label="Music video", interactive=False)
                downloads = gr.File(
                    label="Downloads: video, storyboard, lyrics", file_count="multiple", interactive=False
                )
        table = gr.Dataframe(
            headers=COLUMNS,
            datatype=["number", "number", "str", "str", "str"],
            interactive=True,
            label="Storyboard: edit prompts and times, then Render",
            wrap=True,
            column_widths=["7%", "7%", "7%", "35%", "44%"],
        )
        job = gr.Textbox(visible=False, label="job")  # which job directory the storyboard lives in
        with gr.Row():
            gallery = gr.Gallery(label="Keyframes: click one to choose it", columns=6, height="auto")
            with gr.Column(scale=0, min_width=200):
                scene = gr.Number(label="Scene", precision=0, info="the keyframe clicked")
                new_picture_button = gr.Button("New picture")
                # gr.File, not gr.Image: Gradio decodes an image upload (to make it RGB) before pin_picture
                # could refuse a picture too big to decode
                pin_upload = gr.File(file_types=["image"], label="Your picture for this scene", height=160)
                pin_button = gr.Button("Pin picture")
        shown = gr.State([])  # the scenes whose keyframes the gallery shows, in its order

        # the settings controls, by the setting each sets
        controls = dict(
            preset=preset,
            fps=fps,
            context_size=context_size,
            steps=steps,
            guidance=guidance,
            size=size,
            seed=seed,
            style=style,
            align=align,
            look=look,
            captions=captions,
            aspect=aspect,
            pacing=pacing,
            output_fps=output_fps,
            resolution=resolution,
            motion=motion,
            pulse=pulse,
            preview=preview,
            fast=fast,
        )
        # what the page shows follows the preset, the look and --fast, where the person left it as shown
        shown_last = gr.State(shows)
        followers = [controls[name] for name in FOLLOWERS]

        def follow(values: dict) -> list:
            changes, now = followed(by_name(values), values[shown_last])
            return [*(changes.get(name, gr.update()) for name in FOLLOWERS), now]

        layers = [preset.change, look.change, fast.change]
        gr.on(layers, follow, {*controls.values(), shown_last}, [*followers, shown_last], api_name=False)
        gr.on(
            [control.change for control in controls.values()],
            lambda values: summary(by_name(values)),
            set(controls.values()),
            [outcome],
            api_name=False,
        )
        upload.upload(fill_tags, [upload], [title, artist], api_name=False)
        # One concurrency group over the three: whichever button started it, one job uses the models.
        models = dict(concurrency_id=MODELS_IN_USE, concurrency_limit=1)
        storyboard_event = storyboard_button.click(
            make_storyboard,
            {upload, title, artist, lyrics, *controls.values()},
            [table, job, status],
            api_name="make_storyboard",
            **models,
        )
        render_event = render_button.click(
            render,
            {upload, title, artist, *controls.values(), table, job},
            [video, downloads, job, status],
            api_name="render",
            **models,
        )
        keyframe_outputs = [gallery, shown, downloads, status]
        keyframes_event = keyframes_button.click(
            keyframes,
            {title, artist, *controls.values(), table, job},
            keyframe_outputs,
            api_name="draw_keyframes",
            **models,
        )
        new_picture_event = new_picture_button.click(
            new_picture,
            {title, artist, *controls.values(), table, job, scene},
            keyframe_outputs,
            api_name="new_picture",
            **models,
        )
        pin_event = pin_button.click(
            pin_picture,
            {title, artist, *controls.values(), table, job, scene, pin_upload},
            keyframe_outputs,
            api_name="pin_picture",
            **models,
        )
        gallery.select(choose_scene, [shown], [scene], api_name=False)
        video_event = video_button.click(
            video_in_one_go,
            {upload, title, artist, lyrics, *controls.values()},
            [table, video, downloads, job, status],
            api_name="make_video",
            **models,
        )

        def cancel(request: gr.Request) -> None:
            jobs.cancel(request.session_hash)

        # outside the queue: it must not wait behind the very job it stops
        cancel_button.click(
            cancel,
            cancels=[storyboard_event, keyframes_event, new_picture_event, pin_event, render_event, video_event],
            queue=False,
            api_name=False,
        )
    return app
