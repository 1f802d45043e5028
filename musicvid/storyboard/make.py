"""A song's storyboard in its work directory: the transcript (from a timed lyrics file, or by the ASR model,
cached as transcript.json) and the storyboard made from it (scenes, form, ViPE's prompts), or the saved one
reused, edits and all, while it comes from the same inputs."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from musicvid.core.audio import Audio
from musicvid.core.errors import UserError
from musicvid.core.files import check_not_inputs, check_picture, weights_identity
from musicvid.core.outputs import changed_since_written
from musicvid.core.paths import shown
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.known import KnownLyrics, check_line_count, lyrics_label, read_plain_lyrics
from musicvid.lyrics.languages import language_name, latin
from musicvid.lyrics.transcribe import english_only, multilingual, transcribe, translated, untranslated
from musicvid.lyrics.transcript import Transcript
from musicvid.lyrics.vocals import separate_vocals
from musicvid.models.asr_files import refuse_offline
from musicvid.models.drawing import check_scene_references
from musicvid.models.precision import Precision
from musicvid.models.readback import dtype_text
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.run import Run
from musicvid.settings.presets import PRESETS, ModelSet
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import SongAudio, Storyboard, load_storyboard, scene_seed
from musicvid.storyboard.elaborate import elaborate
from musicvid.storyboard.form import mark_form
from musicvid.storyboard.kept import as_read, write_storyboard, write_transcript
from musicvid.storyboard.made_with import MadeWith
from musicvid.storyboard.scenes import scenes_from_lines

log = logging.getLogger("musicvid")


def get_transcript(run: Run) -> Transcript:
    """The timed lines: from a timed lyrics file (given the English the ASR model hears over them where they are in
    another language with none beside them, unless unheard); or known words (plain text) aligned by the ASR model;
    or recognized by it; on the vocals alone if asked. The work directory keeps what the ASR model made."""
    request, registry, timings = run.request, run.registry, run.timings
    info, lyrics, timed = run.audio.info, run.lyrics, run.timed_lyrics
    if timed is not None and (why := unheard(timed, registry)) is not None:
        return as_written(lyrics, timed, why)
    texts = read_plain_lyrics(lyrics) if lyrics and timed is None else None
    if texts:
        check_line_count(len(texts), info.duration, lyrics.path)
    # (--language as Whisper's code: musicvid.prepare resolved it)
    models, vocals, language = registry.models, request.separate_vocals, request.language
    side = run.audio.side
    source = transcript_source(models, vocals, lyrics, asr_dtype(models, registry.precision), language, side)
    cached = heard_before(run)
    # (one made before the dtype was recorded is kept, as a storyboard made before its ViPE's dtype is; known words
    # aligned before they were given their English are aligned again)
    if cached and cached.model in (source, transcript_source(models, vocals, lyrics, language=language, side=side)):
        if not (texts and untranslated(cached.language, cached.lines)):
            return cached
    samples = run.audio.samples
    run.go_on()
    if request.separate_vocals:
        with registry.use("separator", timings) as separator, timings.measure("separate vocals", registry.device):
            samples = separate_vocals(separator, Path(info.path), samples.size, quiet=request.quiet)
        run.go_on()
    stage = "translate" if timed else "align" if texts else "transcribe"
    with registry.use("asr", timings) as asr, timings.measure(stage, registry.device):
        if timed is not None:
            if not multilingual(asr):  # (a file's or a folder's Whisper, which its name did not tell)
                return as_written(lyrics, timed, f"the ASR model {asr.name} hears English alone")
            transcript = replace(
                timed, lines=translated(asr, samples, timed.lines, timed.language, quiet=request.quiet)
            )
        elif texts:
            transcript = align_lyrics(asr, samples, texts, info.sha256, quiet=request.quiet, language=language)
            lines = translated(asr, samples, transcript.lines, transcript.language, quiet=request.quiet)
            transcript = replace(transcript, lines=lines)
        else:
            transcript = transcribe(asr, samples, info.sha256, quiet=request.quiet, language=language)
    transcript = replace(transcript, model=source)  # what the cache is checked against
    write_transcript(run.workdir, transcript)
    return transcript


def unheard(timed: Transcript, registry: ModelRegistry) -> str | None:
    """Why Whisper does not listen to a timed lyrics file's lines for their English ("": they need none; else where
    they are in another language with none beside them: its name says it hears English alone, or it cannot be had
    offline, which costs their English alone); None: it does."""
    models = registry.models
    if not untranslated(timed.language, timed.lines):
        return ""
    if english_only(models.asr):
        return f"the ASR model {models.asr} hears English alone"
    try:
        if "asr" not in registry.own:
            refuse_offline(models.asr_backend, models.asr)
    except UserError as unavailable:
        return str(unavailable).split(": ", 1)[-1]  # ("--asr-model NAME: " first)
    return None


def as_written(lyrics: KnownLyrics, timed: Transcript, why: str) -> Transcript:
    """A timed lyrics file's lines as ViPE reads them, as written: said where they are in another language with no
    English beside them (`why`: unheard), or in no Latin letter with no language named."""
    if why:
        sung_in = language_name(timed.language)
        log.warning(
            f"lyrics file {shown(lyrics.path)}: its lines are in {sung_in}, with no English beside them, and {why}: "
            "ViPE reads them as written (a Whisper that hears more, as the default models' large-v2, gives them their "
            "English)"
        )
    elif timed.lines and not any(c.isalpha() and latin(c) for line in timed.lines for c in line.english):
        log.warning(
            f"lyrics file {shown(lyrics.path)} names no language ([la:xx] in an LRC, or --language) and has no "
            "Latin letter: ViPE reads its lines as English"
        )
    return timed


def transcript_source(
    models: ModelSet,
    separate_vocals: bool,
    lyrics: KnownLyrics | None,
    dtype: str | None = None,
    language: str | None = None,
    side: bool = False,
) -> str:
    """What the ASR model's transcript is made from, as its cache is checked against: the models (each on this
    machine by what it holds, not by its path: weights_identity) and the ASR model's compute `dtype` (asr_dtype;
    None: as a source was written before it was recorded), the `language` given (--language, Whisper's code; None: detected, as a
    source says nothing of), whether the song is heard by its `side` (musicvid.core.audio.heard_mix: a transcript
    of its cancelled mix, made before, is made anew), the vocals' separator where it runs (always in float32), the
    known words' file (aligned; a timed file's: translated)."""
    source = f"{models.asr_backend}:{weights_identity(models.asr)}" + (f" in {dtype}" if dtype else "")
    source += f" heard as {language}" if language else ""
    source += " by its side" if side else ""
    if separate_vocals:
        source += f"+vocals:{weights_identity(models.separator)}"
    if lyrics is None:
        return source
    return f"{'translated' if lyrics.timed else 'aligned'}:{source}:{lyrics_label(lyrics)}"


def asr_dtype(models: ModelSet, precision: Precision) -> str:
    """What the ASR model computes in under `precision` (musicvid.models.loading.load_asr): faster-whisper's compute
    type (int8 on a CPU under auto), else openai-whisper's dtype."""
    return precision.asr_compute_type if models.asr_backend == "faster-whisper" else dtype_text(precision.asr)


def word_source(run: Run) -> Transcript | None:
    """What karaoke times the words by: a timed lyrics file's own lines (their words' times where it gives them:
    enhanced LRC, a transcript's JSON), else what the ASR model heard (the work directory's transcript)."""
    if run.lyrics and run.lyrics.timed:
        return run.timed_lyrics  # (as the storyboard took them)
    return heard_before(run)


def heard_before(run: Run) -> Transcript | None:
    """The work directory's transcript of the run's song; None where there is none, or a person edited it: it is
    musicvid's record of what was heard, never read as edited (musicvid.storyboard.kept.write_transcript)."""
    path = run.workdir.transcript
    return None if changed_since_written(path, run.workdir) else Transcript.cached(path, run.audio.info.sha256)


def made_with_of(
    request: SongRequest, registry: ModelRegistry, transcript: Transcript, title: str, artist: str
) -> MadeWith:
    """What a storyboard made now for `request` is made with: its options, the transcript's source, the `title` and
    `artist` ViPE reads, the models and the dtype ViPE computes in (musicvid.models.loading.load_vipe)."""
    return MadeWith(
        context_size=request.context_size,
        seed=request.seed,
        break_seconds=request.break_seconds,
        bars_per_scene=request.bars_per_scene,
        prompt_candidates=request.candidates,
        lens=request.lens,
        transcript=transcript.model,
        title=title,
        artist=artist,
        models=registry.models.describe()
        | vipe_weights(registry.models)
        | {"vipe_dtype": dtype_text(registry.precision.compute)},
    )


def vipe_weights(models: ModelSet) -> dict[str, str]:
    """What a storyboard records of ViPE beyond its name, where there is more: the hash of a checkpoint on this
    machine (trained again into the same folder, it is another model) and a tokenizer no preset gives."""
    tokenizer = models.vipe_tokenizer
    told = [held] if (held := weights_identity(models.vipe)) != models.vipe else []
    if tokenizer is not None and tokenizer not in {preset.vipe_tokenizer for preset in PRESETS.values()}:
        told.append(f"tokenizer {weights_identity(tokenizer)}")
    return {"vipe_weights": ", ".join(told)}  # ("": nothing more; a storyboard made before says nothing of it)


def _same_vipe(saved: Mapping[str, str], made: Mapping[str, str]) -> bool:
    """Whether a saved storyboard's prompts came from this ViPE: by its weights and the dtype it computed in where the
    storyboard records them (one made before they were recorded is kept, edits and all, as it was made), and by its
    name unless it is a checkpoint on this machine whose weights the storyboard records (vipe_weights names it first
    by what it holds: the same folder given by another path, or copied, is the same ViPE)."""
    recorded = ("vipe_weights", "vipe_dtype")
    held = not (made.get("vipe_weights") or "tokenizer").startswith("tokenizer") and "vipe_weights" in saved
    named = held or saved.get("vipe") == made["vipe"]
    return named and all(saved.get(key, made.get(key)) == made.get(key) for key in recorded)


def _same_making(saved: Storyboard, made: MadeWith) -> bool:
    """Whether a saved storyboard came from the same inputs (then it is reused, edits and all): never judged by its
    fields a person edits (its title and artist: those it was made for are recorded beside its options)."""
    keys = ("context_size", "seed", "break_seconds", "bars_per_scene", "prompt_candidates", "lens", "transcript")
    # storyboards made before prompt candidates, lenses and bars existed are kept as they were made
    made_before = {"prompt_candidates": SongRequest.candidates, "lens": SongRequest.lens}
    made_before["bars_per_scene"] = SongRequest.bars_per_scene
    saved_as = {key: getattr(saved.settings, key) for key in keys}
    # made before the title and artist it was made for were recorded: its own, as it was written then
    made_for = [saved.settings.title, saved.settings.artist]
    made_for = [own if was is None else was for was, own in zip(made_for, (saved.title, saved.artist))]
    return (
        all((made_before.get(k) if saved_as[k] is None else saved_as[k]) == getattr(made, k) for k in keys)
        and _same_vipe(saved.settings.models or {}, made.models or {})
        and made_for == [made.title, made.artist]
    )


def check_matches_audio(storyboard: Storyboard, song: str | Path, seconds: float, source: str) -> None:
    """Refuse `storyboard` (read from `source`) for a song `seconds` long that it was not made for."""
    if abs(storyboard.duration - seconds) > 0.05:
        raise UserError(
            f"storyboard {source} is for audio of {storyboard.duration:.2f} s, but {song} lasts {seconds:.2f} s"
        )


def storyboard_in(run: Run) -> Storyboard:
    """The storyboard of the run's request, in the work directory the run holds."""
    request, audio, registry, timings = run.request, run.audio, run.registry, run.timings
    info, path = audio.info, run.workdir.storyboard
    title = request.title if request.title is not None else info.title
    artist = request.artist if request.artist is not None else info.artist
    built_on = None  # the work directory's storyboard.json as read (kept.as_read), where the storyboard is built on it

    if request.storyboard_file:
        storyboard = run.storyboard  # (as checked before any work: the file may have been saved again since)
        check_matches_audio(storyboard, info.path, info.duration, str(request.storyboard_file))
        if storyboard.audio.sha256 and storyboard.audio.sha256 != info.sha256:  # (a remaster, or another song)
            log.warning(
                f"storyboard {request.storyboard_file} was made of another recording than {info.path} (as long, "
                "another SHA-256): its scenes are timed to that one"
            )
    else:
        transcript = get_transcript(run)
        run.go_on()
        made = made_with_of(request, registry, transcript, title, artist)
        saved = load_storyboard(path) if path.exists() else None
        if saved and _same_making(saved, made):
            check_matches_audio(saved, info.path, info.duration, str(path))
            # its edits kept (written back below); the title and artist it was made for recorded, if they were not
            storyboard = replace(saved, settings=replace(saved.settings, title=title, artist=artist))
            built_on = as_read(run.workdir)
        else:
            scenes = scenes_from_lines(transcript.lines, info.duration, request.break_seconds)
            storyboard = Storyboard(
                audio=SongAudio(info.duration, info.path, info.sha256),
                title=title,
                artist=artist,
                language=transcript.language,
                settings=made,
                scenes=scenes,
            )
            # its passages without words cut with the music; each scene's seed, a motif's shared
            storyboard = read_form(storyboard, audio, timings, request.bars_per_scene)
            seeded = [replace(s, seed=scene_seed(request.seed, s.motif or s.index)) for s in storyboard.scenes]
            storyboard = replace(storyboard, scenes=seeded)
    storyboard = read_form(storyboard, audio, timings)  # a storyboard made before sections, or a section cleared
    if not request.storyboard_file:  # a file's pictures were checked before any work (musicvid.prepare)
        check_storyboard_pictures(run, storyboard)

    if storyboard.unwritten:
        run.go_on()
        with registry.use("vipe", timings) as vipe, timings.measure("elaborate", registry.device):
            storyboard = elaborate(
                storyboard,
                vipe,
                context_size=request.context_size,
                seed=request.seed,
                prompt_candidates=request.candidates,
                lens=request.lens,
                quiet=request.quiet,
            )
    if not run.storyboard_is_input:
        # this song's, by its absolute path: `score` may run from another folder
        song = str(Path(info.path).resolve())
        storyboard = replace(storyboard, audio=replace(storyboard.audio, path=song, sha256=info.sha256))
        write_storyboard(run, storyboard, built_on)
    return storyboard


def read_form(storyboard: Storyboard, audio: Audio, timings: Timings, bars_per_scene: int | None = None) -> Storyboard:
    """The storyboard with sections, motifs and moods for its scenes without a section (musicvid.storyboard.form); given
    `bars_per_scene` (scenes just cut), the passages without words are cut with the music first, into
    scenes of that many bars at most."""
    if not any(s.section is None for s in storyboard.scenes):
        return storyboard
    with timings.measure("form"):
        return replace(storyboard, scenes=mark_form(storyboard.scenes, audio.samples, bars_per_scene))


def check_storyboard_pictures(run: Run, storyboard: Storyboard) -> None:
    """The pictures of a storyboard the work directory holds (an edited one's pins, known only now), as those of a
    storyboard file were checked before any work (musicvid.prepare): each decodes (its header) and, in a run that
    draws, none is a file it writes, and its scenes' own references are ones the picture model can draw."""
    pictures, outputs = storyboard.picture_files(), run.outputs()
    for what, path in pictures.items():
        check_picture(path, what)
    if run.settings is not None:
        check_not_inputs(outputs, pictures)
        run.workdir.check_unwritten(pictures)
        if any(scene.reference for scene in storyboard.scenes):
            check_scene_references(run.registry.models)
