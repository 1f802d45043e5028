"""What a person should look at in a storyboard: notes on lyrics that may be misheard and prompts that
fell back to their lyric (a render logs them: warn_of_doubts), the keyframes that show their scenes least (by
their picks' scores), and the storyboard as a plain-text table (the command line's)."""

from __future__ import annotations

import logging
import math

from wcwidth import wcwidth

from musicvid.lyrics.transcript import for_terminal
from musicvid.settings.render import MAX_ROUNDS, SCORE_RANGE
from musicvid.storyboard.board import Scene, Storyboard

WEAKEST = 5  # keyframes listed after storyboard --keyframes: a few to look at, not a ranking of all
REROLL_GRAIN = 0.05  # --reroll-below's step on the page: a suggested threshold is a round number

log = logging.getLogger("musicvid")


def _note(among: list[Scene], marked: list[Scene], says: str, advice: str, name: str, first: int) -> str:
    """One line: how many of `among` `says`, which (counted from `first`, called `name`: the web
    page's table has rows from 1), and what to do; "" if none."""
    if not marked:
        return ""
    return f"{len(marked)} of {len(among)} {says} ({name} {listed([s.index + first for s in marked])}): {advice}"


def listed(numbers: list[int], most: int = 8) -> str:
    """Sorted numbers (scenes, rows), briefly: runs as ranges ("3-7"), the first `most` of them, then how many more."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:most])
    rest = sum(b - a + 1 for a, b in runs[most:])
    return f"{shown} and {rest} more" if rest else shown


def fallback_note(storyboard: Storyboard, *, name: str = "scenes", first: int = 0) -> str:
    """The scenes whose prompt is their lyric because ViPE gave nothing usable."""
    return _note(
        storyboard.scenes,
        [s for s in storyboard.scenes if s.fallback],
        "scenes kept their lyric as the prompt because ViPE gave nothing usable",
        "edit those prompts or make the storyboard again",
        name,
        first,
    )


def unsure_note(storyboard: Storyboard, *, name: str = "scenes", first: int = 0) -> str:
    """The lyric scenes that may be misheard or misplaced."""
    lyrics = [s for s in storyboard.scenes if s.kind == "lyric"]
    return _note(
        lyrics,
        [s for s in lyrics if s.unsure],
        "lyric lines may be misheard or sung elsewhere",
        "check their words and start times against the song",
        name,
        first,
    )


def unshown_note(storyboard: Storyboard, shown: list[int], fps: float) -> str:
    """The scenes no frame shows at `fps` (each starts at the nearest frame, and one whose start rounds to the next
    scene's has none: musicvid.pictures.schedule), as an edit that shortened one to less than a frame would leave
    them."""
    drawn = set(shown)
    return _note(
        storyboard.scenes,
        [s for s in storyboard.scenes if s.index not in drawn],
        f"scenes last less than a frame at {fps:g} fps, so no frame shows them",
        "lengthen them in the storyboard, or give a higher --fps",
        "scenes",
        0,
    )


def warn_of_doubts(storyboard: Storyboard, *later: str) -> None:
    """Log what a person should look at: lyrics that may be misheard, prompts that fell back to their lyric, then
    the `later` stages' notes (the lyrics on screen's undrawn characters: musicvid.delivery.captions.undrawn_note)."""
    for note in (unsure_note(storyboard), fallback_note(storyboard), *later):
        if note:
            log.warning(note)


def scene_table(storyboard: Storyboard, width: int = 60) -> str:
    """The storyboard as a plain-text table: time, kind, section, why a scene without words starts inside its
    passage (`cut`: the music changes, or its bars were counted out), lyric (or a passage's mood), prompt;
    `?` marks a lyric that may be misheard or misplaced, `!` a prompt that is the lyric."""

    rows = [
        f"{'#':>3}  {'start':>7}  {'end':>7}  {'kind':<6}  {'section':<7}  {'cut':<5}  {'lyric':<{width}}    prompt"
    ]
    for s in storyboard.scenes:
        unsure, fallback = "?" if s.unsure else " ", "!" if s.fallback else " "
        rows.append(
            f"{s.index:>3}  {s.start:7.2f}  {s.end:7.2f}  {s.kind:<6}{unsure} {s.section or '':<7}  {s.cut or '':<5}  "
            f"{fitted(words_or_mood(s), width)}  {fallback} {fitted(s.prompt, width).rstrip()}"
        )
    notes = [
        f"{mark} {note}" for mark, note in (("?", unsure_note(storyboard)), ("!", fallback_note(storyboard))) if note
    ]
    return "\n".join(rows + ([""] + notes if notes else []))


def fitted(text: str, width: int) -> str:
    """A person's text in `width` columns of a terminal (for_terminal: never its commands), where a wide character
    (Chinese, Japanese, Korean) takes two and a mark on a letter none: cut with "…" where longer, never between a
    letter and its marks, and padded with spaces."""
    text, kept, used = for_terminal(text), [], 0
    columns = [max(wcwidth(c), 0) for c in text]
    if sum(columns) <= width:
        return text + " " * (width - sum(columns))
    for character, taken in zip(text, columns):
        if taken and used + taken > width - 1:
            break
        kept.append(character)
        used += taken
    return "".join(kept) + "…" + " " * (width - 1 - used)


def words_or_mood(scene: Scene) -> str:
    """A scene's lyric; for a passage without words, its mood in brackets."""
    return scene.text or (f"({scene.mood})" if scene.mood else "")


def weakest_keyframes(storyboard: Storyboard, shown: list[int], most: int = WEAKEST) -> list[str]:
    """The `most` shown keyframes whose picks score lowest (the mean of lyric and prompt: what ranks them), a
    line each, and what to do about them; none where no keyframe was picked. Scenes that share a keyframe (a
    motif's returns) are one line; a pinned picture is left out (it is the person's own)."""
    keyframes: dict[str, list[Scene]] = {}
    for index in shown:
        scene = storyboard.scenes[index]
        if scene.pick is not None and not scene.picture:
            keyframes.setdefault(scene.pick.key, []).append(scene)
    weakest = sorted(keyframes.values(), key=lambda scenes: (scenes[0].pick.together, scenes[0].index))[:most]
    if not weakest:
        return []
    lines = ["weakest keyframes (CLIPScore 0–2.5: the mean of the lyric and prompt scores):"]
    for scenes in weakest:
        pick, first = scenes[0].pick, scenes[0]
        named = "scene" if len(scenes) == 1 else "scenes"
        scores = (
            f"prompt {pick.prompt:.2f}" if pick.lyric is None else f"lyric {pick.lyric:.2f}, prompt {pick.prompt:.2f}"
        )
        drawn = pick.candidates * pick.rounds
        shows = (
            f'"{for_terminal(first.text)}"'
            if first.text
            else first.kind + (f" ({for_terminal(first.mood)})" if first.mood else "")
        )
        lines.append(
            f"  {named} {listed([s.index for s in scenes])} ({pick.together:.2f}: {scores}; best of {drawn}): {shows}"
        )
    # the next round threshold above the highest listed with rounds left, so that each is below it (rounded
    # first: 0.7 / 0.05 is 13.999…, whose next step up would be 0.7 itself); one drawn MAX_ROUNDS rounds gets no more
    left = [scenes[0].pick.together for scenes in weakest if scenes[0].pick.rounds < MAX_ROUNDS]
    below = min((math.floor(round(max(left, default=0) / REROLL_GRAIN, 6)) + 1) * REROLL_GRAIN, SCORE_RANGE[1])
    spent = len(weakest) - len(left)
    if not left:
        how = f"--keyframe-candidates N (each had all {MAX_ROUNDS} rounds --reroll-below draws)"
    else:
        had = f"; {spent} had all {MAX_ROUNDS} rounds it draws" if spent else ""
        how = f"--reroll-below {below:.2f} (more candidates for each keyframe below it{had}) or --keyframe-candidates N"
    lines.append(f"  to redraw them: run again with {how}, or edit their prompt or seed in storyboard.json")
    return lines
