"""The storyboard as the page's table: a row per scene, and the person's edits read back, checked as a
storyboard file is.

The last column, `score`, is the scene's keyframe pick's score (musicvid.storyboard.picks: the mean of its lyric and
prompt CLIPScores, 0–2.5; blank until its keyframe is drawn): the page shows it read-only, to sort the rows
by, and edits read it not at all. Sorting is the browser's view alone: the rows come back in scene order.
"""

from __future__ import annotations

import json

from musicvid.core.errors import UserError
from musicvid.storyboard.board import Storyboard, parse_storyboard

EDITED = ["start", "end", "kind", "lyric", "visual prompt", "section", "mood"]  # what edits read, in order
SCORE = "score"
COLUMNS = [*EDITED, SCORE]
# each edited column's field in the storyboard (docs/storyboard.md)
LABELS = dict(zip(["start", "end", "kind", "text", "prompt", "section", "mood"], EDITED))
DATATYPES = ["number", "number", "str", "str", "str", "str", "str", "number"]
READ_ONLY = [COLUMNS.index(SCORE)]  # the Dataframe's static_columns


def rows(storyboard: Storyboard) -> list[list]:
    """The storyboard as the table shows it: a row per scene, its pick's score blank (None) where it has none."""
    return [
        [
            round(s.start, 2),
            round(s.end, 2),
            s.kind,
            s.text,
            s.prompt,
            s.section or "",
            s.mood or "",
            round(s.pick.together, 2) if s.pick else None,
        ]
        for s in storyboard.scenes
    ]


def shown_time(cell, saved: float) -> float:
    """A time cell read back: the saved time where the cell holds it as `rows` showed it (to the hundredth: a song's
    end rarely falls on one, and the storyboard's last end must be the song's), else the person's."""
    value = float(cell)
    return saved if value == round(saved, 2) else value


def apply_edits(saved: dict, table) -> dict:
    """The saved storyboard with the table's times, kinds, lyrics, prompts, sections and moods; checked
    like a file. An emptied section is read from the song again on the next run; a section changed
    takes the scene out of its motif (docs/storyboard.md)."""
    # (a dict has .values too: it is told apart first)
    data = table["data"] if isinstance(table, dict) else table.values.tolist() if hasattr(table, "values") else table
    # (a table without the score column, as a program made before it may send, is read as well)
    if len(data) != len(saved["scenes"]) or any(len(row) not in (len(EDITED), len(COLUMNS)) for row in data):
        raise UserError(
            f"the scene table must keep one row per scene and the columns {', '.join(COLUMNS)} (edit the cells, "
            "not the rows)"
        )
    edited = json.loads(json.dumps(saved))
    for scene, row in zip(edited["scenes"], data):
        start, end, kind, lyric, prompt, section, mood = row[: len(EDITED)]  # the score is the pick's: not read
        made = (scene["start"], scene["end"], scene["text"])
        try:
            scene.update(start=shown_time(start, made[0]), end=shown_time(end, made[1]))
        except (TypeError, ValueError):
            raise UserError(f"row {scene['index'] + 1}: start and end must be numbers of seconds") from None
        if str(prompt or "") != scene["prompt"]:
            scene.pop("fallback", None)  # the person wrote this prompt
        if (scene["start"], scene["end"], str(lyric or "")) != made:
            scene.pop("confidence", None)  # ... or checked this lyric
        scene.update(kind=str(kind).strip(), text=str(lyric or ""), prompt=str(prompt or ""))
        section, mood = str(section or "").strip() or None, str(mood or "").strip() or None
        if section != scene.get("section"):
            scene.pop("motif", None)
        scene.update(section=section, mood=mood)
    try:
        parse_storyboard(edited, "table")
    except UserError as error:  # name the row as the person sees it: 1-based
        message = str(error).replace("storyboard table: ", "")
        for i in range(len(data)):
            for field, label in LABELS.items():  # (a field by its column's label)
                message = message.replace(f"scenes[{i}].{field}", f"row {i + 1}'s {label}")
            message = message.replace(f"scenes[{i}]", f"row {i + 1}")
        raise UserError(message.replace("audio.duration (", "the song's length (")) from None  # (no column shows it)
    return edited
