"""What a person should look at in a storyboard: notes on lyrics that may be misheard and prompts that
fell back to their lyric, and the storyboard as a plain-text table (the command line's)."""

from __future__ import annotations

from musicvid.storyboard import Scene, Storyboard


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


def scene_table(storyboard: Storyboard, width: int = 60) -> str:
    """The storyboard as a plain-text table: time, kind, section, lyric (or a passage's mood), prompt;
    `?` marks a lyric that may be misheard or misplaced, `!` a prompt that is the lyric."""

    def cut(text: str) -> str:
        return text if len(text) <= width else text[: width - 1] + "…"

    rows = [f"{'#':>3}  {'start':>7}  {'end':>7}  {'kind':<6}  {'section':<7}  {'lyric':<{width}}    prompt"]
    for s in storyboard.scenes:
        unsure, fallback = "?" if s.unsure else " ", "!" if s.fallback else " "
        rows.append(
            f"{s.index:>3}  {s.start:7.2f}  {s.end:7.2f}  {s.kind:<6}{unsure} {s.section or '':<7}  "
            f"{cut(words_or_mood(s)):<{width}}  {fallback} {cut(s.prompt)}"
        )
    notes = [
        f"{mark} {note}" for mark, note in (("?", unsure_note(storyboard)), ("!", fallback_note(storyboard))) if note
    ]
    return "\n".join(rows + ([""] + notes if notes else []))


def words_or_mood(scene: Scene) -> str:
    """A scene's lyric; for a passage without words, its mood in brackets."""
    return scene.text or (f"({scene.mood})" if scene.mood else "")
