"""One source for every default and choice: the settings (musicvid.settings.render, musicvid.settings.model_choice) and the
presets (musicvid.settings.presets) hold them, and the help, the page and the delivery read them from there. Each
test fails where a restated copy no longer says what its source holds."""

import argparse
import inspect

from musicvid.core.errors import number_text
from musicvid.settings.geometry import ASPECTS, DRAWN_FPS, RESOLUTIONS, size_text
from musicvid.settings.loras import LORA_WEIGHTS
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import FAMILIES, PRESETS
from musicvid.settings.render import FAST, INTERPOLATORS, LOOKS, SCORE_RANGE, RenderSettings


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
    for field in ("fast_lora", "fast_decoder", "ip_adapter"):  # SD 1.5's, and SDXL's own
        assert all(getattr(family, field) in help_of(ModelChoice, field) for family in FAMILIES.values())
    assert default.video in help_of(ModelChoice, "video_model") and default.scorer in help_of(ModelChoice, "scorer")
    assert default.separator in help_of(ModelChoice, "separator")
    assert default.auto_upscaler in help_of(ModelChoice, "upscaler")


def test_the_pages_option_and_labels_say_what_the_settings_hold(tmp_path):
    from ui.app import build_app
    from ui.cli import add_arguments
    from ui.config import UIConfig

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    models = next(action for action in parser._actions if action.dest == "models")
    assert models.default == UIConfig.models == ModelChoice.models and all(name in models.help for name in PRESETS)

    app = build_app(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
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
