"""Transcribe: Whisper (openai-whisper or faster-whisper) turns the song into timed lyric lines.

Whisper listens to the whole song, and what it hears is kept unless the evidence says nobody sings
there (musicvid.lyrics.singing: its inventions over music by their own signals, and Silero's voice
activity where it agrees with Whisper). Whisper's segments are cut again into sung lines at the singer's
pauses, and a word reaching out of the stretch it is sung in is cut back to it. Where Whisper looped, or heard
nothing of a voice Silero hears, that stretch is heard again on its own. A refrain sung three times stays three
lines. The language, unless given (--language), is detected on the singing Silero hears, else past the intro, and
where the words heard over the whole song read as another language, taken as theirs (musicvid.lyrics.written). A song
not in English keeps its original text (for captions; its words joined as written: spacing) and gets an English
rendering from Whisper's translate task for ViPE."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.errors import UserError
from musicvid.core.progress import Progress
from musicvid.lyrics.belief import believed, may_be_sung, typical_belief
from musicvid.lyrics.inventions import loops, said_over_music
from musicvid.lyrics.languages import check_learned, language_name
from musicvid.lyrics.lines import PHRASE_SECONDS, lines_at_pauses, sung_in
from musicvid.lyrics.singing import (
    CLIP_LEAD,
    CLIP_TAIL,
    TRUSTED_AGREEMENT,
    Voice,
    opened,
    shifted,
    trusted_over_song,
    where_sung,
)
from musicvid.lyrics.transcript import Line, Transcript, Word, fit_to_duration
from musicvid.lyrics.written import written_language
from musicvid.models.internals import ctranslate2_whisper
from musicvid.models.loading import ASRModel
from musicvid.settings.presets import TINY
from vipe_core.bars import on_terminal

log = logging.getLogger("musicvid")

# Whisper's window: what the language is detected on
WINDOW_SECONDS = 30.0
SEED = 0
# Where Silero's voice lies under this share of what Whisper believed, Silero hears the singer, not the band, even
# if Whisper heard under TRUSTED_AGREEMENT of that voice: Whisper missed lines (Whisper base heard nothing of a
# Turkish song's first 30 s, three sung lines Silero heard to 0.04 s).
ALMOST_ALL = 0.9


def _word(start: float, end: float, text: str, probability: float | None) -> Word:
    return Word(float(start), float(end), text.strip(), None if probability is None else round(float(probability), 3))


def _options(task: str, language: str, asr: ASRModel) -> dict:
    """What both backends are asked: the whole song, word times when transcribing, no conditioning on the
    line before (lyrics repeat, and conditioning on them makes Whisper loop over choruses), the model's
    beam at temperature 0 and its samples at each temperature it falls back to (musicvid.models.loading)."""
    return dict(
        task=task,
        language=language,
        word_timestamps=task == "transcribe",
        condition_on_previous_text=False,
        temperature=list(asr.temperatures),
        beam_size=asr.beams,
        best_of=asr.samples,
    )


def _openai_whisper(model, samples: np.ndarray, options: dict, show: bool):
    import whisper

    if options["beam_size"] == 1:  # its greedy decoder, not a beam search of one
        options = {key: value for key, value in options.items() if key != "beam_size"}
    fp16 = next(model.parameters()).dtype == torch.float16  # as loaded in the run's precision
    # Its bar is redrawn in place on stderr whatever stderr is: where that is no terminal (a log), the bar is off
    # and the stage's own says when the work starts and ends. (The page follows either: Gradio tracks every tqdm.)
    drawn, seconds = show and on_terminal(), round(samples.size / SAMPLE_RATE, 1)
    with Progress(options["task"], total=seconds, unit="s", quiet=not show or drawn) as progress:
        result = whisper.transcribe(model, samples, **options, fp16=fp16, verbose=False if drawn else None)
        progress.set_to(seconds)
    return [
        Line(
            float(s["start"]),
            float(s["end"]),
            s["text"].strip(),
            words=[_word(w["start"], w["end"], w["word"], w.get("probability")) for w in s.get("words", [])],
        )
        for s in result["segments"]
    ]


def _faster_whisper(model, samples: np.ndarray, options: dict, show: bool):
    segments, info = model.transcribe(samples, **options)
    lines = []
    with Progress(options["task"], total=round(info.duration, 1), unit="s", quiet=not show) as progress:
        for s in segments:  # a generator: recognition happens as it is read
            words = [_word(w.start, w.end, w.word, w.probability) for w in s.words or []]
            lines.append(Line(float(s.start), float(s.end), s.text.strip(), words=words))
            progress.set_to(min(round(s.end, 1), progress.total))
    return lines


@contextmanager
def torch_threads_kept():
    """openai-whisper times words with numba, whose thread pool, once started, sets the OpenMP thread
    count that torch shares to numba's own (the cores). Pictures drawn with another thread count differ
    in their last bits, so a render that recognized or aligned the song would not match its own resume,
    which does not: torch keeps the count it had."""
    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextmanager
def decoder_of(asr: ASRModel):
    """The model a decode runs on, its temperature fallback sampling from SEED, so that a song is heard the
    same every time, alone or after other songs. CTranslate2 seeds each of a model's threads once, at its
    first sample, and `set_random_seed` reaches only threads started later (CTranslate2's issue #1757): a
    decode that may sample gets faster-whisper's model loaded afresh. torch's generators are put back as
    they were, for the other jobs."""
    if asr.backend == "faster-whisper":
        import ctranslate2

        ctranslate2.set_random_seed(SEED)
        may_sample = asr.fresh is not None and any(t > 0 for t in asr.temperatures)
        yield asr.fresh() if may_sample else asr.model
        return
    device = next(asr.model.parameters()).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(SEED)
        yield asr.model


def recognize(asr: ASRModel, samples: np.ndarray, task: str, language: str, show: bool) -> list[Line]:
    """Whisper's segments over the whole song; on a terminal, openai-whisper draws its own bar, in audio frames."""
    backend = _faster_whisper if asr.backend == "faster-whisper" else _openai_whisper
    with torch_threads_kept(), decoder_of(asr) as model:
        return backend(model, samples, _options(task, language, asr), show)


def singing_to_detect(samples: np.ndarray, silero: Voice) -> np.ndarray:
    """What the language is detected on: the singing Silero heard, if a few seconds of it; else the 30 s
    from a third into the song, past the intro (a band may drown the voice for Silero)."""
    voiced = [samples[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] for a, b in silero.stretches]
    if sum(v.size for v in voiced) >= 5 * SAMPLE_RATE:
        return np.concatenate(voiced)
    start = int(max(0.0, min(samples.size / SAMPLE_RATE / 3, samples.size / SAMPLE_RATE - WINDOW_SECONDS)))
    return samples[start * SAMPLE_RATE : (start + int(WINDOW_SECONDS)) * SAMPLE_RATE]


def multilingual(asr: ASRModel) -> bool:
    """Whether `asr` hears more than English (its tokenizer's languages)."""
    return (
        ctranslate2_whisper(asr.model).is_multilingual if asr.backend == "faster-whisper" else asr.model.is_multilingual
    )


def detect_language(asr: ASRModel, voiced: np.ndarray, given: str | None = None, written: str | None = None) -> str:
    """The language of the first 30 s of `voiced` ("en" for English-only models); the one `given` (--language,
    Whisper's code) where one is, with no detecting (check_hears); else, on a Whisper that hears more than English,
    the one the known lyrics are `written` in (musicvid.lyrics.written), where it was read."""
    faster, hears = asr.backend == "faster-whisper", multilingual(asr)
    if given is not None:
        check_hears(given, asr.name, hears)
        check_learned(given, asr.name, (ctranslate2_whisper(asr.model) if faster else asr.model).num_languages)
        return given
    if not hears:
        return "en"
    if written is not None:
        return written
    if faster:
        language, _, _ = asr.model.detect_language(voiced)
        return language
    import whisper

    model = asr.model
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(voiced), model.dims.n_mels).to(model.device)
    _, probabilities = model.detect_language(mel.to(next(model.parameters()).dtype))
    return max(probabilities, key=probabilities.get)


def check_hears(language: str | None, asr_name: str, multilingual: bool) -> None:
    """Refuse a --language (Whisper's code) other than English for a Whisper whose tokenizer is not multilingual: it
    hears English alone (tiny.en, base.en, ...). By its name before any work (musicvid.prepare); a file's or a
    folder's is known only once it loads (detect_language)."""
    if language not in (None, "en") and not multilingual:
        raise UserError(
            f"--language {language} needs a Whisper that hears more than English, and {asr_name} hears English alone: "
            "leave --language out, or use a multilingual Whisper (the default models' large-v2, or --asr-model base, "
            "not base.en)"
        )


def attach_translation(lines: list[Line], translated: list[Line]) -> list[Line]:
    """The lines, each given the English of the translated segments sung over it. Whisper's translation is cut
    into segments of its own, so a segment over several lines is split between them: its words in
    order, each line taking a share as large as its share of the segment's time. A segment that
    overlaps no line goes to the nearest one. A phrase Whisper says over music (a subtitle's credits, a video's
    goodbye: said_over_music) is the English of no line."""
    if not lines:
        return []
    parts: list[list[str]] = [[] for _ in lines]
    for segment in (segment for segment in translated if not said_over_music(segment.text)):
        overlaps = [max(0.0, min(line.end, segment.end) - max(line.start, segment.start)) for line in lines]
        words = segment.text.split()
        if sum(overlaps) <= 0:
            nearest = min(range(len(lines)), key=lambda i: abs(lines[i].start - segment.start))
            parts[nearest] += words
            continue
        taken, covered = 0, 0.0
        for i, overlap in enumerate(overlaps):
            covered += overlap
            upto = round(len(words) * covered / sum(overlaps))
            parts[i] += words[taken:upto]
            taken = upto
    return [replace(line, text_en=" ".join(words) or None) for line, words in zip(lines, parts)]


def heard_alone(asr: ASRModel, samples: np.ndarray, language: str, start: float, end: float) -> list[Line]:
    """The segments Whisper hears in the song from `start` to `end` s, decoded alone (no window carries in what it
    heard before), in the song's time."""
    clip = samples[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)]
    again = fit_to_duration(recognize(asr, clip, "transcribe", language, False), end - start)
    return [shifted(segment, start) for segment in again]


def loops_heard_again(asr: ASRModel, samples: np.ndarray, language: str, heard: list[Line]) -> list[Line]:
    """Where Whisper looped (musicvid.lyrics.inventions.loops: a line said again over the lines sung after it),
    what is sung there, heard again on its own: the audio between the segments either side of the loop,
    decoded alone (a window that starts elsewhere does not carry the loop), takes the loop's place. A loop
    heard again stays, for `may_be_sung` to drop."""
    duration = samples.size / SAMPLE_RATE
    for n in reversed(loops(heard)):
        start = heard[n - 1].end if n else 0.0
        end = heard[n + 1].start if n + 1 < len(heard) else duration
        if end <= start:  # the segments either side overlap: nothing between them to hear again
            continue
        heard = heard[:n] + (heard_alone(asr, samples, language, start, end) or [heard[n]]) + heard[n + 1 :]
    return heard


def unheard_voice(heard: list[Line], silero: Voice) -> Voice:
    """Silero's stretches of voice that Whisper heard no word of (none of the words it may have sung, each as far as
    `held_until`, from a lead before them to a tail after them: where what Whisper decodes of a stretch lies), each
    at least PHRASE_SECONDS,
    where the two agree both ways: Silero is trusted over the song (musicvid.lyrics.singing.trusted_over_song), and
    Whisper's belief lies under at least TRUSTED_AGREEMENT of Silero's voice, or else Silero's voice lies under
    ALMOST_ALL of Whisper's belief (it hears the singer, and Whisper missed lines: then as much of the voice as
    Whisper believed, at most: `likest_lines`). Otherwise none: over an instrumental, Silero's voice is the band's."""
    kept = may_be_sung(heard)
    belief = Voice.of_words(believed(kept), silero.duration)
    heard_share = belief.agreement([Line(start, end, "") for start, end in silero.stretches]) or 0.0
    hears_singer = (silero.agreement(believed(kept)) or 0.0) >= ALMOST_ALL
    if not (trusted_over_song(kept, silero) and (heard_share >= TRUSTED_AGREEMENT or hears_singer)):
        return Voice([], silero.duration)
    # a word is its stretch's (the one it begins in), or, begun outside any, of those it lies near
    spans = [(w.start, held_until(w, silero), silero.begun_in(w)) for segment in kept for w in segment.words]
    alone = [
        (start, end)
        for number, (start, end) in enumerate(silero.stretches)
        if end - start >= PHRASE_SECONDS
        and not any(a < end + CLIP_TAIL and b > start - CLIP_LEAD and at in (None, number) for a, b, at in spans)
    ]
    if heard_share < TRUSTED_AGREEMENT:
        alone = likest_lines(alone, sum(end - start for start, end in belief.stretches))
    return Voice(alone, silero.duration)


def held_until(word: Word, silero: Voice) -> float:
    """Where a word heard ends, for finding voice Whisper missed: no later than the stretch of voice it begins in.
    Whisper stretches a word over lines it did not hear (openai-whisper's "across", 11.7-30.0 s, over two sung lines
    of a fresh long song; a refrain's "fire" over its third time), which left no stretch unheard to hear again."""
    return word.end if (number := silero.begun_in(word)) is None else min(word.end, silero.stretches[number][1])


def likest_lines(stretches: list[tuple[float, float]], seconds: float) -> list[tuple[float, float]]:
    """The shortest of the `stretches` (the likest a sung line: a band's "voice" runs on), `seconds` of them at
    most, in order."""
    taken, total = [], 0.0
    for start, end in sorted(stretches, key=lambda stretch: stretch[1] - stretch[0]):
        total += end - start
        if total > seconds:
            break
        taken.append((start, end))
    return sorted(taken)


def voice_heard_again(
    asr: ASRModel, samples: np.ndarray, language: str, heard: list[Line], silero: Voice
) -> list[Line]:
    """The segments heard, and where Whisper missed a voice Silero hears (`unheard_voice`), what is sung there,
    heard again on its own: each stretch with its lead and tail, decoded alone (a window that began in a long
    stretch of band may decode nothing of the lines after it; one holding a refrain twice, the refrain once). What
    it hears is judged as the rest is, but for a word sung in another stretch (`sung_in`)."""
    for start, end in unheard_voice(heard, silero).stretches:
        stretch, start, end = silero.stretch_of(Word(start, end, "")), max(0.0, start - CLIP_LEAD), end + CLIP_TAIL
        again = sung_in(heard_alone(asr, samples, language, start, min(silero.duration, end)), silero, stretch)
        heard = sorted(heard + again, key=lambda segment: segment.start)
    return heard


def hear(asr: ASRModel, samples: np.ndarray, quiet: bool, language: str | None = None) -> tuple[str, Voice, list[Line]]:
    """The song's language (`language` where given: Whisper's code), Silero's voice, and the segments Whisper
    hears over the whole song with no gate (where it looped, or missed a voice, heard again): what transcribing
    starts from."""
    silero = Voice.detect(samples)
    language = detect_language(asr, singing_to_detect(samples, silero), language)
    heard = fit_to_duration(recognize(asr, samples, "transcribe", language, not quiet), samples.size / SAMPLE_RATE)
    heard = loops_heard_again(asr, samples, language, heard)
    return language, silero, voice_heard_again(asr, samples, language, heard, silero)


def sung_segments(heard: list[Line], silero: Voice, duration: float) -> tuple[list[Line], list[Line], Voice, bool]:
    """The segments heard that may be sung (musicvid.lyrics.singing), each word kept in the stretch it is
    sung in; the same segments timed as the singer's pauses are read from (`lines_at_pauses`): where Silero is
    trusted, as Whisper heard them (fitted into the stretches of a voice Silero heard only in part, the words of a
    held note part where nobody paused; the voice's own pauses are `Voice.paused`), elsewhere as fitted; where the
    singing is; and whether Silero is trusted anywhere (around some segment: `where_sung`)."""
    kept = may_be_sung(heard)
    voice, trusted = where_sung(kept, silero, duration)
    # a segment where Silero is not trusted opens as where_sung found the voice from it
    kept = [segment if sure else opened([segment], voice.word)[0] for segment, sure in zip(kept, trusted)]
    fitted = [replace(segment, words=voice.fit_phrase(segment.words)) for segment in kept]
    paced = [segment if sure else fit for segment, fit, sure in zip(kept, fitted, trusted)]
    return fitted, paced, voice, any(trusted)


def sung_lines(heard: list[Line], silero: Voice, duration: float) -> list[Line]:
    """The lines sung, from the segments Whisper heard over the whole song, cut where Whisper cut them and at the
    singer's pauses (`lines_at_pauses`; where Silero is trusted, its voice's pauses too). A line whose words the
    voice left no time (each heard more than a word before the stretch of voice it is nearest: `Voice.fit`) goes,
    as Whisper's filling of the music before the voice. Where Silero is trusted anywhere, a line heard just after
    the voice it was sung in moves there (`Voice.slipped`), an invention over the music goes (`Voice.sung`), and
    the first line of a stretch of voice begins where the voice does (`Voice.first_sung`); in a passage where
    Silero is not trusted, the voice is where Whisper heard the words, and these leave its lines as they are."""
    kept, paced, voice, trusted = sung_segments(heard, silero, duration)
    cut = lines_at_pauses(kept, voice if trusted else None, paced)
    lines = [line for line in fit_to_duration(cut, duration) if line.end > line.start]
    if not trusted:
        return lines
    return voice.first_sung(voice.sung(voice.slipped(lines), believed(kept), typical_belief(kept)))


def transcribe(
    asr: ASRModel, samples: np.ndarray, audio_sha256: str, *, quiet: bool = False, language: str | None = None
) -> Transcript:
    """The lines sung, recognized and translated (in `language` where given: Whisper's code)."""
    duration = samples.size / SAMPLE_RATE
    guessed, silero, heard = hear(asr, samples, quiet, language)
    lines = sung_lines(heard, silero, duration)
    read = written_language([line.text for line in lines]) if language is None and multilingual(asr) else None
    if read is not None and read != guessed:  # the words heard correct a guess (musicvid.lyrics.written)
        name = language_name(read)
        log.warning(
            f"Whisper took the singing for {language_name(guessed)}, but the words it heard read as {name}: the song "
            f"is taken as {name} (--language chooses)"
        )
    language = read or guessed
    lines = translated(asr, samples, lines, language, quiet=quiet)
    return Transcript(lines, language, f"{asr.backend}:{asr.name}", audio_sha256)


def translated(asr: ASRModel, samples: np.ndarray, lines: list[Line], language: str, *, quiet: bool) -> list[Line]:
    """The lines sung in `language`, each given the English Whisper hears over it (attach_translation), for ViPE,
    which reads English; as they are in English."""
    if language == "en" or not lines:
        return lines
    translation = recognize(asr, samples, "translate", language, not quiet)
    return attach_translation(lines, fit_to_duration(translation, samples.size / SAMPLE_RATE))


def untranslated(language: str, lines: Sequence[Line]) -> bool:
    """Whether `lines` are in another `language` than English with no English beside any of them."""
    return language != "en" and bool(lines) and not any(line.text_en for line in lines)


def english_only(asr_name: str) -> bool:
    """Whether the ASR model's name says it hears English alone: a size or a hub name ending .en (not a file or folder
    of that name), or the tiny preset's Whisper (English-only, as tiny.en: musicvid.models.tiny). A file's or a
    folder's is known once it loads (multilingual)."""
    return (asr_name.endswith(".en") and not Path(asr_name).expanduser().exists()) or asr_name == TINY
