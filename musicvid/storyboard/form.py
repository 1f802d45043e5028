"""The song's form: the section each scene is sung in, the chorus's motifs, and the mood of the passages
without words (docs/storyboard.md, "The song's form").

Where the lines are sung over at least a third of the song, sections come from what they repeat. Two
lines are the same line when their words are nearly the same, or somewhat the same and sung over the same
chords (a misheard chorus line). A chorus is made of lines that come back in order: a run of at least two
same lines sung again, two or more lines later. The other lyric lines are verses, but for a bridge: a run
of them after a chorus whose chords (chroma) are heard nowhere else in the song. Scenes without words keep
their kind (intro, break, outro).

Where fewer lines are recognized (a band drowns the voice; an instrumental), sections come from the music.
It is read in half-second frames, each described by its chords (chroma: a riff or a progression) and its
sound (MFCC: which instruments, whether the drums are in, how loud); two frames are as alike as the mean
of their chroma's cosine and a Gaussian of their MFCCs' distance. The music changes where the 8 s before
a frame and the 8 s after it are more alike within themselves than to each other by at least MUSIC_CHANGE
(Foote's novelty, with a flat kernel), at most once in 8 s; passages that differ less than that from each
other are the same music (average linkage). The first passage is the intro and the last the outro where
they are quieter than the song and their music is quiet or heard nowhere between them; of the music heard
more than once, the loudest is the chorus (a band plays its chorus fullest) and the rest are verses; music
heard once is a break between the ends (a solo, an interlude), a verse at one. A line sung over the
chorus's music is in the chorus, any other in a verse. A storyboard just made first has each passage
without words cut with its music (musicvid.storyboard.passages): where it changes, then on bar lines.

Every return of a chorus line shares its first time's motif, and so its seed and its prompt
(musicvid.storyboard.elaborate): the chorus comes back to its pictures, while each of its lines keeps
its own; so does each scene without words of a chorus read from the music, by its place in the chorus.
A passage without words gets a mood, a few words read from its sound (energy and its change, tempo,
brightness, how busy it is, major or minor), which ViPE reads with its context.
"""

from __future__ import annotations

import difflib
import warnings
from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from musicvid.core.audio import BEAT_HOP, SAMPLE_RATE, find_beats
from musicvid.storyboard.board import Scene
from musicvid.storyboard.passages import Bars, cut_with_the_music
from vipe_core.context import plain_line

SAME_WORDS = 0.75  # difflib's ratio of two lines' words at or above which they are the same line
SIMILAR_WORDS = 0.5  # ... at or above which they are the same line if sung over the same chords
SAME_CHORDS = 0.9  # the least mean cosine of two lines' chroma, slice by slice, for the same chords
CHORD_SLICES = 4  # a line's chroma is compared in this many equal slices of its time, in order
HOP = 2048  # 128 ms: chords and loudness change more slowly
LYRIC_SHARE = 1 / 3  # the lines give the form where their scenes last at least this share of the song
# The music's form: read in frames of FRAME_HOPS hops (0.5 s, about a beat); where it changes, judged on
# WINDOW frames (8 s, four bars at 120 bpm) either side, so a passage lasts at least that long.
FRAME_HOPS = 4
WINDOW = 16
MFCCS = 13
# The least contrast (how much more alike within than across, in likeness's 0..1) where the music changes,
# and between two passages of different music.
MUSIC_CHANGE = 0.05
QUIET_DB = 3.0  # this far under the song's level, an intro or outro may be of music heard between them
# The mood's words: where a passage stands against the whole song (levels in dB, brightness as a ratio
# of spectral centroids), or by itself (onsets per second, beats per minute).
CALM_DB, ENERGETIC_DB = -4.0, 1.5
CHANGE_DB = 4.0  # its last third against its first
DARK, BRIGHT = 0.7, 1.4
SPARSE, BUSY = 1.0, 4.0
SLOW_BPM, FAST_BPM = 90.0, 140.0
# Krumhansl and Kessler's key profiles: how well each pitch class fits a major or minor key on C.
MAJOR_PROFILE = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
MINOR_PROFILE = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


@dataclass(frozen=True)
class SongSound:
    """What the form is read from, once per song: chroma, loudness and brightness over time."""

    chroma: np.ndarray  # 12 × frames, each column scaled to its largest
    rms: np.ndarray  # per frame
    centroid: np.ndarray  # Hz, per frame
    onset: np.ndarray  # onset strength per BEAT_HOP, as the beats are tracked on

    @classmethod
    def of(cls, samples: np.ndarray) -> SongSound:
        import librosa

        with warnings.catch_warnings():  # a song of a second or two is shorter than the lowest octave's window
            warnings.filterwarnings("ignore", "n_fft=.* is too large", UserWarning)
            # tuned to A440: estimating the tuning of a song's silences and drums only adds noise
            chroma = librosa.feature.chroma_cqt(y=samples, sr=SAMPLE_RATE, hop_length=HOP, tuning=0.0)
        rms = librosa.feature.rms(y=samples, hop_length=HOP)[0]
        centroid = librosa.feature.spectral_centroid(y=samples, sr=SAMPLE_RATE, hop_length=HOP)[0]
        onset = librosa.onset.onset_strength(y=samples, sr=SAMPLE_RATE, hop_length=BEAT_HOP)
        return cls(chroma, rms, centroid, onset)

    def frames(self, start: float, end: float, hop: int = HOP) -> slice:
        """The frames (of `hop` samples) of [start, end): at least one, and one there is (a storyboard's
        duration may pass the audio's by a few milliseconds)."""
        count = self.rms.size if hop == HOP else self.onset.size
        first = min(int(start * SAMPLE_RATE / hop), count - 1)
        return slice(first, max(first + 1, int(end * SAMPLE_RATE / hop)))

    def chords(self, start: float, end: float) -> np.ndarray:
        """CHORD_SLICES × 12: the chroma of [start, end) in equal slices of time, each of unit length."""
        span = self.chroma[:, self.frames(start, end)]
        parts = np.array_split(np.arange(span.shape[1]), CHORD_SLICES)
        sliced = np.stack([span[:, p].mean(axis=1) if p.size else np.zeros(12) for p in parts])
        return sliced / np.maximum(np.linalg.norm(sliced, axis=1, keepdims=True), 1e-9)


def mark_form(scenes: Sequence[Scene], samples: np.ndarray, bars_per_scene: int | None = None) -> list[Scene]:
    """The scenes, those without a section given theirs (a chorus line or a chorus scene its motif, a passage without
    words its mood); the scenes that have one, as a person may have set it, keep it. Where the lines are too
    few to give the form, it comes from the music. Scenes just cut from the lyrics (no person's
    storyboard) are given `bars_per_scene`: their passages without words are cut with the music first
    (musicvid.storyboard.passages)."""
    sound = SongSound.of(samples)
    lyrics = [s for s in scenes if s.kind == "lyric"]
    sung_enough = sum(s.duration for s in lyrics) >= LYRIC_SHARE * scenes[-1].end
    cut = bars_per_scene is not None and len(lyrics) < len(scenes)
    passages = music_passages(sound, samples) if cut or not sung_enough else []
    if cut:
        bars = Bars.of(find_beats(samples), sound.chroma, HOP / SAMPLE_RATE, scenes[-1].end)
        scenes = cut_with_the_music(list(scenes), [p.start for p in passages[1:]], bars, bars_per_scene)
        lyrics = [s for s in scenes if s.kind == "lyric"]  # (numbered anew)
    if len(passages) > 1 and not sung_enough:
        sections, motifs = music_form(scenes, passages)
    else:
        sections, motifs = lyric_form(lyrics, sound)
    return [
        scene
        if scene.section is not None
        else replace(
            scene,
            section=sections.get(scene.index, scene.kind),
            motif=motifs.get(scene.index),
            mood=mood(sound, scene.start, scene.end) or None if scene.kind != "lyric" else scene.mood,
        )
        for scene in scenes
    ]


def lyric_form(lyrics: list[Scene], sound: SongSound) -> tuple[dict[int, str], dict[int, str]]:
    """Each lyric scene's section and each chorus line's motif, by scene index."""
    chords = [sound.chords(s.start, s.end) for s in lyrics]
    same_chords = np.array([[np.mean(np.sum(a * b, axis=1)) >= SAME_CHORDS for b in chords] for a in chords])
    same = same_lines([s.text_en or s.text for s in lyrics], same_chords)
    chorus = in_repeated_runs(same)
    runs = runs_of(lyrics, chorus)
    sections = {}
    seen_chorus = False
    for run in runs:
        members = [lyrics[i].index for i in run]
        if chorus[run[0]]:
            seen_chorus, section = True, "chorus"
        else:
            elsewhere = np.ones(len(lyrics), bool)
            elsewhere[run] = False
            heard_elsewhere = same_chords[np.ix_(run, np.flatnonzero(elsewhere))].any()
            section = "bridge" if seen_chorus and not heard_elsewhere else "verse"
        sections.update(dict.fromkeys(members, section))
    return sections, chorus_motifs(lyrics, same, [run for run in runs if chorus[run[0]]])


def same_lines(texts: list[str], same_chords: np.ndarray) -> np.ndarray:
    """lines × lines: whether two lines are the same line (nearly the same words, or similar words over
    the same chords)."""
    words = [plain_line(t).lower() for t in texts]
    n = len(words)
    same = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(i + 1, n):
            ratio = difflib.SequenceMatcher(None, words[i], words[j]).ratio() if words[i] and words[j] else 0.0
            same[i, j] = same[j, i] = ratio >= SAME_WORDS or (ratio >= SIMILAR_WORDS and same_chords[i, j])
    return same


def in_repeated_runs(same: np.ndarray) -> np.ndarray:
    """Per line, whether it is in a run of at least two same lines sung again, in order, at least two
    lines later (a line sung twice in a row is no chorus by itself)."""
    n = len(same)
    repeated = np.zeros(n, bool)
    for lag in range(2, n):
        length = 0
        for i in range(n - lag + 1):
            if i < n - lag and same[i, i + lag]:
                length += 1
                continue
            if length >= 2:
                repeated[i - length : i] = repeated[i - length + lag : i + lag] = True
            length = 0
    return repeated


def runs_of(lyrics: list[Scene], chorus: np.ndarray) -> list[list[int]]:
    """The lyric lines (positions in `lyrics`) in runs: consecutive scenes, all chorus or all not."""
    runs: list[list[int]] = []
    for i, scene in enumerate(lyrics):
        follows = i > 0 and lyrics[i - 1].index == scene.index - 1 and chorus[i - 1] == chorus[i]
        if follows:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def chorus_motifs(lyrics: list[Scene], same: np.ndarray, choruses: list[list[int]]) -> dict[int, str]:
    """A motif per chorus line, by scene index: a return of a line takes the motif of the line it is
    the same as in an earlier chorus, unless its chorus already shows that motif (then it has its own)."""
    motifs: dict[int, str] = {}
    count = 0
    for n, run in enumerate(choruses):
        shown: set[str] = set()
        for i in run:
            earlier = [j for before in choruses[:n] for j in before if same[i, j]]
            motif = next((motifs[lyrics[j].index] for j in earlier if motifs[lyrics[j].index] not in shown), None)
            if motif is None:
                count += 1
                motif = f"chorus-{count}"
            motifs[lyrics[i].index] = motif
            shown.add(motif)
    return motifs


@dataclass(frozen=True)
class Passage:
    """A stretch of one music, as the music's form finds it."""

    start: float
    end: float
    music: int  # the same for every passage of the same music, numbered in order of first hearing
    level: float  # dB against the whole song's mean loudness


def music_passages(sound: SongSound, samples: np.ndarray) -> list[Passage]:
    """The song in passages of one music each, where it is long enough to hold two (else none)."""
    import librosa
    from scipy.signal import find_peaks

    count = sound.rms.size // FRAME_HOPS
    if count < 2 * WINDOW:
        return []
    mfcc = librosa.feature.mfcc(y=samples, sr=SAMPLE_RATE, hop_length=HOP, n_mfcc=MFCCS)
    chroma, timbre, rms = (
        x[..., : count * FRAME_HOPS].reshape(*x.shape[:-1], count, FRAME_HOPS).mean(axis=-1)
        for x in (sound.chroma, mfcc, sound.rms)
    )
    alike = likeness(chroma, timbre)
    change = np.zeros(count)
    for t in range(WINDOW, count - WINDOW + 1):
        change[t] = contrast(alike, slice(t - WINDOW, t), slice(t, t + WINDOW))
    peaks, _ = find_peaks(change, height=MUSIC_CHANGE, distance=WINDOW)
    bounds = [0, *peaks.tolist(), count]
    music = same_music(alike, [slice(a, b) for a, b in zip(bounds, bounds[1:])])
    keep = [0] + [i for i in range(1, len(music)) if music[i] != music[i - 1]]  # one music, one passage
    bounds, music = [bounds[i] for i in keep] + [count], [music[i] for i in keep]
    seconds = FRAME_HOPS * HOP / SAMPLE_RATE
    times = [b * seconds for b in bounds[:-1]] + [samples.size / SAMPLE_RATE]
    levels = [librosa.amplitude_to_db(np.mean(rms[a:b]), ref=np.mean(sound.rms)) for a, b in zip(bounds, bounds[1:])]
    return [Passage(times[i], times[i + 1], music[i], float(levels[i])) for i in range(len(music))]


def likeness(chroma: np.ndarray, timbre: np.ndarray) -> np.ndarray:
    """frames × frames, 0..1: the mean of their chroma's cosine (the chords) and a Gaussian of the distance
    of their MFCCs, each standardized over the song (the sound: instruments, drums, loudness)."""
    from scipy.spatial.distance import pdist, squareform

    unit = chroma / np.maximum(np.linalg.norm(chroma, axis=0), 1e-9)
    standard = (timbre - timbre.mean(axis=1, keepdims=True)) / np.maximum(timbre.std(axis=1, keepdims=True), 1e-9)
    distance = squareform(pdist(standard.T, "sqeuclidean"))
    return (unit.T @ unit + np.exp(-distance / max(np.median(distance), 1e-9))) / 2


def contrast(alike: np.ndarray, a: slice, b: slice) -> float:
    """How much more alike the frames of `a`, and those of `b`, are among themselves than to each other."""
    return (alike[a, a].mean() + alike[b, b].mean()) / 2 - alike[a, b].mean()


def same_music(alike: np.ndarray, passages: list[slice]) -> list[int]:
    """A music per passage: passages grouped while the mean contrast between two groups stays under
    MUSIC_CHANGE (average linkage), numbered in order of first hearing."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    n = len(passages)
    if n == 1:
        return [0]
    apart = np.array([[contrast(alike, a, b) if a != b else 0.0 for b in passages] for a in passages])
    groups = fcluster(linkage(squareform(np.maximum(apart, 0.0), checks=False), "average"), MUSIC_CHANGE, "distance")
    first = {}
    return [first.setdefault(group, len(first)) for group in groups]


def section_names(passages: list[Passage]) -> list[str]:
    """Each passage's section: the first is the intro and the last the outro where they are quieter than the
    song and their music is quiet or heard nowhere between them; of the music heard more than once, the
    loudest is the chorus and the rest verses; music heard once is a break between the ends, a verse at one
    (a song may start or end on a part of its own)."""
    heard = Counter(p.music for p in passages)
    between = {p.music for p in passages[1:-1]}
    ends = {0: "intro", len(passages) - 1: "outro"}
    names = {
        i: name
        for i, name in ends.items()
        if passages[i].level < 0 and (passages[i].level <= -QUIET_DB or passages[i].music not in between)
    }
    repeated = {p.music for i, p in enumerate(passages) if i not in names and heard[p.music] > 1}
    level = {music: np.mean([p.level for p in passages if p.music == music]) for music in repeated}
    chorus = max(repeated, key=level.get, default=None)
    for i, passage in enumerate(passages):
        if i in names:
            continue
        if passage.music in repeated:
            names[i] = "chorus" if passage.music == chorus else "verse"
        else:
            names[i] = "verse" if i in ends else "break"
    return [names[i] for i in range(len(passages))]


def music_form(scenes: list[Scene], passages: list[Passage]) -> tuple[dict[int, str], dict[int, str]]:
    """Each scene's section (the passage's it lasts in most; a sung line is in the chorus or a verse) and a
    motif per scene without words in the chorus, by its place there: the k-th of each chorus shares one."""
    names = section_names(passages)
    sections, motifs = {}, {}
    shown = Counter()
    for scene in scenes:
        overlap = [min(scene.end, p.end) - max(scene.start, p.start) for p in passages]
        at = int(np.argmax(overlap))
        if scene.kind == "lyric":
            sections[scene.index] = "chorus" if names[at] == "chorus" else "verse"
            continue
        sections[scene.index] = names[at]
        if names[at] == "chorus":
            shown[at] += 1
            motifs[scene.index] = f"chorus-{shown[at]}"
    return sections, motifs


def mood(sound: SongSound, start: float, end: float) -> str:
    """A few words for how [start, end) sounds, against the whole song: calm or energetic, building or
    fading, slow or fast, dark or bright, sparse or busy, and major or minor."""
    import librosa

    frames = sound.frames(start, end)
    level = librosa.amplitude_to_db(sound.rms[frames], ref=np.mean(sound.rms))
    first_third, last_third = level[: max(1, level.size // 3)], level[-max(1, level.size // 3) :]
    onset = sound.onset[sound.frames(start, end, BEAT_HOP)]
    onsets_per_second = len(librosa.onset.onset_detect(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=BEAT_HOP))
    onsets_per_second /= max(end - start, 1e-9)
    words = [
        _word(np.mean(level), CALM_DB, ENERGETIC_DB, "calm", "energetic"),
        _word(np.mean(last_third) - np.mean(first_third), -CHANGE_DB, CHANGE_DB, "fading", "building"),
    ]
    if onsets_per_second >= SPARSE:  # a tempo needs beats to be heard
        bpm = float(librosa.feature.tempo(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=BEAT_HOP)[0])
        words.append(_word(bpm, SLOW_BPM, FAST_BPM, "slow", "fast"))
    brightness = np.median(sound.centroid[frames]) / max(np.median(sound.centroid), 1e-9)
    words += [
        _word(brightness, DARK, BRIGHT, "dark", "bright"),
        _word(onsets_per_second, SPARSE, BUSY, "sparse", "busy"),
        key_mode(sound.chroma[:, frames].mean(axis=1)),
    ]
    return ", ".join(word for word in words if word)


def _word(value: float, low: float, high: float, below: str, above: str) -> str:
    return below if value <= low else above if value >= high else ""


def key_mode(chroma: np.ndarray) -> str:
    """The mode, "major" or "minor", of the key whose profile the mean chroma follows best, over all 24;
    "" where there is no pitch at all (silence)."""
    if np.std(chroma) < 1e-6:  # each frame of chroma peaks at 1 wherever there is any pitch
        return ""
    best = {
        mode: max(np.corrcoef(np.roll(profile, shift), chroma)[0, 1] for shift in range(12))
        for mode, profile in (("major", MAJOR_PROFILE), ("minor", MINOR_PROFILE))
    }
    return max(best, key=best.get)


def compile_librosa() -> None:
    """Compile the numba kernels of librosa that a storyboard uses (beats, onsets, chroma, tempo) into
    their shared cache, here, before parallel work starts (Ray's workers, the tests'): processes that
    compile them at once can mix each other's cache files and crash (numba issue 10128)."""
    noise = np.random.default_rng(0).standard_normal(3 * SAMPLE_RATE).astype(np.float32)
    find_beats(noise)
    mood(SongSound.of(noise), 0.0, 3.0)
