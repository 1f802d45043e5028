"""One source for every default and choice: the settings (musicvid.settings.render, musicvid.settings.model_choice) and the
presets (musicvid.settings.presets) hold them, and the help, the page and the delivery read them from there. Each
test fails where a restated copy no longer says what its source holds."""

import argparse
import inspect
import re
from pathlib import Path

import pytest

from musicvid.core.errors import number_text
from musicvid.settings.geometry import ASPECTS, DRAWN_FPS, RESOLUTIONS, size_text
from musicvid.settings.looks import FAST, LOOKS
from musicvid.settings.loras import LORA_WEIGHTS
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import FAMILIES, PRESETS
from musicvid.settings.render import INTERPOLATORS, SCORE_RANGE, RenderSettings
from musicvid.settings.schema import GROUPS, option_name, setting
from musicvid.settings.song import SongRequest


def help_of(cls, name: str) -> str:
    return cls.fields()[name].metadata["help"]


def test_the_delivery_knows_the_interpolators_the_settings_offer_and_defaults_to_theirs():
    from musicvid.delivery import mux

    assert tuple(mux.INTERPOLATORS) == INTERPOLATORS
    assert inspect.signature(mux.encode_video).parameters["interpolator"].default == RenderSettings.interpolator


def test_the_render_settings_default_to_the_default_models_and_their_help_says_the_presets():
    models = PRESETS[ModelChoice.models]
    assert (RenderSettings.size, RenderSettings.steps, RenderSettings.transition_steps) == (
        models.size,
        models.steps,
        models.transition_steps,
    )
    assert all(size_text(family.size) in help_of(RenderSettings, "size") for family in FAMILIES.values())
    assert all(f"--{name} {number_text(value)}" in help_of(RenderSettings, "fast") for name, value in FAST.items())
    for look, options in LOOKS.items():  # the look's help names each option it sets, with its value
        assert f"{look}: " in help_of(RenderSettings, "look")
        assert all(
            f"--{n.replace('_', '-')} {number_text(v)}" in help_of(RenderSettings, "look") for n, v in options.items()
        )
    assert all(aspect in help_of(RenderSettings, "aspect") for aspect in ASPECTS)
    assert all(resolution in help_of(RenderSettings, "resolution") for resolution in RESOLUTIONS)
    assert f"default {number_text(DRAWN_FPS)}," in help_of(RenderSettings, "fps")
    assert f"{SCORE_RANGE[0]:g} to {SCORE_RANGE[1]:g}" in help_of(RenderSettings, "reroll_below")


def test_the_model_options_name_the_presets_models():
    default = PRESETS[ModelChoice.models]
    assert all(name in help_of(ModelChoice, "models") for name in PRESETS)
    for field in ("fast_lora", "fast_decoder", "ip_adapter"):  # SD 1.5's, and SDXL's own (the flow families have none)
        named = [getattr(family, field) for family in FAMILIES.values() if getattr(family, field)]
        assert len(named) == 2 and all(name in help_of(ModelChoice, field) for name in named)
    assert default.video in help_of(ModelChoice, "video_model") and default.scorer in help_of(ModelChoice, "scorer")
    assert default.separator in help_of(ModelChoice, "separator")
    assert all(name in help_of(ModelChoice, "upscaler") for name in (default.auto_upscaler, default.fast_upscaler))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page as ui.app lays it out, with the events that run jobs (the API's), and its components by name."""
    import gradio as gr

    from ui.app import lay_out, wire_jobs
    from ui.config import UIConfig
    from ui.jobs import Jobs

    config = UIConfig(models="tiny", jobs_dir=tmp_path_factory.mktemp("jobs"))
    with gr.Blocks() as app:
        components = lay_out(config)
        wire_jobs(app, Jobs(config), components)
    return app, components


def test_the_pages_option_and_labels_say_what_the_settings_hold(page):
    from ui.cli import add_arguments
    from ui.config import UIConfig

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    models = next(action for action in parser._actions if action.dest == "models")
    assert models.default == UIConfig.models == ModelChoice.models and all(name in models.help for name in PRESETS)

    app, _ = page
    labels = [block.label for block in app.blocks.values() if isinstance(getattr(block, "label", None), str)]

    def label(start: str) -> str:
        [found] = [text for text in labels if text.startswith(start)]
        return found

    for look, options in LOOKS.items():  # each look, and each value it sets
        assert f"{look}: " in label("A look") and all(number_text(v) in label("A look") for v in options.values())
    assert f"{FAST['steps']} steps" in label("Fast drawing")
    assert all(aspect in label("Shape") for aspect in ASPECTS)
    assert f"{SCORE_RANGE[0]:g}–{SCORE_RANGE[1]:g}" in label("Redraw keyframes scoring below")
    assert f"weight {LORA_WEIGHTS[0]:g} to {LORA_WEIGHTS[1]:g}" in label("Style LoRAs and their weights")


# --- the settings' groups: one in the definition of each, and the help, the page and the docs show them ---------------

COMMAND_OWN = {  # the options of a command that are not settings, by the group each is shown in
    "render": {"-o": "video"},
    "storyboard": {"--keyframes": "pictures"},
    "plan": {"--gpu-memory": "speed", "--json": "speed"},
    "batch": {"PLAYLIST": "song", "-o": "video", "--workdir": "video", "--force": "video"}
    | {option: "speed" for option in ("--engine", "--address", "--workers", "--gpus-per-song")},
}


def groups_of_settings() -> dict[str, str]:
    """Each setting's option (the song's: SONG) by the group its definition names."""
    options = {"SONG": SongRequest.fields()["song"].metadata["group"]}
    for cls in (SongRequest, ModelChoice, RenderSettings):
        for name, f in cls.options().items():
            options[f"-{f.metadata['short']}" if f.metadata["short"] else f"--{name}"] = f.metadata["group"]
    return options


def help_sections(capsys, command: str) -> dict[str, list[str]]:
    """The sections of a command's --help, in order: each one's title and the options it lists (each by its first
    name, as the line listing it begins)."""
    from musicvid import cli

    assert cli.main([command, "--help"]) == 0
    sections: dict[str, list[str]] = {}
    for line in capsys.readouterr().out.splitlines():
        if line and not line[0].isspace() and line.endswith(":"):
            title = line[:-1]
            sections[title] = []
        elif line.startswith("  ") and not line[2].isspace():  # (a longer line goes on indented further)
            sections[title].append(line.split()[0].rstrip(","))
    return sections


def test_every_setting_is_in_one_group_and_the_help_shows_the_groups_in_the_order_data_flows(capsys):
    assert list(GROUPS) == ["song", "models", "pictures", "motion", "video", "speed"]
    for cls in (SongRequest, ModelChoice, RenderSettings):
        assert all(f.metadata["group"] in GROUPS for f in cls.fields().values()), cls
    with pytest.raises(ValueError, match="must say its group"):
        setting(1, "a new knob", affects=("nothing",))
    settings, titles = groups_of_settings(), list(GROUPS.values())
    for command, own in COMMAND_OWN.items():
        sections = help_sections(capsys, command)
        assert sections.pop("options") == ["-h"], command  # every other option is in a group
        assert list(sections) == [title for title in titles if title in sections], command
        for group, title in GROUPS.items():
            assert all((settings | own)[option] == group for option in sections.get(title, [])), (command, title)
    render = help_sections(capsys, "render")  # all six groups, and every setting in one of them, once
    assert list(render) == ["options", *titles]
    assert sorted(option for title in titles for option in render[title]) == sorted([*settings, "-o"])


def test_the_docs_list_each_option_under_its_groups_heading(capsys):
    reference = (Path(__file__).parents[1] / "docs" / "cli.md").read_text().split("## Settings, defined once")[1]
    led: dict[str, list[str]] = {}  # each heading's options, as its items begin with them
    for block in re.split(r"\n(?=### |- )", reference.split("\n## ")[0]):  # headings and items, each whole
        if block.startswith("### "):
            heading = block[4:].splitlines()[0].lower()
            led[heading] = []
        elif block.startswith("- "):
            spans = re.findall(r"`([^`]+)`", block.split(" — ")[0])
            led[heading] += [re.split(r"[ /]", span)[0] for span in spans if span[0] == "-" or span.isupper()]
    assert list(led) == list(GROUPS.values())
    groups = groups_of_settings() | {option: group for own in COMMAND_OWN.values() for option, group in own.items()}
    assert all(groups[option] == group for group, title in GROUPS.items() for option in led[title])
    everywhere = [option for options in led.values() for option in options]
    render = [
        option for title, options in help_sections(capsys, "render").items() if title != "options" for option in options
    ]
    assert [option for option in render if everywhere.count(option) != 1] == []  # each in one item


def test_the_page_shows_its_controls_in_the_groups_and_order_of_the_help(capsys, page):
    import gradio as gr

    from tests.served_page import PAGE_CONTROLS
    from ui.controls import SETTING_OF

    app, components = page
    names = {component: name for name, component in components.items()}

    def inside(block) -> list[str]:
        """The named components in a block, in the page's order."""
        found = []
        for child in getattr(block, "children", []):
            found += [names[child]] if child in names else inside(child)
        return found

    def option(name: str) -> str:
        """A control's option, as the help lists it."""
        cls, field = SETTING_OF[name]
        f = cls.fields()[field]
        return "SONG" if f.metadata["option"] is None else f"--{option_name(f)}"

    accordions = [block for block in app.blocks.values() if isinstance(block, gr.Accordion)]
    shown = {accordion.label.lower(): inside(accordion) for accordion in accordions}
    assert sorted(name for controls in shown.values() for name in controls) == sorted(SETTING_OF)
    on_page = [(title, list(dict.fromkeys(map(option, controls)))) for title, controls in shown.items()]
    offered = {option for _, options in on_page for option in options}
    in_help = [
        (title, [o for o in options if o in offered]) for title, options in help_sections(capsys, "render").items()
    ]
    assert on_page == [(title, options) for title, options in in_help if options]
    # the API takes the song's inputs and the controls in the page's order, as the page's tests give them
    [storyboard] = [event for event in app.fns.values() if event.api_name == "make_storyboard"]
    song = ["upload", "title", "artist", "lyrics"]
    assert [names[component] for component in storyboard.inputs] == [*song, *PAGE_CONTROLS]
