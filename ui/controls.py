"""The page's settings controls and what they mean, without the page itself.

Each control's range, grain and choices come from the setting it sets (musicvid.settings.render), and its
values are read back into settings by the function the command line and the batch use,
`resolve_render_settings`. What the controls show before a person touches them is that function's
answer for the models, the look and --fast; a control the person changed from what it showed is their
choice, as an option given on the command line is (so a control left as shown chooses nothing). The
style LoRAs' box is the one read otherwise: by the names the page offers (ui/loras.py), never as a path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from musicvid.core.errors import UserError, number_text
from musicvid.lyrics.languages import language_names
from musicvid.models.choose import choose_models
from musicvid.settings.geometry import size_text
from musicvid.settings.loras import Loras
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import MAX_ROUNDS, RenderSettings
from musicvid.settings.resolve import resolve_render_settings
from musicvid.settings.schema import GROUPS, field_type, option_name
from musicvid.settings.song import SongRequest
from ui.loras import page_loras, uploaded_loras

# The settings the page's controls set, by field name; the models' preset is the page's own control.
RENDER_FIELDS = (
    "fps", "steps", "guidance", "size", "style", "align", "look", "captions", "aspect", "pacing", "output_fps",
    "resolution", "motion", "transitions", "pulse", "preview", "fast", "reference_strength", "lora",
    "keyframe_candidates", "reroll_below",
)  # fmt: skip
UPLOADS = ("reference",)  # settings the person's files set: read like the others, never set by the page
LORA_UPLOADS = "lora_upload"  # the person's style LoRAs: offered to the box by name (ui/loras.py)
REQUEST_FIELDS = ("language", "context_size", "seed")
DETECT = "detect"  # the language control's first choice, shown untouched: no --language (Whisper guesses it)
LAYERS = ("look", "fast")  # controls that set others: what the page shows follows them (and the preset)
FOLLOWERS = tuple(name for name in RENDER_FIELDS if name not in LAYERS)
SONG_INPUTS = {"upload": "song", "title": "title", "artist": "artist", "lyrics": "lyrics_file"}  # by their fields
# Each of the page's song inputs and settings controls by the setting it gives: the page shows it in that setting's
# group (GROUPS), as the command line's help lists the option (ui.app.lay_out).
SETTING_OF = {
    **{name: (SongRequest, field) for name, field in SONG_INPUTS.items()},
    **{name: (SongRequest, name) for name in REQUEST_FIELDS},
    "preset": (ModelChoice, "models"),
    **{name: (RenderSettings, name) for name in (*RENDER_FIELDS, *UPLOADS)},
    LORA_UPLOADS: (RenderSettings, "lora"),
}
SIZES = ["64x64", "256x256", "512x512", "512x768", "768x512", "768x768"]  # offered; any size may be typed
REROLL_THRESHOLDS = ["", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]  # offered ("": never); any may be typed


def page_groups() -> dict[str, list[str]]:
    """The song's inputs and the settings controls by group, in the order of GROUPS (a group of no control left
    out); in a group, in the order of their settings' fields, as the command line's help lists them."""

    def group(name: str) -> str:
        cls, field = SETTING_OF[name]
        return cls.fields()[field].metadata["group"]

    def place(name: str) -> int:
        cls, field = SETTING_OF[name]
        return list(cls.fields()).index(field)

    groups = {key: sorted((name for name in SETTING_OF if group(name) == key), key=place) for key in GROUPS}
    return {key: names for key, names in groups.items() if names}


def bounds(cls, name: str) -> dict:
    """A number control's range and grain, from its setting (whole numbers for whole-number settings)."""
    meta = cls.fields()[name].metadata
    step = meta["step"] or (1 if field_type(cls, name) is int else None)
    low = meta["low"] if meta["low"] is not None else meta["above"]
    return {"minimum": low, "maximum": meta["high"], **({"step": step} if step else {})}


def longest(cls, name: str) -> int:
    """A text control's most characters, from its setting."""
    return cls.fields()[name].metadata["longest"]


def choices(cls, name: str) -> list[str]:
    """A choice control's choices: its setting's, after "" (none) where the setting may be left unset."""
    f = cls.fields()[name]
    return [""] * (f.default is None) + [number_text(choice) for choice in f.metadata["choices"]]


def control_value(name: str, value: Any) -> Any:
    """A render setting's value as its control shows it: a choice as text, "" for none, a size as WxH, LoRAs
    one per line."""
    if value is None or RenderSettings.fields()[name].metadata["choices"] is not None:
        return "" if value is None else number_text(value)
    if isinstance(value, Loras):
        return str(value)
    return size_text(value) if field_type(RenderSettings, name) is tuple else value


def setting_value(cls, name: str, value: Any) -> Any:
    """A control's value as its setting's, checked as a CSV cell is; an empty control is None (but for
    text whose default is empty)."""
    if value is None or (value == "" and cls.fields()[name].default != ""):
        return None
    whole = isinstance(value, float) and value.is_integer()
    if isinstance(value, float) and not whole and field_type(cls, name) is int:  # (NaN too) refused, not rounded
        raise UserError(f"--{option_name(cls.fields()[name])} must be a whole number, not {number_text(value)}")
    return cls.parse(name, value if isinstance(value, str) else str(int(value) if whole else value), Path())


def shown(preset: str, look: str | None, fast: bool) -> RenderSettings:
    """What the page shows before a person changes a control: the models', the look's and --fast's settings."""
    return resolve_render_settings(choose_models(preset), {"look": look, "fast": fast})


def shown_controls(preset: str, look: str | None = None, fast: bool = False) -> dict[str, Any]:
    """The render controls' values for `shown`, by field name."""
    settings = shown(preset, look, fast)
    return {name: control_value(name, getattr(settings, name)) for name in RENDER_FIELDS}


def chosen(
    values: dict[str, Any], operator: Mapping[str, Path] | None = None, uploads: Mapping[str, Path] | None = None
) -> RenderSettings:
    """The page's render controls (`values`, by field name, and "preset") as settings: the controls
    changed from what the page showed are the person's choices. The LoRAs' box names the operator's LoRAs
    and the person's uploads, by name (ui.loras.page_loras); its text is never read as a path."""
    read = {name: setting_value(RenderSettings, name, values[name]) for name in RENDER_FIELDS if name != "lora"}
    read["lora"] = page_loras(values["lora"] or "", operator or {}, uploads or {})
    read |= {name: setting_value(RenderSettings, name, values.get(name)) for name in UPLOADS}  # none: no file
    before = shown(values["preset"], read["look"], read["fast"])
    changed = {name: value for name, value in read.items() if name in LAYERS or value != getattr(before, name)}
    return resolve_render_settings(choose_models(values["preset"]), changed)


def language_choices() -> list[str]:
    """The language control's choices: DETECT, then Whisper's languages by name (musicvid.lyrics.languages)."""
    return [DETECT, *language_names()]


def chosen_request(values: dict[str, Any]) -> dict[str, Any]:
    """The request's settings that the page's controls set, by field name (an empty control, or the language's
    DETECT: the default). The language is the person's word, resolved as --language is (musicvid.prepare)."""
    values = {**values, "language": None if values["language"] == DETECT else values["language"]}
    read = {name: setting_value(SongRequest, name, values[name]) for name in REQUEST_FIELDS}
    return {name: value for name, value in read.items() if value is not None}


def followed(values: dict[str, Any], last: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """After the preset, the look or --fast changed: the controls to change, to the values the page shows
    now (each one the person left as the page showed it, `last`, and that now shows another value); and
    what the page shows now, the next call's `last`."""
    look = setting_value(RenderSettings, "look", values["look"])
    now = shown_controls(values["preset"], look, bool(values["fast"]))
    return {name: now[name] for name in FOLLOWERS if values[name] == last[name] != now[name]}, now


def summary(values: dict[str, Any], operator: Mapping[str, Path] | None = None) -> str:
    """What the controls make, in a line: the pictures drawn and the video; or why they are refused
    (`operator`: the LoRAs the operator offers, by name)."""
    try:
        settings = chosen(values, operator, uploaded_loras(values.get(LORA_UPLOADS)))
    except UserError as error:
        return f"Refused: {error}"
    picks = ""  # keyframes drawn more than once (musicvid.pictures.keyframe_candidates): the work they multiply, said
    if settings.keyframe_candidates > 1:
        picks += f" Each keyframe the best of {settings.keyframe_candidates}."
    if settings.reroll_below is not None:
        picks += f" Keyframes scoring below {number_text(settings.reroll_below)}: up to {MAX_ROUNDS} rounds."
    return (
        f"Drawn: {size_text(settings.size)} at {number_text(settings.fps)} fps, {settings.steps} steps, guidance "
        f"{number_text(settings.guidance)}.{picks} Video: {size_text(settings.video_size)} at "
        f"{number_text(settings.video_fps)} fps."
    )


def page_words(labels: Mapping[str, str]) -> Callable[[str], str]:
    """What says a message in the page's words rather than the command line's: each option a control sets (`--style`)
    named as the page labels that control (`labels`, by control name), by the label's words before it explains them
    ("Style (added to every prompt)": "Style"). One control a setting: the LoRAs' box, not the uploads, is --lora."""
    named: dict[str, str] = {}
    for name, (cls, field) in SETTING_OF.items():
        if name in labels and cls.fields()[field].metadata["option"] is not None:
            named.setdefault(f"--{option_name(cls.fields()[field])}", re.split(r" \(|: ", labels[name], maxsplit=1)[0])
    if not named:
        return lambda text: text
    option = re.compile(rf"(?:{'|'.join(map(re.escape, named))})(?![\w-])")  # not --fast in --fast-lora
    return lambda text: option.sub(lambda found: f'"{named[found[0]]}"', text)
