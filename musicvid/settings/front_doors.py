"""The settings at each front door: command-line options made from their fields, a batch CSV's columns and cells
parsed and checked by them (the page reads their ranges: ui/controls)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from pathlib import Path
from typing import Any

from musicvid.core.errors import UserError, number_text
from musicvid.core.files import is_url
from musicvid.settings.loras import Lora, Loras, parse_lora
from musicvid.settings.numbers import parse_number, parse_whole
from musicvid.settings.schema import GROUPS, Checked, check_field, field_type, option_name

TRUE, FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")
_SIZE = re.compile(r"(\d+)x(\d+)", re.ASCII | re.IGNORECASE)


def options_text(options: dict[str, Any], flags: bool = True) -> str:
    """Settings by field name as the command line gives them (--output-fps 30), or without the dashes as the page
    names them (output fps 30): what the help and the page say a look or --fast sets, made from what it sets."""
    name = (lambda field: "--" + field.replace("_", "-")) if flags else (lambda field: field.replace("_", " "))
    return ", ".join(f"{name(field)} {number_text(value)}" for field, value in options.items())


def parse_size(text: str) -> tuple[int, int]:
    if not (size := _SIZE.fullmatch(text)):
        raise argparse.ArgumentTypeError(f"must look like 512x512, got {text!r}")
    return int(size[1]), int(size[2])


def parse_path(text: str) -> Path:
    if not text:  # (Path("") is ".": the current folder, which no one named)
        raise argparse.ArgumentTypeError("is empty: give a file's or folder's name")
    if is_url(text):  # (Path folds its `//`: `-o http://x.mp4` made a folder `http:` and wrote the video in it)
        raise argparse.ArgumentTypeError(f"{text!r} is a URL: musicvid reads and writes files here; give a path")
    return Path(text)


def parse_file_path(text: str) -> Path:
    """A file's path; one ending in `/` names a folder (Path drops the `/`: `-o v.mp4/` wrote the file v.mp4)."""
    path = parse_path(text)
    if text.endswith(("/", os.sep)) and path.name not in ("", ".."):  # (`/`, `../`: named_file says they name none)
        raise argparse.ArgumentTypeError(
            f"{text!r} ends in '/', so it names a folder: give a file name, e.g. {(path / 'video.mp4').as_posix()}"
        )
    return path


def parse_bool(text: str) -> bool:
    if text.strip().lower() not in TRUE + FALSE:
        raise argparse.ArgumentTypeError(f"must be yes or no (true/false, 1/0), not {text!r}")
    return text.strip().lower() in TRUE


def choices_text(choices) -> str | None:
    """An option's choices as its help shows them: `{24,25,30,60}`."""
    return "{" + ",".join(map(number_text, choices)) + "}" if choices else None


def option_groups(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """A command's option groups (GROUPS), by name, made before any option is added: its help shows them in the
    order data flows whatever order the options are added in, and a group left empty not at all."""
    return {name: parser.add_argument_group(title) for name, title in GROUPS.items()}


class Settings(Checked):
    """What the settings classes share: checking on construction, and their options and columns."""

    @classmethod
    def add_options(cls, groups: dict[str, Any], skip: tuple[str, ...] = ()) -> None:
        """One option per field, in its group (`groups`: option_groups'); left out, an option is None, so that
        given values can be told apart."""
        for name, f in cls.options().items():
            if f.name in skip:
                continue
            group = groups[f.metadata["group"]]
            kind, help = field_type(cls, f.name), f.metadata["help"]
            if (
                isinstance(f.default, (int, float, str))
                and not isinstance(f.default, bool)
                and f.default != ""
                and "default" not in help
            ):
                help += f" (default: {number_text(f.default)})"
            names = [f"-{f.metadata['short']}"] if f.metadata["short"] else []
            if kind is Loras:  # repeatable: one option per LoRA
                group.add_argument(
                    f"--{name}",
                    dest=f.name,
                    action="append",
                    type=parse_lora,
                    default=None,
                    metavar="FILE_OR_REPO[:WEIGHT]",
                    help=help,
                )
            elif kind is bool:
                action = argparse.BooleanOptionalAction if f.default else "store_const"
                extra = {} if f.default else {"const": True}
                group.add_argument(*names, f"--{name}", dest=f.name, action=action, default=None, help=help, **extra)
            else:
                group.add_argument(
                    *names,
                    f"--{name}",
                    dest=f.name,
                    type=PARSERS.get(kind, kind),
                    default=None,  # (choices are checked with the field: argparse would say 23.0 of --output-fps 23)
                    metavar=choices_text(f.metadata["choices"]) or name.upper().replace("-", "_"),
                    help=help,
                )

    @classmethod
    def given(cls, args: argparse.Namespace) -> dict[str, Any]:
        """The values a person gave for this class's fields, by field name."""
        given = {name: getattr(args, name) for name in cls.fields() if getattr(args, name, None) is not None}
        return {name: Loras(value) if isinstance(value, list) else value for name, value in given.items()}

    @classmethod
    def column(cls, column: str) -> dataclasses.Field | None:
        """The field a batch CSV column names, by its option's name or its own."""
        name = column.strip().replace("-", "_")
        name = next((f.name for o, f in cls.options().items() if o.replace("-", "_") == name), name)
        return cls.fields().get(name)

    @classmethod
    def parse(cls, name: str, text: str, base: Path) -> Any:
        """A field's value from text (a CSV cell or a control's), checked against the field's limits and refused in
        the sentence its option gets at every door (`--break`, whatever the column's name); relative paths are
        relative to `base`."""
        kind = field_type(cls, name)
        try:
            value = PARSERS.get(kind, kind)(text.strip())
        except (ValueError, argparse.ArgumentTypeError) as error:
            raise UserError(f"--{option_name(cls.fields()[name])} {error}") from None
        check_field(cls.fields()[name], value)
        if kind is Loras:  # a LoRA file beside the CSV, as its other paths; else a hub name as given
            return Loras(Lora(str(base / x.source), x.weight) if (base / x.source).is_file() else x for x in value)
        return base / value if kind is Path and not value.is_absolute() else value


PARSERS = {
    bool: parse_bool,
    int: parse_whole,
    float: parse_number,
    tuple: parse_size,
    Path: parse_path,
    Loras: Loras.parse,
}
