"""What made a storyboard: its `settings` in storyboard.json (MadeWith), read and checked (made_with). The same
values make a run reuse the file (musicvid.storyboard.make)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Mapping

from musicvid.core.files import as_written, invalid
from musicvid.lyrics.transcript import excerpt
from musicvid.settings.schema import check_bounds
from musicvid.settings.song import SongRequest
from vipe_core.choose import LENSES

MADE_TEXTS = ("lens", "transcript", "title", "artist")  # the texts of a storyboard's `settings` (MadeWith)
# MadeWith's fields by their names in storyboard.json, where those differ (the file keeps the option's name)
FILE_KEYS = {"prompt_candidates": "candidates"}


@dataclass(frozen=True)
class MadeWith:
    """What made a storyboard (`settings` in storyboard.json): its options, the transcript's source, the models
    (ModelSet.describe). None: made before it was recorded, or by hand; the same values reuse the file (make)."""

    context_size: int | None = None
    seed: int | None = None
    break_seconds: float | None = None
    bars_per_scene: int | None = None
    prompt_candidates: int | None = None  # ViPE's, per scene (--candidates); `candidates` in the file
    lens: str | None = None
    transcript: str | None = None
    title: str | None = None  # what ViPE read as the song's title and artist (the storyboard's own: a person's edit)
    artist: str | None = None
    models: Mapping[str, str] | None = None  # by role, read-only as the rest
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)  # a person's own keys (and an older
    # musicvid's), written back as given

    def __post_init__(self) -> None:
        if self.models is not None:
            object.__setattr__(self, "models", MappingProxyType(dict(self.models)))

    def to_json(self) -> dict:
        values = {FILE_KEYS.get(f.name, f.name): getattr(self, f.name) for f in fields(self) if f.name != "notes"}
        return values | {"models": dict(self.models) if self.models is not None else None} | dict(self.notes)


def made_with(raw: Any, document: str) -> MadeWith:
    """A storyboard's `settings`, each of a known key checked for its type and its option's bounds (other keys, a
    person's or as older versions wrote them, are not read: the caller keeps them as notes)."""
    if not isinstance(raw, dict):
        raise invalid(document, "settings", "must be an object")
    kinds = {"context_size": int, "seed": int, "bars_per_scene": int, "candidates": int, "break_seconds": float}
    named = {key: name for name, key in FILE_KEYS.items()}
    values: dict[str, Any] = {key: raw.get(key) for key in MADE_TEXTS}
    for key, kind in kinds.items():
        value = raw.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
                raise invalid(document, f"settings.{key}", f"must be a number, got {as_written(value)}")
            meta = SongRequest.fields()[key].metadata  # (what the option that set it takes)
            check_bounds(f"{document} settings.{key}", value, low=meta["low"], high=meta["high"], above=meta["above"])
            values[named.get(key, key)] = float(value) if kind is float else value
    if values["lens"] is not None and values["lens"] not in LENSES:  # (as --lens takes it)
        raise invalid(document, "settings.lens", f"must be one of {', '.join(LENSES)}, got '{excerpt(values['lens'])}'")
    models = raw.get("models")
    if models is not None and not (isinstance(models, dict) and all(isinstance(v, str) for v in models.values())):
        raise invalid(document, "settings.models", "must be an object of model names")
    return MadeWith(**values, models=models)
