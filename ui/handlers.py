"""What the page's buttons do: plain functions of the page's jobs, its values by name ("upload", "title",
"artist", "lyrics", the settings controls' names, "lora_upload", "table", "job", "scene", "pin_upload"), the
browser session and the job's stop flag (set when the job is cancelled or its page goes: ui/app.py), each
returning what the page shows next. A MusicvidError raised here becomes the
page's message where the page is wired (ui/app.py).

It calls the same pipeline functions as the command line (get_storyboard, make_keyframes, make_video).
One job at a time uses the models, whichever button started it (`Jobs.models`); a job cancelled while it
waits for them does no work.
"""

from __future__ import annotations

import json
import secrets
import shutil
import threading
import uuid
from pathlib import Path
from typing import Callable

import gradio as gr

from musicvid.core.audio import read_tags
from musicvid.core.errors import Cancelled, UserError
from musicvid.core.files import check_picture
from musicvid.core.workdir import Workdir
from musicvid.delivery.captions import shown_whole_note, undrawn_note
from musicvid.models.choose import choose_models
from musicvid.pipeline import get_storyboard, make_keyframes, make_video
from musicvid.prepare import resolved_language
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import PLAIN, SongRequest
from musicvid.storyboard.board import Storyboard
from musicvid.storyboard.table import fallback_note, unsure_note
from ui.controls import FOLLOWERS, LORA_UPLOADS, chosen, chosen_request, followed
from ui.jobs import (
    Jobs,
    check_pasted_lyrics,
    edited_storyboard_file,
    loras_folder,
    pasted_kind,
    pasted_left_out,
    pins_folder,
    video_file,
    work_directory,
)
from ui.loras import check_lora, keep_uploads, operator_loras, uploaded_loras
from ui.table import apply_edits, rows
from vipe_core.atomic import write_json

DONE = "Done: watch it above, or download the video, storyboard and lyrics."
# A change to the chosen scene: the fields it sets (None: takes out), given the job's song (asked under the models)
Change = Callable[[Path], dict[str, object]]


def song_request(jobs: Jobs, values: dict, song: Path, **source) -> SongRequest:
    """The request for a job's song: the page's title, artist and settings, the job's work directory, and
    where the lyrics or the storyboard come from (`source`)."""
    return SongRequest(
        song=song,
        title=(values["title"] or "").strip() or None,  # (an empty box: the tags')
        artist=(values["artist"] or "").strip() or None,
        workdir=work_directory(song),
        max_seconds=jobs.config.max_minutes * 60,
        **chosen_request(values),
        **source,
    )


def page_settings(jobs: Jobs, values: dict, song: Path | None = None) -> RenderSettings:
    """The page's settings, its style LoRAs those the operator offers and the person uploaded. With the
    job's song, the uploads are kept in its folder first (as pinned pictures are), and read from there."""
    operator, uploads = operator_loras(jobs.config.lora_dir), uploaded_loras(values.get(LORA_UPLOADS))
    settings = chosen(values, operator, uploads)  # all checked before a LoRA is copied
    if song is None:
        return settings
    return chosen(values, operator, keep_uploads(uploads, loras_folder(song)))


def check_render_inputs(settings: RenderSettings) -> None:
    """The files a render reads besides the storyboard, each from its header (as the command line checks them
    before any work): the reference picture and the style LoRAs."""
    if settings.reference:
        check_picture(settings.reference, "reference picture")
    for lora in settings.lora:
        check_lora(Path(lora.source))


def storyboard_job(
    jobs: Jobs, values: dict, session: str, stop: threading.Event, render: bool = False
) -> tuple[Storyboard, str]:
    """A new job and its storyboard; the job is removed again if its song is refused. Where a `render` follows
    in the same press, its files are refused before the storyboard is made too."""
    if not values["upload"]:
        raise UserError("upload a song first")
    # the pasted text, the title and artist, the language (as the models hear it) and the settings are refused before
    # the copy
    check_pasted_lyrics(text := values["lyrics"] or "")
    language = song_request(jobs, values, Path(values["upload"])).language
    resolved_language(language, choose_models(values["preset"]), pasted_kind(text) == PLAIN)
    settings = page_settings(jobs, values)
    if render:
        check_render_inputs(settings)
    job, song = jobs.new(values["upload"], session)
    try:
        request = song_request(jobs, values, song, lyrics_file=jobs.lyrics(song, values["lyrics"] or ""))
        storyboard, _, _ = get_storyboard(request, jobs.registry(values["preset"]), stop=stop)
    except BaseException:
        jobs.discard(job)
        raise
    return storyboard, job


def noted(status: str, *notes: str) -> str:
    """The page's status, and after it each note that says something (as the CLI warns)."""
    return status + "".join(f"\n\n**Note:** {note}." for note in notes if note)


def lyrics_note(values: dict, storyboard: Storyboard) -> str:
    """What the storyboard, made now from the page's lyrics, leaves out of them (as the run's log says)."""
    return pasted_left_out(values["lyrics"] or "", storyboard.duration)


def storyboard_status(storyboard: Storyboard, *notes: str) -> str:
    unsure, fallback = unsure_note(storyboard, name="rows", first=1), fallback_note(storyboard, name="rows", first=1)
    return noted("Storyboard ready: edit any prompt or time, then press Render.", *notes, unsure, fallback)


def pressed(jobs: Jobs, values: dict, session: str) -> tuple[str, object]:
    """The job and table a button sent. The browser sends them as they are at the press, and the job then
    waits in the queue for the models: a press while this session's storyboard was being made sent no job,
    and means that storyboard, as made (its table was not on the page to edit)."""
    if values["job"]:
        return values["job"], values["table"]
    return jobs.page_storyboards.get(session, ""), None


def pressed_or_made(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple[str, object, str]:
    """As `pressed`; where the page has no storyboard yet, it is made first from the page's song, as Make video
    makes it (Draw keyframes or Render pressed first), and what it leaves out of the pasted lyrics is noted as Make
    video notes it (lyrics_note; "" where none was made)."""
    job_id, table_rows = pressed(jobs, values, session)
    if job_id:
        return job_id, table_rows, ""
    storyboard, job_id = storyboard_job(jobs, values, session, stop, render=True)
    jobs.page_storyboards[session] = job_id
    return job_id, None, lyrics_note(values, storyboard)  # the storyboard as made: nothing edited


def changed_scene(storyboard: dict, chosen_scene, change: Change, song: Path) -> None:
    """`change` made to the scene the person chose (a keyframe clicked): the fields it gives for the job's `song`,
    asked once the scene is known, set (or, given None, taken out)."""
    whole = isinstance(chosen_scene, (int, float)) and float(chosen_scene).is_integer()
    number = int(chosen_scene) if whole else -1
    if not 0 <= number < len(storyboard["scenes"]):
        raise UserError(f"there is no scene {chosen_scene}: click a keyframe to choose one")
    scene = storyboard["scenes"][number]
    for field, value in change(song).items():
        if value is None:
            scene.pop(field, None)
        else:
            scene[field] = value


def edited_request(
    jobs: Jobs, values: dict, table_rows, job_id: str, session: str, change: Change | None = None
) -> tuple[SongRequest, RenderSettings]:
    """The job's song with its storyboard as the table shows it (as made where no table is given), with
    `change` made to the chosen scene, and the page's settings."""
    song = jobs.song(job_id, session)
    settings = page_settings(jobs, values, song)
    check_render_inputs(settings)
    edited = json.loads(Workdir(work_directory(song)).storyboard.read_text(encoding="utf-8"))
    if table_rows is not None:
        edited = apply_edits(edited, table_rows)
    if change is not None:
        changed_scene(edited, values["scene"], change, song)
    write_json(edited_storyboard_file(song), edited)
    source = {"storyboard_file": edited_storyboard_file(song), "lyrics_file": jobs.timed_lyrics(song)}
    return song_request(jobs, values, song, **source), settings


def render_job(
    jobs: Jobs, values: dict, table_rows, job_id: str, session: str, stop: threading.Event
) -> tuple[str, list[str], str, list[list]]:
    """The job's video, the files to download (it, its storyboard and its lyrics), the page's status: done,
    which rows' lyrics have characters the burned-in captions leave out and, in karaoke, which have words written
    right to left and are shown whole (as the CLI warns); and the table as rendered, with its keyframes' scores."""
    request, settings = edited_request(jobs, values, table_rows, job_id, session)
    registry = jobs.registry(values["preset"])
    made = make_video(request, settings, registry, output=video_file(request.song, settings.preview), stop=stop)
    files = [str(made.video), str(made.workdir.storyboard), str(made.subtitles)]
    undrawn = whole = ""
    if settings.captions != "none":
        files.append(str(made.video.with_suffix(".ass")))
        undrawn = undrawn_note(made.storyboard, name="rows", first=1)
    if settings.captions == "karaoke":
        whole = shown_whole_note(made.storyboard, name="rows", first=1)
    return str(made.video), files, noted(DONE, undrawn, whole), rows(made.storyboard)


def make_storyboard(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple:
    with jobs.models(stop):
        storyboard, job_id = storyboard_job(jobs, values, session, stop)
        if stop.is_set():  # (made for a page that is gone, or no longer wants it)
            jobs.discard(job_id)
            raise Cancelled("the job was cancelled")
        jobs.page_storyboards[session] = job_id
    return rows(storyboard), job_id, storyboard_status(storyboard, lyrics_note(values, storyboard))


def render(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple:
    with jobs.models(stop):
        job_id, table_rows, note = pressed_or_made(jobs, values, session, stop)
        video, files, status, table = render_job(jobs, values, table_rows, job_id, session, stop)
    return video, files, job_id, noted(status, note), table


def video_in_one_go(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple:
    # one flag for both steps: a Cancel while the storyboard is made stops the render before it starts
    with jobs.models(stop):
        storyboard, job_id = storyboard_job(jobs, values, session, stop, render=True)
        # the page's storyboard from here, as pressed_or_made's: a render cancelled or refused leaves it to the next
        # Render or Draw keyframes, which resume it
        jobs.page_storyboards[session] = job_id
        if stop.is_set():
            raise Cancelled("the job was cancelled")
        video, files, status, table = render_job(jobs, values, None, job_id, session, stop)  # nothing edited
    return table, video, files, job_id, noted(status, lyrics_note(values, storyboard))


def keyframes(jobs: Jobs, values: dict, session: str, stop: threading.Event, change: Change | None = None) -> tuple:
    """Each scene's keyframe (only those whose seed, prompt or picture changed are drawn), for the gallery;
    the table as drawn, with the keyframes' scores; and the job (a storyboard made first where there was none,
    unless a scene is to change: there is none to choose before it)."""
    with jobs.models(stop):
        if change:
            (job_id, table_rows), note = pressed(jobs, values, session), ""
        else:
            job_id, table_rows, note = pressed_or_made(jobs, values, session, stop)
        request, settings = edited_request(jobs, values, table_rows, job_id, session, change)
        made = make_keyframes(request, settings, jobs.registry(values["preset"]), stop=stop)
    scenes = made.storyboard.scenes
    pictures = [(str(made.workdir.keyframe(i)), f"{i}: {scenes[i].text or scenes[i].kind}") for i in made.scenes]
    files = [str(made.contact_sheet), str(made.workdir.storyboard)]
    drawn = f"{made.pictures_drawn} drawn" if made.pictures_drawn else "none changed"
    status = (
        f"Keyframes ready ({drawn}): click one, then New picture to draw it again or Pin picture to use "
        "your own; Render draws the rest. The table's score says how well each shows its scene: sort by it to find "
        "the weakest."
    )
    return pictures, made.scenes, files, noted(status, note), rows(made.storyboard), job_id


def new_picture(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple:
    """The chosen scene's keyframe drawn again, with a new seed (a picture pinned to it no longer shown: the person
    asked for one drawn)."""
    seed = secrets.randbelow(SongRequest.fields()["seed"].metadata["high"] + 1)
    return keyframes(jobs, values, session, stop, change=lambda song: {"seed": seed, "picture": None})


def pin_picture(jobs: Jobs, values: dict, session: str, stop: threading.Event) -> tuple:
    """The uploaded picture, kept in the job's folder, becomes the chosen scene's keyframe; refused (no such
    scene, a broken edit), it is not kept."""
    if not values["pin_upload"]:
        raise UserError("choose a picture to pin first")
    check_picture(Path(values["pin_upload"]))  # its size from its header first: a bomb is never decoded
    kept: list[Path] = []

    def pinned(song: Path) -> dict[str, object]:
        # kept under the models: a press reading the job's song before (round 13) marked it the newest, and the
        # render finishing then removed its own job to keep the bound, the video it had just made with it
        kept.append(pins_folder(song) / f"{uuid.uuid4().hex[:12]}{Path(values['pin_upload']).suffix.lower()}")
        kept[0].parent.mkdir(exist_ok=True)
        shutil.copyfile(values["pin_upload"], kept[0])
        return {"picture": str(kept[0])}

    try:
        return keyframes(jobs, values, session, stop, change=pinned)
    except UserError:  # refused before the storyboard took it
        for path in kept:
            path.unlink(missing_ok=True)
        raise


def fill_tags(upload):
    """The title and artist an uploaded song's tags name."""
    if not upload:
        return gr.update(), gr.update()
    return read_tags(Path(upload))


def choose_scene(shown: list[int], selected: gr.SelectData) -> int:
    """The scene of the keyframe clicked in the gallery."""
    return shown[selected.index]


def follow(values: dict) -> list:
    """The settings controls after the preset, the look or --fast changed (ui.controls.followed), then
    what the page shows now, kept for the next change."""
    changes, now = followed(values, values["shown_controls"])
    return [*(changes.get(name, gr.update()) for name in FOLLOWERS), now]
