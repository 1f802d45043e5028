"""The checks done before any work: a render's outputs, the files its request names, its work directory,
and that the song lasts a frame. Nothing here imports torch (nor numpy), so that a batch checks every row
before it loads a model."""

from __future__ import annotations

from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import check_picture, file_sha256, resolved
from musicvid.core.outputs import check_replaceable
from musicvid.core.workdir import Workdir
from musicvid.lyrics.known import check_lyrics_file
from musicvid.pictures.schedule import to_frame
from musicvid.run import check_outputs, inputs_of, outputs_of
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import Storyboard, load_storyboard
from musicvid.storyboard.make import check_pictures


def check_before_work(request: SongRequest, settings: RenderSettings, output: Path, named: bool = True) -> None:
    """Everything a render will read or write outside the models that can be checked before its first
    second of work: its outputs (those beside the `named` -o video replaced only if musicvid wrote them
    for this song), the files it names, and its work directory (a batch checks every row so)."""
    check_outputs(request, settings, output)
    check_inputs(request, settings)
    check_drawing_inputs(settings)
    if request.workdir or request.song.is_file():  # a batch reports a missing song at its turn
        workdir = Workdir.of_song(request.song, request.workdir)
        check_apart(outputs_of(output, settings), workdir)
    if request.song.is_file():
        replaced = outputs_of(output, settings)[1:] if named else outputs_of(output, settings)
        check_replaceable(replaced, workdir, request.overwrite)


def check_apart(outputs: list[Path], workdir: Workdir) -> None:
    """Refuse an output in the work directory (which is musicvid's alone) or one the work directory would lie
    under (`--workdir v.mp4/wd -o v.mp4`): the run writes both."""
    root = resolved(workdir.root)
    for output in outputs:
        path = resolved(output)
        if root.is_relative_to(path):
            raise UserError(
                f"the work directory {workdir.root} lies under {output}, which the run writes as a file: give -o or "
                "--workdir another name"
            )
        if path.is_relative_to(root):
            raise UserError(
                f"{output} lies in the work directory {workdir.root}, which holds musicvid's own files alone: give -o "
                "a name outside it"
            )


def check_inputs(request: SongRequest, settings: RenderSettings | None = None) -> None:
    """The files a request names, checked before any work: the lyrics, and a storyboard (its every field,
    and its pinned pictures); a work directory that cannot be one, that holds another song's work, or
    whose files are among the inputs."""
    if request.lyrics_file:
        check_lyrics_file(request.lyrics_file)
    storyboard = load_storyboard(request.storyboard_file) if request.storyboard_file else None
    if storyboard:
        check_pictures(storyboard)
    if request.workdir or request.song.is_file():
        Workdir.of_song(request.song, request.workdir).check()  # (the default one's too: it may be there already)
    if request.song.is_file():
        workdir = Workdir.of_song(request.song, request.workdir)
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


def check_drawing_inputs(settings: RenderSettings) -> None:
    """The reference picture's header, and that each style LoRA is a file or is found on the hub (fetched
    now, on a first run, rather than after the storyboard's work)."""
    if settings.reference:
        check_picture(settings.reference, "reference picture")
    if settings.lora:
        from musicvid.models.drawing import weights_file  # (torch: only where a LoRA is named)

        for lora in settings.lora:
            weights_file(lora.source, "style LoRA")


def check_frames(duration: float, settings: RenderSettings) -> None:
    """A song too short for one frame at the drawn rate makes no video (refused before any work)."""
    if to_frame(duration, settings.fps) < 1:
        raise UserError(f"the song lasts {duration:.3f} s: at --fps {settings.fps:g} that is not one frame of video")
