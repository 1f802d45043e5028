"""How a setting is defined (`setting`: its default, help, limits and option), and checked: the machinery the
settings classes (musicvid.settings.render) are made of."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import field
from functools import cache
from pathlib import Path
from typing import Any

from musicvid.core.errors import UserError, number_text
from musicvid.core.paths import code_point, control_at, not_utf8

# What a setting can change: the storyboard (and all made from it), the keyframes, the frames between them, the
# video made of the frames (its rate, size, captions), only the speed and memory of the work, or nothing made.
AFFECTS = ("storyboard", "keyframes", "between", "video", "speed", "nothing")
# Where a setting is offered, in the order data flows: the command line's help groups its options under these
# titles (musicvid.settings.front_doors.option_groups), the page its controls (ui/app.py), docs/cli.md its
# options reference.
GROUPS = {
    "song": "song and lyrics",
    "models": "models",
    "pictures": "pictures",
    "motion": "motion",
    "video": "video and delivery",
    "speed": "speed and memory",
}


def setting(
    default: Any,
    help: str,
    *,
    low=None,
    high=None,
    above=None,
    longest=None,
    choices=None,
    check=None,
    step=None,
    option: str | None = "",
    short: str | None = None,
    per_song: bool = True,
    affects: tuple[str, ...] = (),
    group: str | None = None,
) -> Any:
    """A settings field. `low`/`high` bound it (inclusive), `above` from below (exclusive), `longest` a text's
    characters; `check`
    refuses a value by a rule of its own; `step` is the grain a control on the page offers (whole
    numbers for whole-number fields; not a limit: the command line takes any value in bounds);
    `option` is its command-line name (default: the field's name with dashes; None: not an option, as
    for the song itself), `short` a one-letter alias; `per_song` says whether a batch CSV row may set it;
    `affects` says what changes with it (AFFECTS), so that a rerun redraws that and nothing else; `group`
    where it is offered (GROUPS)."""
    if not affects or set(affects) - set(AFFECTS):
        raise ValueError(f"a setting must say what it affects, some of {AFFECTS}, not {affects!r}")
    if group not in GROUPS:
        raise ValueError(f"a setting must say its group, one of {tuple(GROUPS)}, not {group!r}")
    meta = dict(
        help=help,
        low=low,
        high=high,
        above=above,
        longest=longest,
        choices=choices,
        check=check,
        step=step,
        option=option,
        short=short,
        per_song=per_song,
        affects=affects,
        group=group,
    )
    return field(default=default, metadata=meta)


class Checked:
    """Settings that check themselves on construction, field by field and together."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check_field(f, getattr(self, f.name))
        self.check_together()

    def check_together(self) -> None:
        """Rules between fields (a class adds its own)."""

    @classmethod
    def affecting(cls, *what: str) -> tuple[str, ...]:
        """The fields that change some of `what` (AFFECTS)."""
        return tuple(f.name for f in dataclasses.fields(cls) if set(f.metadata["affects"]) & set(what))

    @classmethod
    def between_and_after(cls) -> tuple[str, ...]:
        """The fields that change only the frames between keyframes or the video, never a keyframe nor the speed:
        `storyboard` (its --keyframes too) draws no frame between keyframes, and takes none of them."""
        keyframes = cls.affecting("keyframes", "speed")
        return tuple(name for name in cls.affecting("between", "video") if name not in keyframes)

    @classmethod
    def fields(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field]:
        """Fields that are command-line options, by option name (`--context-size` -> "context-size")."""
        return {option_name(f): f for f in dataclasses.fields(cls) if f.metadata.get("option") is not None}


def option_name(f: dataclasses.Field) -> str:
    return f.metadata.get("option") or f.name.replace("_", "-")


@cache
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def field_type(cls, name: str) -> type:
    """A field's type, `X | None` read as X and tuple[...] as tuple."""
    hint = _hints(cls)[name]
    kinds = [t for t in typing.get_args(hint) or (hint,) if t is not type(None)]
    kind = kinds[0] if typing.get_origin(hint) is not tuple else hint
    return typing.get_origin(kind) or kind


def check_field(f: dataclasses.Field, value: Any) -> None:
    """One field against its limits; NaN fails every comparison, so it is refused too."""
    meta = f.metadata
    if not meta or value is None:
        return
    name = f"--{option_name(f)}" if meta["option"] is not None else f"the {f.name.replace('_', ' ')}"  # (the song)
    choices = meta["choices"]
    if meta["longest"] is not None and len(value) > meta["longest"]:
        raise UserError(f"{name} is {len(value):,} characters long; the limit is {meta['longest']:,}")
    if meta["longest"] is not None and (at := control_at(value)) is not None:  # (a title, an artist, a style)
        raise UserError(f"{name} holds a control character ({code_point(value[at])}) at position {at + 1}")
    if isinstance(value, Path) and (said := not_utf8(value, name)):  # (in records; a song's name may be its title)
        raise UserError(said)
    if isinstance(value, str):
        check_text(name, value)
    if meta["check"] is not None:
        meta["check"](value)
    if choices is not None and value not in choices:
        given = repr(value) if isinstance(value, str) else number_text(value)
        raise UserError(f"{name} must be one of {', '.join(map(number_text, choices))}, not {given}")
    check_bounds(name, value, low=meta["low"], high=meta["high"], above=meta["above"])


def check_bounds(name: str, value: Any, *, low=None, high=None, above=None) -> None:
    """A number named `name` (an option: "--port") within `low`..`high` (inclusive) or `above`..`high`; NaN fails
    every comparison, so it is refused too."""
    if above is not None and not (value > above and (high is None or value <= high)):
        at_most = f" and at most {number_text(high)}" if high is not None else ""
        raise UserError(f"{name} must be above {number_text(above)}{at_most}, got {number_text(value)}")
    if low is not None and not (low <= value and (high is None or value <= high)):
        bounds = (
            f"from {number_text(low)} to {number_text(high)}" if high is not None else f"{number_text(low)} or more"
        )
        raise UserError(f"{name} must be {bounds}, got {number_text(value)}")


def check_text(name: str, text: str) -> None:
    """Refuse text with something that is no character: a lone surrogate, which a browser's or a program's JSON
    can send and the command line makes of a byte that is not UTF-8; no tokenizer or file takes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise UserError(
            f"{name} has something that is not a character at position {error.start + 1}: give it as UTF-8 text"
        ) from None
