"""The first step of every call that makes something of a song (musicvid.pipeline), as a diffusers pipeline checks
its inputs once: from the request, the settings, the registry and the output, every check a run needs, each done
once and before any work, and the one frozen Run (musicvid.run) every stage then takes. In order:

0. the paths the run records (the song, the files it reads, the outputs, --workdir): absolute, each in UTF-8, and
   those it makes without a control character; and the song, read where it is a file (its hash names the default
   work directory);
1. the settings against the models: ViPE's context (unless given, as many lines as its checkpoint learned to read),
   the picture family's options, whether the keyframes' scorer loads, and the files the picture model draws with
   (style LoRAs, fetched on a first run, and --fast's LoRA of its family; --fast's decoder; the IP-Adapter), the
   picture model a render loads not refused by HF_HUB_OFFLINE, and --resolution's upscaler;
2. the outputs: the video as `-o` names it or beside the song (default_output), its .srt and .ass: names the file
   system takes, in folders that can be written, in no work directory, none of them an input, the video's a
   video's;
3. the inputs: the song none of musicvid's own files (a video a run made, a file in a work directory), the lyrics
   file, the storyboard file (where neither stands in for what Whisper hears, --language
   against the ASR model), its pictures and what draws its scenes' own references, the reference picture; and
   --language as Whisper's code, resolved here alone: the Run's request carries the code every stage reads;
4. the work directory: in UTF-8 without a control character, musicvid's or empty, of no other song, none of its
   files an input, apart from the outputs, and the files at the outputs' names replaced only where musicvid wrote
   them for this song; --ip-adapter and --reference-strength given where the run draws no reference picture; last, a file can be made where
   each output goes (one is made and removed);
5. the memory plan (on CUDA), and as it says the settings' batch, each drawing stage's switches and the
   upscaler's batch and input;
6. the song, decoded once: at least a frame of it.

Steps 0 to 4 are check_before_work, which a batch runs on every row before its first render. Nothing here writes: a
run makes and locks its work directory only after this step (musicvid.core.workdir.Workdir.held), so a refused run
leaves the file system as it found it.
"""

from __future__ import annotations

import itertools
import logging
import stat
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from musicvid.core.audio import load_audio
from musicvid.core.errors import UserError, warnings_held
from musicvid.core.files import (
    check_creatable,
    check_not_inputs,
    check_picture,
    file_sha256,
    same_file,
)
from musicvid.core.outputs import check_made_by_no_run, check_outputs, check_replaceable, named_file
from musicvid.core.paths import check_made, check_paths, probe, shown
from musicvid.core.workdir import Workdir, video_name
from musicvid.lyrics.known import KnownLyrics, check_lyrics_file, fit_lyrics
from musicvid.lyrics.languages import check_learned, language_code, learned_by_name
from musicvid.lyrics.transcribe import check_hears, english_only, untranslated
from musicvid.memory.plan import batched_as_planned, plan_on_device, planned_upscaling, stage_offloads
from musicvid.models import local_names
from musicvid.models.asr_files import refuse_offline
from musicvid.models.drawing import check_drawing_files, check_drawing_options, check_scene_references
from musicvid.models.loading import check_separator, check_upscaler
from musicvid.models.names import vipe_context
from musicvid.models.registry import ModelRegistry
from musicvid.models.scorer import check_scorer
from musicvid.models.timing import Timings
from musicvid.pictures.schedule import check_one_frame
from musicvid.pictures.switches import compile_backend
from musicvid.run import Run
from musicvid.settings.presets import ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest, inputs_of
from musicvid.storyboard.board import Storyboard, load_storyboard

log = logging.getLogger("musicvid")


@dataclass(frozen=True)
class Checked:
    """What check_before_work resolved."""

    output: Path | None  # the video; None where no video is made
    workdir: Workdir | None  # None for a song that is not there (a batch reports it at its turn)
    scored: bool  # whether the run loads the keyframes' scorer
    lyrics: KnownLyrics | None  # the lyrics file, as its check read it
    context_size: int  # the request's, else as many lines as the ViPE checkpoint learned to read
    storyboard: Storyboard | None = None  # the --storyboard file, as its check read it
    # whether a scene of the storyboard the run may draw (the --storyboard file, else the work directory's own) names
    # its own reference picture: the memory plan counts what that loads (musicvid.pictures.grouping.uses_reference)
    references: bool = False
    language: str | None = None  # the request's --language as Whisper's code; None: Whisper detects it
    lyrics_read: bool = True  # whether the run reads `lyrics` (check_before_work), were it given


@warnings_held()
def prepare(
    request: SongRequest,
    registry: ModelRegistry,
    settings: RenderSettings | None = None,
    output: Path | None = None,
    *,
    keyframes_only: bool = False,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
    wait: bool = False,
    reference_only: tuple[str, ...] = (),
) -> Run:
    """The Run of a call, every check passed (module doc): a storyboard alone without `settings`, the keyframes with
    `keyframes_only`, else a video (at `output`, else beside the song). Unless the run will `wait` for its work
    directory, one that another run holds is refused before the song is decoded. `reference_only`: the options given
    that act only where the run draws a reference picture (check_reference_drawn)."""
    timings = timings if timings is not None else Timings()
    video = settings is not None and not keyframes_only
    # 0.-4. the paths, the settings, the outputs, the inputs and the work directory
    checked = check_before_work(
        request, registry.models, settings, output, video=video, reference_only=reference_only, own=registry.own
    )
    # 5. the memory plan, and as it says the settings' batch (the keyframes' too: they are drawn in batches of it),
    #    each drawing stage's switches and the upscaler's batch and input
    timed, given = timed_alone(checked.lyrics, registry.models), checked.storyboard
    unwritten = given is not None and given.unwritten
    memory = (
        plan_on_device(
            registry, request, settings, checked.scored, timed, keyframes_only, checked.references, unwritten
        )
        if settings
        else None
    )
    settings = batched_as_planned(settings, memory) if settings else None
    offloads = stage_offloads(memory, settings) if settings else {}
    # 6. the song, decoded once (a work directory another run holds refused first: a long song takes a while)
    if checked.workdir is not None and not wait:
        checked.workdir.check_free()
    with timings.measure("decode audio"):
        audio = load_audio(request.song, request.max_seconds)
    if settings is not None:
        check_one_frame(audio.info.duration, settings.fps)
    workdir = checked.workdir or Workdir.for_song(request.song, audio.info.sha256)  # (a song that came since)
    # a timed lyrics file's lines fitted to the song once, where the run takes them: for its storyboard where no
    # --storyboard file stands in for them, and for the captions (as musicvid.batch.lengths checks a row)
    timed_lyrics, lyrics = None, checked.lyrics
    if lyrics is not None and lyrics.timed and checked.lyrics_read:
        timed_lyrics = fit_lyrics(lyrics, audio.info.duration, audio.info.sha256)
        if (code := checked.language) is not None:  # the person's word over the file's
            # (recorded in what the storyboard is made from: another --language makes it anew, in its language)
            timed_lyrics = replace(timed_lyrics, language=code, model=f"{timed_lyrics.model} sung in {code}")
    return Run(
        # (the stages read Whisper's code: --language pl and --language Polish make one transcript)
        replace(request, context_size=checked.context_size, language=checked.language),
        registry,
        workdir,
        audio,
        timings,
        settings,
        output=checked.output,
        memory=memory,
        stop=stop,
        lyrics=checked.lyrics,
        timed_lyrics=timed_lyrics,
        storyboard=checked.storyboard,
        storyboard_is_input=workdir.is_storyboard(request.storyboard_file),
        offloads=offloads,
        upscaling=planned_upscaling(memory),
    )


def check_before_work(
    request: SongRequest,
    models: ModelSet,
    settings: RenderSettings | None = None,
    output: Path | None = None,
    video: bool = True,
    reference_only: tuple[str, ...] = (),
    draws: bool = True,
    own: frozenset[str] = frozenset(),
) -> Checked:
    """Steps 0 to 4 (module doc): what can be checked of a call before its song is decoded. A `video`'s `output`
    is beside the song where None; `reference_only`: the options given that act only where the run draws a
    reference picture (check_reference_drawn); `draws`: whether the call loads the models it draws with (`musicvid plan` does not); `own`: the
    roles a registry loads with loaders of its own (a benchmark's random weights), whose names no file stands for."""
    written = (output or default_output(request, settings)) if video else None
    outputs = settings.outputs(named_file(written)) if written else []
    files = inputs_of(request, settings)
    check_paths(files, outputs, request.workdir)
    song_there = readable_song(request.song, request.workdir)  # (first: an unsearchable folder is its outputs' too)
    # 1. the settings against the models
    context_size = request.context_size if request.context_size is not None else vipe_context(models.vipe)
    scored = check_against_models(settings, models, draws, own) if settings is not None else False
    # 2. the outputs
    check_outputs(outputs, files)
    # 3. the inputs, each read or its header decoded
    lyrics = check_lyrics_file(request.lyrics_file, language_code(request.language)) if request.lyrics_file else None
    storyboard = load_storyboard(request.storyboard_file) if request.storyboard_file else None
    # the lyrics file is read for the storyboard where no --storyboard file stands in for its lines, and a timed
    # file's times for the captions (when each line, and for karaoke each word, is sung; musicvid.batch.lengths
    # checks the same against a row's song)
    captioned = settings is not None and settings.captions != "none"
    lyrics_read = storyboard is None or (lyrics is not None and lyrics.timed and captioned)
    if lyrics is not None and not lyrics_read:  # (said, as a flag unused; --lyrics's or a batch row's cell)
        log.warning(
            f"lyrics {lyrics.path} not read: the storyboard's lines stand in for them (beside a storyboard, only "
            "captions read lyrics: a timed file's times)"
        )
    heard = storyboard is None and not (lyrics and lyrics.timed)  # (Whisper hears the song)
    language = resolved_language(request.language, models, heard)
    if heard and draws:  # (a plan loads none)
        if "asr" not in own:
            refuse_offline(models.asr_backend, models.asr)
        if request.separate_vocals and "separator" not in own:
            check_separator(models.separator)
    if storyboard is None and draws and "vipe" not in own:  # (ViPE loads after Whisper has heard the song)
        local_names.refuse_offline("--vipe", models.vipe, models.vipe, "config.json")
    if settings is not None and own_references(storyboard):
        check_scene_references(models)
    pictures = storyboard.picture_files() if storyboard else {}
    for what, path in pictures.items():
        check_picture(path, what)
    check_not_inputs(outputs, pictures)
    files |= pictures
    if settings and settings.reference:
        check_picture(settings.reference, "reference picture")
    references = own_references(storyboard)
    # 4. the work directory (the default one's too: it may be there already; not a song's that is not there)
    output = outputs[0] if outputs else None
    checked = Checked(output, None, scored, lyrics, context_size, storyboard, references, language, lyrics_read)
    if not (request.workdir or song_there):
        return checked
    workdir = Workdir.of_song(request.song, request.workdir)
    if request.workdir is None:  # (one given was checked first)
        check_made(workdir.root, "the work directory")
    workdir.check()
    workdir.check_writable()
    if song_there:
        workdir.check_song(request.song, file_sha256(request.song))
    workdir.check_unwritten(files)
    workdir.check_apart(outputs)
    if outputs and song_there:
        check_replaceable(outputs, workdir, request.overwrite)
    if not request.storyboard_file and workdir.storyboard.is_file():  # edited in place: a slip refused now, not
        # after Whisper (its pictures, once it is known to be kept: storyboard_in); its references may be drawn
        references = own_references(load_storyboard(workdir.storyboard))
    if settings is not None:
        check_reference_drawn(reference_only, settings.reference is not None or references)
    for path in outputs:  # last, once nothing else refuses the run: it makes a file (and removes it) where each goes
        check_creatable(path)
    return replace(checked, workdir=workdir, references=references)


def check_reference_drawn(reference_only: tuple[str, ...], drawn: bool, where: str = "this run draws none") -> None:
    """Options that act only where a reference picture is drawn (musicvid.settings.resolve.reference_only), refused
    where none is (`drawn`: whether one is; `where` says where none is): they would do nothing, and say nothing."""
    if reference_only and not drawn:
        act, them = ("acts", "it") if len(reference_only) == 1 else ("act", "them")
        raise UserError(
            f"{' and '.join(reference_only)} only {act} with --reference, or a storyboard whose scenes name their own "
            f"reference pictures, and {where}: give one, or leave {them} out"
        )


def check_against_models(settings: RenderSettings, models: ModelSet, draws: bool, own: frozenset[str]) -> bool:
    """Step 1: the settings against the models (check_before_work's arguments); whether the keyframes are scored (a
    scorer that cannot be had costs the scores, where the picks need none)."""
    check_drawing_options(models, settings)
    if settings.compile:
        compile_backend()
    scored = check_scorer(models, settings)
    check_drawing_files(models, settings, references=settings.reference is not None, loads=draws)
    if settings.resolution is not None and "upscaler" not in own:
        check_upscaler(models.upscaler)
    return scored


def resolved_language(language: str | None, models: ModelSet, heard: bool) -> str | None:
    """--language as Whisper's code (language_code: a name Whisper does not know refused, whoever hears the song),
    and where Whisper hears the song (`heard`: no storyboard file nor timed lyrics stand in for it), refused by an
    ASR model that hears English alone (check_language)."""
    code = language_code(language)
    if heard:
        check_language(code, models)
    return code


def check_language(language: str | None, models: ModelSet) -> None:
    """A --language (Whisper's code) other than English refused where the ASR model's name says it hears English
    alone: a size or a hub name ending .en, or the tiny preset's Whisper (English-only, as tiny.en:
    musicvid.models.tiny); and one its size did not learn (Cantonese but by large-v3 and turbo). A file's or a
    folder's is refused as it loads (musicvid.lyrics.transcribe.detect_language)."""
    check_hears(language, models.asr, not english_only(models.asr))
    check_learned(language, models.asr, learned_by_name(models.asr))


def timed_alone(lyrics: KnownLyrics | None, models: ModelSet) -> bool:
    """Whether a run's lyrics are timed and Whisper does not listen to them: the memory plan's `timed_lyrics`. It
    listens to a timed file's lines in another language with no English beside them, for their English, where its
    name says it hears more than English (musicvid.storyboard.make.unheard)."""
    if lyrics is None or not lyrics.timed:
        return False
    return not untranslated(lyrics.language, lyrics.lines) or english_only(models.asr)


def own_references(storyboard: Storyboard | None) -> bool:
    """Whether a scene of `storyboard` names its own reference picture."""
    return storyboard is not None and any(scene.reference for scene in storyboard.scenes)


class UnreadableSong(UserError):
    """A song that is there and cannot be read: a batch reports its row as failed at its turn, as a missing one."""


def readable_song(song: Path, workdir: Path | None) -> bool:
    """Whether the song is a regular file, opened; refused, as UnreadableSong, where it is there and cannot be read
    (no read permission, a folder on the way without search permission, a name the system refuses), and where it is
    one of musicvid's own files (step 3: check_made_by_no_run, with the run's --workdir). A song that is not there, or
    a pipe, is refused as it is decoded (step 6: check_file, done once)."""
    try:
        status = probe(song, "the song")
    except UserError as error:
        raise UnreadableSong(str(error)) from None
    if status is None or not stat.S_ISREG(status.st_mode):
        return False
    try:
        song.open("rb").close()
    except OSError as error:
        raise UnreadableSong(f"cannot read {shown(song)}: {error.strerror}") from None
    check_made_by_no_run(song, workdir)
    return True


def default_output(request: SongRequest, settings: RenderSettings) -> Path:
    """`<song>.mp4` (or `<song>.preview.mp4`) beside the song; where that, its .srt or .ass would be one
    of the run's inputs (an audio-only `song.mp4`, lyrics in `song.srt`), `<song>.video.mp4` (then
    `.video-2.mp4`, ...)."""
    song, inputs = request.song, inputs_of(request, settings).values()
    if song.name in ("", ".."):  # (".", "/", "..": a folder by its name alone, with no name to give the video)
        raise UserError(f"{shown(song)} is a directory, not a file (audio file wanted)")
    for extra in itertools.chain([""], (f".video{f'-{n}' if n > 1 else ''}" for n in itertools.count(1))):
        output = song.with_name(video_name(song.stem + extra, settings.preview))
        if not any(same_file(o, i) for o in settings.outputs(output) for i in inputs):
            return output
    raise AssertionError("unreachable: the names above never end")
