"""The song's form as its music gives it, where too few lines are sung to give it (musicvid.storyboard.form), and
the mood of a passage without words; read from the song's sound (SongSound), once per song.

The music is read in half-second frames, each described by its chords (chroma: a riff or a progression) and its
sound (MFCC: which instruments, whether the drums are in, how loud); two frames are as alike as the mean
of their chroma's cosine and a Gaussian of their MFCCs' distance. The music changes where the 8 s before
a frame and the 8 s after it are more alike within themselves than to each other by at least MUSIC_CHANGE
(Foote's novelty, with a flat kernel), at most once in 8 s; passages that differ less than that from each
other are the same music (average linkage). The first passage is the intro and the last the outro where
they are quieter than the song and their music is quiet or heard nowhere between them; of the music heard
more than once, the loudest is the chorus (a band plays its chorus fullest) and the rest are verses; music
heard once is a break between the ends (a solo, an interlude), a verse at one. A line sung over the
chorus's music is in the chorus, any other in a verse.

A passage without words gets a mood, a few words read from its sound (energy and its change, tempo, brightness,
how busy it is, major or minor), which ViPE reads with its context.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from musicvid.core.audio import BEAT_HOP, SAMPLE_RATE, short_song_windows
from musicvid.core.kernels import kernels_compiled
from musicvid.storyboard.board import Scene

CHORD_SLICES = 4  # a line's chroma is compared in this many equal slices of its time, in order
HOP = 2048  # 128 ms: chords and loudness change more slowly
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

        with kernels_compiled("sound"):  # (numba's: one process at a time)
            with short_song_windows():
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
    with kernels_compiled("onsets"):
        onsets_per_second = len(librosa.onset.onset_detect(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=BEAT_HOP))
    onsets_per_second /= max(end - start, 1e-9)
    words = [
        _word(np.mean(level), CALM_DB, ENERGETIC_DB, "calm", "energetic"),
        _word(np.mean(last_third) - np.mean(first_third), -CHANGE_DB, CHANGE_DB, "fading", "building"),
    ]
    if onsets_per_second >= SPARSE:  # a tempo needs beats to be heard
        with kernels_compiled("tempo"):
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
