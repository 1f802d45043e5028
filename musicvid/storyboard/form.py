"""The song's form: the section each scene is sung in, the chorus's motifs, and the mood of the passages
without words (docs/storyboard.md, "The song's form").

Where the lines are sung over at least a third of the song, sections come from what they repeat. Two
lines are the same line when their words are nearly the same, or somewhat the same and sung over the same
chords (a misheard chorus line). A chorus is made of lines that come back in order: a run of at least two
same lines sung again, two or more lines later. The other lyric lines are verses, but for a bridge: a run
of them after a chorus whose chords (chroma) are heard nowhere else in the song. Scenes without words keep
their kind (intro, break, outro).

Where fewer lines are recognized (a band drowns the voice; an instrumental), sections come from the music
(musicvid.storyboard.music). A storyboard just made first has each passage without words cut with its music
(musicvid.storyboard.passages): where it changes, then on bar lines.

Every return of a chorus line shares its first time's motif, and so its seed and its prompt
(musicvid.storyboard.elaborate): the chorus comes back to its pictures, while each of its lines keeps
its own; so does each scene without words of a chorus read from the music, by its place in the chorus.
A passage without words gets a mood (musicvid.storyboard.music.mood), which ViPE reads with its context.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Sequence

import numpy as np

from musicvid.core.audio import SAMPLE_RATE, find_beats
from musicvid.storyboard.board import Scene
from musicvid.storyboard.music import HOP, SongSound, mood, music_form, music_passages
from musicvid.storyboard.passages import Bars, cut_with_the_music
from vipe_core.context import plain_line

SAME_WORDS = 0.75  # difflib's ratio of two lines' words at or above which they are the same line
SIMILAR_WORDS = 0.5  # ... at or above which they are the same line if sung over the same chords
SAME_CHORDS = 0.9  # the least mean cosine of two lines' chroma, slice by slice, for the same chords
LYRIC_SHARE = 1 / 3  # the lines give the form where their scenes last at least this share of the song


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
