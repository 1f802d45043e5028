"""A scene's keyframe pick: which of the candidates drawn for it was kept, and its scores.

With --keyframe-candidates N, each keyframe is drawn from N seeds and the one the scorer ranks first is kept
(musicvid.pictures.keyframe_candidates). The storyboard records the pick in the scene, beside the kept seed, so that a
resume or a rerender draws the same picture and shows its scores without drawing the candidates again. A pick
holds while the keyframe's key (what it is drawn from: prompt, kept seed, models, steps, …) is the one it was
made for; an edit to any of those chooses again. The format: docs/storyboard.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from musicvid.core.files import JsonFields, as_written, invalid
from musicvid.settings.render import MAX_CANDIDATES, MAX_ROUNDS, SCORE_RANGE


@dataclass(frozen=True)
class KeyframePick:
    """Candidate `kept` (of `rounds` × `candidates` drawn from `from_seed`) was kept, scored `lyric` and `prompt`
    (CLIPScore, 0–2.5; lyric None: a scene without words) by the `scorer` model; `key`: the kept keyframe's."""

    from_seed: int
    candidates: int
    rounds: int
    kept: int
    lyric: float | None
    prompt: float
    scorer: str
    key: str
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)  # a person's own keys, written back

    @property
    def together(self) -> float:
        """What ranks candidates and what --reroll-below compares: the mean of the two scores (the prompt's
        alone without a lyric), as musicvid.pictures.scores.SceneScores.together."""
        return self.prompt if self.lyric is None else (self.lyric + self.prompt) / 2

    def to_json(self) -> dict:
        data = asdict(self)
        notes = data.pop("notes")
        return data | notes


# A scene's `pick` in storyboard.json, as musicvid.core.files.check_json checks it before parse_pick reads it
PICK_FIELDS = JsonFields(
    {"lyric": "number?", "prompt": "number", "scorer": "string", "key": "string"},
    required=tuple(KeyframePick.__dataclass_fields__.keys() - {"notes"}),
    nullable=True,
)


def parse_pick(raw: dict, document: str, at: str) -> KeyframePick:
    """A scene's `pick` from its JSON, PICK_FIELDS checked already, the rules of its fields checked (`at`: where it is,
    for the message)."""
    whole = {}
    for key, low, high in (("from_seed", 0, 2**32 - 1), ("candidates", 1, MAX_CANDIDATES), ("rounds", 1, MAX_ROUNDS)):
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise invalid(document, f"{at}.{key}", f"must be an integer from {low} to {high}, got {as_written(value)}")
        whole[key] = value
    kept = raw["kept"]
    drawn = whole["candidates"] * whole["rounds"]
    if isinstance(kept, bool) or not isinstance(kept, int) or not 0 <= kept < drawn:
        raise invalid(document, f"{at}.kept", f"must be an integer from 0 to {drawn - 1}, got {as_written(kept)}")
    scores = {}
    for key in ("lyric", "prompt"):
        if raw[key] is None:  # (a lyric's score alone may be none: PICK_FIELDS)
            scores[key] = None
            continue
        value = float(raw[key])
        if not SCORE_RANGE[0] <= value <= SCORE_RANGE[1]:
            raise invalid(document, f"{at}.{key}", f"must be a CLIPScore from 0 to 2.5, got {value}")
        scores[key] = value
    return KeyframePick(
        **whole,
        kept=kept,
        **scores,
        scorer=raw["scorer"],
        key=raw["key"],
    )
