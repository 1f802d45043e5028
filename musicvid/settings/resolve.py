"""A render's settings from layers of choices: the one way the command line, a batch's CSV row and the page turn what
a person chose into RenderSettings (musicvid.settings.render)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from musicvid.core.errors import UserError
from musicvid.settings.geometry import drawn_fps, size_for_aspect
from musicvid.settings.looks import FAST, LOOKS
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import RenderSettings
from musicvid.settings.schema import check_field, option_name


def resolve_render_settings(models, *given: Mapping[str, Any]) -> RenderSettings:
    """The settings of a render from layers, each over the ones before it — the one way the command
    line, a batch's CSV row and the page turn what a person chose into settings:

    1. each field's default;
    2. the models' picture size, steps and guidance (`models`: a ModelSet, or anything with a size, size_step,
       steps, guidance and transition_steps);
    3. the look's options (the look the last layer names), then --fast's steps and guidance;
    4. each layer of `given`, in order: what a person chose (the command line, then a CSV row over it;
       on the page, the controls the person changed from what the page showed).

    A value of None in a layer chooses nothing. Size and aspect both say the picture's shape: a layer's
    aspect without a size makes the size that shape at about the pixel count of the layers under it, and
    a layer's size without an aspect takes the place of an aspect under it. Where no layer gives a drawn
    rate, an output rate's is the whole fraction of it nearest 10. Each value chosen is checked against
    its limits before anything is made from it; the settings made check how they go together. An interpolator
    chosen where no layer gives an output rate would do nothing, and is refused."""
    fields = RenderSettings.fields()
    chosen = [{name: value for name, value in layer.items() if value is not None} for layer in given]
    for layer in chosen:
        for name, value in layer.items():
            check_field(fields[name], value)
    top = {name: value for layer in chosen for name, value in layer.items()}  # each field as the top layer has it
    models_look_fast = [
        {
            "size": tuple(models.size),
            "steps": models.steps,
            "guidance": models.guidance,
            "transition_steps": models.transition_steps,
        },
        LOOKS.get(top.get("look"), {}),
        FAST if top.get("fast") else {},
    ]
    values: dict[str, Any] = {}
    for layer in [*models_look_fast, *chosen]:
        values.update(layer)
        if "aspect" in layer and "size" not in layer:
            values["size"] = size_for_aspect(layer["aspect"], values["size"], models.size_step)
        elif "size" in layer and "aspect" not in layer:
            values.pop("aspect", None)
    if "interpolator" in top and not values.get("output_fps"):  # (a look's output rate counts)
        raise UserError("--interpolator only acts with --output-fps: give both, or neither")
    if values.get("output_fps") and "fps" not in top:
        values["fps"] = drawn_fps(values["output_fps"])
    return RenderSettings(**values)


# Settings that act only beside another: (the setting, whether a song's settings use it, what the refusal says after
# "only acts"). How the frames between are drawn is nothing to a --preview, which crossfades its keyframes.
DRAWN_BETWEEN = "where the frames between are drawn, not in a --preview: leave it out"
ACTS_WITH = (
    ("transition_steps", lambda song: song.transitions == "video", "with --transitions video: give both, or neither"),
    ("align_chunk", lambda song: song.align, "with the alignment (the default; not --no-align): give both, or neither"),
    *(
        (name, lambda song: not song.preview, DRAWN_BETWEEN)
        for name in ("transitions", "transition_steps", "deep_share")
    ),
)


def check_used(given: Mapping[str, Any], songs: Iterable[RenderSettings]) -> None:
    """A setting the command line `given` gives that no song of the run (a render's, or any row's of a batch) uses
    would do nothing, and is refused, as a model option is (musicvid.settings.model_choice.ModelChoice.check_used)."""
    songs = list(songs)
    for name, acts, needs in ACTS_WITH:
        if given.get(name) is not None and not any(acts(song) for song in songs):
            raise UserError(f"--{name.replace('_', '-')} only acts {needs}")


def reference_only(given: Mapping[str, Any], choice: ModelChoice) -> tuple[str, ...]:
    """The options a person gave (the settings `given`, the models `choice`) that act only where a run draws a reference
    picture (--reference, or a storyboard's scene that names its own): a run that draws none refuses them, and a
    batch where no row draws one (musicvid.prepare.check_reference_drawn)."""
    named = (
        (RenderSettings.fields()["reference_strength"], given.get("reference_strength")),
        (ModelChoice.fields()["ip_adapter"], choice.ip_adapter),
    )
    return tuple(f"--{option_name(field)}" for field, value in named if value is not None)
