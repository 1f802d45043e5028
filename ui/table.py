"""The storyboard as the page's table: a row per scene, and the person's edits read back, checked as a
storyboard file is."""

from __future__ import annotations

import json

from musicvid.errors import UserError
from musicvid.storyboard import Storyboard, parse_storyboard

COLUMNS = ["start", "end", "kind", "lyric", "visual prompt", "section", "mood"]


def rows(storyboard: Storyboard) -> list[list]:
    """The storyboard as the table shows it: a row per scene."""
    return [
        [round(s.start, 2), round(s.end, 2), s.kind, s.text, s.prompt, s.section or "", s.mood or ""]
        for s in storyboard.scenes
    ]


def apply_edits(saved: dict, table) -> dict:
    """The saved storyboard with the table's times, kinds, lyrics, prompts, sections and moods; checked
    like a file. An emptied section is read from the song again on the next run; a section changed
    takes the scene out of its motif (docs/storyboard.md)."""
    data = table.values.tolist() if hasattr(table, "values") else table["data"] if isinstance(table, dict) else table
    if len(data) != len(saved["scenes"]) or any(len(row) != len(COLUMNS) for row in data):
        raise UserError(
            f"the scene table must keep one row per scene and the columns {', '.join(COLUMNS)} (edit the cells, "
            "not the rows)"
        )
    edited = json.loads(json.dumps(saved))
    for scene, (start, end, kind, lyric, prompt, section, mood) in zip(edited["scenes"], data):
        made = (scene["start"], scene["end"], scene["text"])
        try:
            scene.update(start=float(start), end=float(end))
        except (TypeError, ValueError):
            raise UserError(f"row {scene['index'] + 1}: start and end must be numbers of seconds") from None
        if str(prompt or "") != scene["prompt"]:
            scene.pop("fallback", None)  # the person wrote this prompt
        if (round(scene["start"], 2), round(scene["end"], 2), str(lyric or "")) != (
            round(made[0], 2),
            round(made[1], 2),
            made[2],
        ):
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
            message = message.replace(f"scenes[{i}]", f"row {i + 1}")
        raise UserError(message) from None
    return edited
