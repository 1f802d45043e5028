"""The stages, in order, with the work directory caching what each one made.

audio -> transcript -> storyboard (-> render, in musicvid.render). Each stage takes and returns plain
dataclasses; the work directory keeps their JSON so a rerun continues where the last one stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from musicvid.audio import MAX_SECONDS, Audio, AudioInfo, beat_times, load_audio
from musicvid.elaborate import elaborate
from musicvid.errors import UserError
from musicvid.align import align_lyrics
from musicvid.lyrics import PLAIN, lyrics_label, read_lyrics, read_plain_lyrics
from musicvid.models import ModelRegistry
from musicvid.storyboard import (
    DEFAULT_BREAK_SECONDS,
    Storyboard,
    instrumental_cuts,
    load_storyboard,
    plan_scenes,
    scene_seed,
    snap_cuts_to_beats,
)
from musicvid.timing import Timings
from musicvid.transcribe import transcribe
from musicvid.transcript import Transcript
from musicvid.vocals import separate_vocals
from vipe_core.choose import LENSES

WORK_ROOT = Path("musicvid-work")
# Candidates multiply ViPE's work: 20 took 15 times as long as one (benchmarks/elaborate.py, 2-core CPU).
MAX_CANDIDATES = 64
# ViPE was trained with up to 7 lines of context; more is read for every line and was never learned.
MAX_CONTEXT = 16


@dataclass
class SongRequest:
    """What to make a storyboard of, and how: everything before the pictures."""

    song: Path
    title: str | None = None
    artist: str | None = None
    workdir: Path | None = None
    storyboard_file: Path | None = None
    lyrics_file: Path | None = None
    context_size: int = 7
    seed: int = 0
    break_seconds: float = DEFAULT_BREAK_SECONDS
    candidates: int = 1  # ViPE elaborations per scene; the most visualisable is kept
    lens: str | None = None  # the reading the choice favours (vipe_core.choose.LENSES)
    separate_vocals: bool = False  # Demucs takes the band away before Whisper listens
    quiet: bool = False
    max_seconds: float = MAX_SECONDS  # longer songs are refused before they are decoded

    def check(self) -> None:
        if not 0 <= self.context_size <= MAX_CONTEXT:
            raise UserError(f"--context-size must be from 0 to {MAX_CONTEXT}, got {self.context_size}")
        if not 0 <= self.seed < 2**31:
            raise UserError(f"--seed must be from 0 to 2^31-1, got {self.seed}")
        if self.break_seconds <= 0:
            raise UserError(f"--break must be a positive number of seconds, got {self.break_seconds}")
        if not 1 <= self.candidates <= MAX_CANDIDATES:
            raise UserError(f"--candidates must be from 1 to {MAX_CANDIDATES}, got {self.candidates}")
        if self.lens is not None and self.lens not in LENSES:
            raise UserError(f"--lens must be one of {', '.join(LENSES)}, not {self.lens!r}")
        if self.lens is not None and self.candidates < 2:
            raise UserError("--lens chooses among several elaborations: add --candidates N (2 or more, e.g. 8)")


def work_directory(info: AudioInfo, workdir: Path | None) -> Path:
    """`musicvid-work/<song stem>-<short hash of the audio>/`, unless the user named one."""
    if workdir is None:
        stem = re.sub(r"[^\w.-]+", "_", Path(info.path).stem).strip("_") or "song"
        workdir = WORK_ROOT / f"{stem}-{info.sha256[:10]}"
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def get_transcript(
    audio: Audio, request: SongRequest, registry: ModelRegistry, workdir: Path, timings: Timings
) -> Transcript:
    """The timed lines: from a timed lyrics file; or known words (plain text) aligned by the ASR model;
    or recognized by it; on the vocals alone if asked. The work directory keeps what the ASR model made."""
    lyrics = request.lyrics_file
    if lyrics and lyrics.suffix.lower() != PLAIN:
        return read_lyrics(lyrics, audio.info.duration, audio.info.sha256)
    texts = read_plain_lyrics(lyrics) if lyrics else None
    path = workdir / "transcript.json"
    models = registry.models
    source = f"{models.asr_backend}:{models.asr}"
    if request.separate_vocals:
        source += f"+vocals:{models.separator}"
    if lyrics:
        source = f"aligned:{source}:{lyrics_label(lyrics)}"
    if path.exists():
        try:
            cached = Transcript.load(path)
            if cached.model == source and cached.audio_sha256 == audio.info.sha256:
                return cached
        except (ValueError, KeyError, TypeError):
            pass  # an unreadable cache is redone, not trusted
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
    request: SongRequest, registry: ModelRegistry, audio: Audio | None = None, timings: Timings | None = None
) -> tuple[Storyboard, Path, Audio]:
    """Transcribe and elaborate (or reuse what the work directory has); returns the storyboard,
    the work directory and the decoded audio."""
    request.check()
    timings = timings if timings is not None else Timings()
    if audio is None:
        with timings.measure("decode audio"):
            audio = load_audio(request.song, request.max_seconds)
    info = audio.info
    workdir = work_directory(info, request.workdir)
    path = workdir / "storyboard.json"
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
                    snap_cuts_to_beats(scenes, beat_times(audio.samples))
            storyboard = Storyboard(
                audio={"path": info.path, "sha256": info.sha256, "duration": info.duration},
                title=title,
                artist=artist,
                language=transcript.language,
                settings=settings,
                scenes=scenes,
            )
            for scene in storyboard.scenes:
                scene.seed = scene_seed(request.seed, scene.index)

    if any(not s.prompt.strip() for s in storyboard.scenes):
        with registry.use("vipe", timings) as vipe, timings.measure("elaborate", registry.device):
            elaborate(
                storyboard, vipe, context_size=request.context_size, seed=request.seed,
                candidates=request.candidates, lens=request.lens, quiet=request.quiet,
            )  # fmt: skip
    storyboard.save(path)
    return storyboard, workdir, audio
