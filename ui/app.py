"""The web page: upload a song, review and edit the storyboard, render, watch and download.

This module lays the page out and wires its events to the handlers (ui/handlers.py). Models are
loaded once per process and kept; one job runs at a time, whichever button started it (one Gradio
concurrency group, and a lock under it for any other caller), and the others wait in Gradio's queue,
seeing their place in it. Every job works in a directory of its own, belongs to the browser session
that made it, and is removed after a while (ui/jobs.py).
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import Callable

import gradio as gr

from musicvid.core.assets import DEMO_SONG
from musicvid.core.errors import MusicvidError
from musicvid.lyrics.known import MAX_LYRICS_CHARS
from musicvid.models.internals import gradio_upload_folder
from musicvid.settings.front_doors import options_text
from musicvid.settings.geometry import ASPECTS
from musicvid.settings.looks import FAST, LOOKS
from musicvid.settings.loras import LORA_WEIGHTS, MAX_LORAS
from musicvid.settings.presets import PRESETS
from musicvid.settings.render import SCORE_RANGE, RenderSettings
from musicvid.settings.schema import GROUPS
from musicvid.settings.song import SongRequest
from ui import handlers
from ui.config import UIConfig
from ui.controls import (
    DETECT,
    FOLLOWERS,
    LORA_UPLOADS,
    REROLL_THRESHOLDS,
    SETTING_OF,
    SIZES,
    UPLOADS,
    bounds,
    choices,
    language_choices,
    longest,
    page_groups,
    page_words,
    shown_controls,
    summary,
)
from ui.jobs import Jobs
from ui.loras import LORA_BOX_CHARACTERS, MAX_LORA_MB, SUFFIX, operator_loras
from ui.table import COLUMNS, DATATYPES, READ_ONLY
from vipe_core.released import RELEASED_CONTEXT

MODELS_IN_USE = "models"  # the Gradio concurrency group of every event that runs the models
INTRO = (
    "# musicvid\nTurn a song into a music video whose pictures show what the lyrics *mean*. "
    "Upload a song: Whisper finds the lyrics, ViPE turns each line into a picture idea, "
    "Stable Diffusion draws it, and the pictures morph from line to line in time with the singing. "
    "Review the storyboard before rendering, or make the video in one go."
)
# The settings controls, by the setting each sets (and the models' preset, and the person's LoRAs).
CONTROLS = ("preset", "language", "context_size", "seed", *FOLLOWERS, "look", "fast", *UPLOADS, LORA_UPLOADS)


def song_inputs() -> dict[str, Callable[[], gr.Component]]:
    """The song, its names, its lyrics and its language: each input's maker (lay_out places it in its setting's
    group)."""
    return dict(
        upload=partial(gr.Audio, sources=["upload"], type="filepath", label="Song (MP3, WAV, FLAC, M4A, OGG …)"),
        # (in the browser; the server refuses longer text too, as every front door: musicvid.settings.schema)
        title=partial(gr.Textbox, label="Title", max_length=longest(SongRequest, "title")),
        artist=partial(gr.Textbox, label="Artist", max_length=longest(SongRequest, "artist")),
        lyrics=partial(
            gr.Textbox,
            label="Lyrics (optional)",
            lines=4,
            max_lines=20,
            max_length=MAX_LYRICS_CHARS,  # in the browser; the server refuses longer text too (ui.jobs)
            placeholder="Paste the words, one sung line per line: Whisper finds when each is "
            "sung. Timed LRC lines work too. Empty: Whisper listens for them.",
        ),
        # Whisper's names, as its own command line offers them; a code or another case typed is read as --language is
        language=partial(
            gr.Dropdown,
            language_choices(),
            value=DETECT,
            allow_custom_value=True,
            label=f"Language sung ({DETECT}: Whisper guesses it; the tiny models hear English alone)",
        ),
    )


def value_controls(preset: str, shows: dict) -> dict[str, Callable[[], gr.Component]]:
    """The controls of numbers, texts and switches: each one's maker, as the page shows it untouched, its range
    from its setting."""
    render = RenderSettings
    return dict(
        preset=partial(gr.Dropdown, list(PRESETS), value=preset, label="Models (tiny: offline, noise pictures)"),
        fps=partial(gr.Number, shows["fps"], label="Frames per second", **bounds(render, "fps")),
        context_size=partial(
            gr.Slider,
            value=RELEASED_CONTEXT,  # the page's presets are the released ViPE's
            label="Lyric lines of context for ViPE",
            **bounds(SongRequest, "context_size"),
        ),
        # (whole-number controls without Gradio's precision=0, which rounds 2.5 sent by a program: the setting refuses it)
        steps=partial(gr.Number, shows["steps"], label="Denoising steps", **bounds(render, "steps")),
        guidance=partial(gr.Slider, value=shows["guidance"], label="Guidance scale", **bounds(render, "guidance")),
        size=partial(gr.Dropdown, SIZES, value=shows["size"], allow_custom_value=True, label="Size (W×H)"),
        seed=partial(gr.Number, SongRequest.seed, label="Seed", **bounds(SongRequest, "seed")),
        style=partial(
            gr.Textbox,
            label="Style (added to every prompt)",
            placeholder="e.g. oil painting",
            max_length=longest(render, "style"),
        ),
        align=partial(gr.Checkbox, shows["align"], label="Chunked Similarity Alignment (smoother morphs)"),
        keyframe_candidates=partial(
            gr.Number,
            shows["keyframe_candidates"],
            label="Keyframe candidates: each keyframe drawn this many times, the best scored kept",
            **bounds(render, "keyframe_candidates"),
        ),
        # a choice, not a number box: a number box shows 0 for none, and "below 0" would read as a choice
        reroll_below=partial(
            gr.Dropdown,
            REROLL_THRESHOLDS,
            value=shows["reroll_below"],
            allow_custom_value=True,
            label=f"Redraw keyframes scoring below (CLIPScore {SCORE_RANGE[0]:g}–{SCORE_RANGE[1]:g}, any may be typed; "
            "empty: never)",
        ),
        pulse=partial(
            gr.Slider, value=shows["pulse"], label="Pulse: a zoom on strong beats", **bounds(render, "pulse")
        ),
        preview=partial(gr.Checkbox, shows["preview"], label="Preview: keyframes crossfaded, in this look (fast)"),
        fast=partial(
            gr.Checkbox,
            shows["fast"],
            label=f"Fast drawing: {FAST['steps']} steps of LCM-LoRA and the TAESD decoder (softer pictures)",
        ),
        reference_strength=partial(
            gr.Slider,
            value=shows["reference_strength"],
            label="Reference strength",
            **bounds(render, "reference_strength"),
        ),
    )


def choice_controls(shows: dict) -> dict[str, Callable[[], gr.Component]]:
    """The controls of a setting's choices: each one's maker, as the page shows it untouched."""

    def choice(name: str, label: str) -> Callable[[], gr.Component]:
        return partial(gr.Dropdown, choices(RenderSettings, name), value=shows[name], label=label)

    # what each look and --fast set, said from the settings that set them (musicvid.settings.render)
    looks = "; ".join(f"{look}: {options_text(options, flags=False)}" for look, options in LOOKS.items())
    return dict(
        look=choice("look", f"A look ({looks})"),
        captions=choice(
            "captions", "Lyrics on screen (line: the sung line; karaoke: each word lights up as it is sung)"
        ),
        aspect=choice("aspect", f"Shape (empty: the size above; {', '.join(ASPECTS)})"),
        pacing=choice("pacing", "Pacing (beats: morphs move on the beat)"),
        output_fps=choice("output_fps", "Video frame rate (empty: as drawn; the frames between are interpolated)"),
        resolution=choice("resolution", "Resolution (empty: as drawn; else upscaled)"),
        motion=choice("motion", "Camera move over each scene"),
        transitions=choice(
            "transitions", "Between keyframes (slerp: the paper's morph; video: drawn by a video model, LTX-Video)"
        ),
    )


def file_controls(shows: dict, offered: list[str]) -> dict[str, Callable[[], gr.Component]]:
    """The reference picture and the style LoRAs: the person's uploads, and a box that names them and the
    operator's `offered`, with weights. Only names: nothing typed here can name a file on the server or a hub
    repository."""
    also = f"This page also offers: {', '.join(offered)}." if offered else ""
    return dict(
        # gr.File, not gr.Image: the picture reaches the render as uploaded, checked before it is decoded
        reference=partial(
            gr.File,
            file_types=["image"],
            label="Reference picture: every scene takes its appearance (a face, a palette)",
            height=120,
        ),
        lora=partial(
            gr.Textbox,
            shows["lora"],
            lines=2,
            max_length=LORA_BOX_CHARACTERS,
            label="Style LoRAs and their weights (one a line: NAME or NAME:WEIGHT, weight "
            f"{LORA_WEIGHTS[0]:g} to {LORA_WEIGHTS[1]:g})",
            info=f"Each LoRA you upload below is used, at weight 1 unless a line here gives another. {also}",
            placeholder="e.g. ink.safetensors:0.8",
        ),
        lora_upload=partial(
            gr.File,
            file_count="multiple",
            file_types=[SUFFIX],
            label=f"Your style LoRAs ({SUFFIX}, at most {MAX_LORAS}, {MAX_LORA_MB // 1024} GB each)",
            height=120,
        ),
    )


def buttons() -> dict[str, gr.Component]:
    with gr.Row():
        made = dict(
            storyboard_button=gr.Button("Make storyboard"),
            keyframes_button=gr.Button("Draw keyframes"),
            render_button=gr.Button("Render", variant="primary"),
        )
    with gr.Row():
        made.update(video_button=gr.Button("Make video (no review)"), cancel_button=gr.Button("Cancel", variant="stop"))
    return made


def results() -> dict[str, gr.Component]:
    return dict(
        status=gr.Markdown(""),
        video=gr.Video(label="Music video", interactive=False),
        downloads=gr.File(label="Downloads: video, storyboard, lyrics", file_count="multiple", interactive=False),
    )


def storyboard_and_keyframes() -> dict[str, gr.Component]:
    """The storyboard's table, the job it lives in, and the keyframes' gallery with what acts on one."""
    made = dict(
        table=gr.Dataframe(
            headers=COLUMNS,
            datatype=DATATYPES,
            static_columns=READ_ONLY,  # the score: the pick's, not the person's (sort by it from its header)
            interactive=True,
            label="Storyboard: edit prompts, times, sections and moods, then Render (score: the keyframe's, once "
            "drawn; sort by it from its header's menu)",
            wrap=True,
            column_widths=["6%", "6%", "6%", "25%", "33%", "7%", "9%", "8%"],
        ),
        job=gr.Textbox(visible=False, label="job"),  # which job directory the storyboard lives in
    )
    with gr.Row():
        made["gallery"] = gr.Gallery(label="Keyframes: click one to choose it", columns=6, height="auto")
        with gr.Column(scale=0, min_width=200):
            made["scene"] = gr.Number(label="Scene", info="the keyframe clicked")  # (not rounded: 1.5 is no scene)
            made["new_picture_button"] = gr.Button("New picture")
            # gr.File, not gr.Image: Gradio decodes an image upload (to make it RGB) before pin_picture could
            # refuse a picture too big to decode
            made["pin_upload"] = gr.File(file_types=["image"], label="Your picture for this scene", height=160)
            made["pin_button"] = gr.Button("Pin picture")
    made["shown_scenes"] = gr.State([])  # the scenes whose keyframes the gallery shows, in its order
    return made


def lay_out(config: UIConfig) -> dict[str, gr.Component]:
    """Every component of the page, by name. The song's inputs and the settings controls are in their settings'
    groups (ui.controls.page_groups), in that order, which is the order of the API's inputs (the order they are
    made in)."""
    shows = shown_controls(config.models)
    offered = list(operator_loras(config.lora_dir))
    gr.Markdown(INTRO)
    with gr.Row():
        with gr.Column():
            makers = {**song_inputs(), **value_controls(config.models, shows), **choice_controls(shows)}
            makers |= file_controls(shows, offered)
            page = {}
            for group, names in page_groups().items():  # the song's open, the settings' to be opened
                with gr.Accordion(GROUPS[group].capitalize(), open=group == "song"):
                    page |= {name: makers[name]() for name in names}
            page["outcome"] = gr.Markdown(summary({"preset": config.models, **shows}))
            page.update(buttons())
            gr.Examples(
                [[str(DEMO_SONG), "Lighthouse", "The Tiny Models"]],
                inputs=[page["upload"], page["title"], page["artist"]],
                label="Example: the demo song",
            )
        with gr.Column():
            page.update(results())
    page.update(storyboard_and_keyframes())
    page["shown_controls"] = gr.State(shows)  # what the settings controls showed last (ui.controls.followed)
    return page


def by_name(page: dict[str, gr.Component]) -> Callable[[dict], dict]:
    """The page's values by name, from what Gradio gives for a set of inputs: a dict by component."""
    names = {component: name for name, component in page.items()}
    return lambda values: {names[component]: value for component, value in values.items()}


def words_of(page: dict[str, gr.Component]) -> Callable[[str], str]:
    """A message in the page's words: its controls named by their labels (ui.controls.page_words)."""
    labels = {name: getattr(page.get(name), "label", None) for name in SETTING_OF}
    return page_words({name: label for name, label in labels.items() if label})


def page_events(jobs: Jobs, page: dict[str, gr.Component]) -> Callable:
    """A maker of Gradio events from handlers: a handler gets the page's jobs, the inputs by name (Gradio
    gives a set of inputs as a dict by component) and the browser session. It is the one place where a
    MusicvidError becomes the page's message, which names files by their names alone: where the server
    keeps them (the jobs' folder, Gradio's for uploads) is no business of the person's; the pasted lyrics as
    pasted, not as the file they are saved to (ui.jobs.PASTED); and its controls by their labels rather than the
    command line's options (ui.controls.page_words)."""
    named, in_page_words = by_name(page), words_of(page)
    kept = [jobs.root, gradio_upload_folder()]
    if jobs.config.lora_dir:
        kept.append(jobs.config.lora_dir.resolve())  # the operator's LoRAs, named by their names alone
    folders = "|".join(re.escape(str(folder)) for folder in kept)
    server_folders = re.compile(rf"(?:{folders})(?:/[^/\s]+)*/")

    def on_page(handler: Callable) -> Callable:
        async def event(values: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)):
            with jobs.running(request.session_hash) as stop:
                try:  # in a thread the event awaits: Gradio's cancel of the event reaches it here, at once
                    return await asyncio.to_thread(handler, jobs, named(values), request.session_hash, stop)
                except MusicvidError as error:
                    shown = server_folders.sub("", jobs.as_pasted(str(error)))  # (the pasted lyrics' file first)
                    raise gr.Error(in_page_words(shown), print_exception=False) from None
                except asyncio.CancelledError:  # the page's Cancel, a client's job.cancel(): the work ends too
                    stop.set()
                    raise

        return event

    return on_page


def wire_controls(config: UIConfig, page: dict[str, gr.Component]) -> None:
    """The settings controls follow the preset, the look and --fast where the person left them as shown, and
    the line under them says what they make."""
    named, controls, in_page_words = by_name(page), {page[name] for name in CONTROLS}, words_of(page)
    followers = [page[name] for name in (*FOLLOWERS, "shown_controls")]
    layers = [page[name].change for name in ("preset", "look", "fast")]
    quietly = dict(api_name=False, show_progress="hidden")
    inputs = {*controls, page["shown_controls"]}
    gr.on(layers, lambda values: handlers.follow(named(values)), inputs, followers, **quietly)
    changes = [control.change for control in controls]

    def outcome(values: dict) -> str:
        return in_page_words(summary(named(values), operator_loras(config.lora_dir)))

    gr.on(changes, outcome, controls, [page["outcome"]], **quietly)


def wire_jobs(app: gr.Blocks, jobs: Jobs, page: dict[str, gr.Component]) -> None:
    """The buttons that run the models: one concurrency group over them all (one job uses the models), and
    Cancel, outside the queue: it must not wait behind the very job it stops. A session's job also ends when its
    page or client goes (Gradio's unload, when the session's heartbeat stops): nobody waits for what it makes."""
    on_page = page_events(jobs, page)
    controls = {page[name] for name in CONTROLS}
    song = {page[name] for name in ("upload", "title", "artist", "lyrics")}
    edits = {page["title"], page["artist"], *controls, page["table"], page["job"]}  # what an edited job reads
    first = {page["upload"], page["lyrics"]}  # what a storyboard is made of, where Render or Draw keyframes makes it
    keyframe_outputs = ["gallery", "shown_scenes", "downloads", "status", "table", "job"]  # the table: with scores
    events = [  # button, handler, inputs, outputs, API name
        ("storyboard_button", handlers.make_storyboard, {*song, *controls}, ["table", "job", "status"], "make_storyboard"),
        ("render_button", handlers.render, {*first, *edits}, ["video", "downloads", "job", "status", "table"], "render"),
        ("keyframes_button", handlers.keyframes, {*first, *edits}, keyframe_outputs, "make_keyframes"),
        ("new_picture_button", handlers.new_picture, {*edits, page["scene"]}, keyframe_outputs, "new_picture"),
        ("pin_button", handlers.pin_picture, {*edits, page["scene"], page["pin_upload"]}, keyframe_outputs, "pin_picture"),
        ("video_button", handlers.video_in_one_go, {*song, *controls}, ["table", "video", "downloads", "job", "status"], "make_video"),
    ]  # fmt: skip
    started = [
        page[button].click(
            on_page(handler),
            inputs,
            [page[name] for name in outputs],
            api_name=api_name,
            concurrency_id=MODELS_IN_USE,
            concurrency_limit=1,
        )
        for button, handler, inputs, outputs, api_name in events
    ]

    def cancel(request: gr.Request) -> None:
        jobs.cancel(request.session_hash)

    page["cancel_button"].click(cancel, cancels=started, queue=False, api_name=False)
    app.unload(cancel)


def build_app(config: UIConfig = UIConfig()) -> gr.Blocks:
    jobs = Jobs(config)
    # Gradio's own copies of uploads and results age out with the job directories.
    keep_seconds = int(config.keep_hours * 3600)
    with gr.Blocks(title="musicvid", delete_cache=(max(60, keep_seconds // 4), keep_seconds)) as app:
        page = lay_out(config)
        wire_controls(config, page)
        page["upload"].upload(handlers.fill_tags, [page["upload"]], [page["title"], page["artist"]], api_name=False)
        page["gallery"].select(handlers.choose_scene, [page["shown_scenes"]], [page["scene"]], api_name=False)
        wire_jobs(app, jobs, page)
    return app
