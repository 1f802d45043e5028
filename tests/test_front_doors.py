"""The same choices give the same settings at every front door — the command line, a batch's CSV row,
the page — and what one refuses, all refuse, in the same sentence. Nothing is rendered: each door is
asked only for the settings it would render with."""

from pathlib import Path

import pytest

from musicvid import cli
from musicvid.batch import command as batch
from musicvid.batch.playlist import Job
from musicvid.core.errors import UserError
from musicvid.settings.front_doors import parse_bool
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import RenderSettings
from musicvid.settings.schema import field_type
from ui import controls

# What a person chooses, as the command line's options (model options stay on the batch's command line:
# a row may not name the models; the page offers none of them but the preset).
CHOICES = {
    "a look alone": ["--look", "music-video"],
    "a look with captions and a size of one's own": [
        "--look", "music-video", "--captions", "line", "--size", "512x512",
    ],
    "a look without its captions": ["--look", "music-video", "--captions", "none"],
    "a look with a shape of one's own": ["--look", "music-video", "--aspect", "9:16"],
    "a look with a drawn rate of one's own": ["--look", "music-video", "--fps", "5"],
    "an output rate: the drawn rate follows": ["--output-fps", "24"],
    "a drawn rate and an output rate": ["--fps", "6", "--output-fps", "24"],
    "fast": ["--fast"],
    "fast with steps of one's own": ["--fast", "--steps", "6"],
    "fast with guidance of one's own": ["--fast", "--guidance", "2"],
    "an aspect": ["--aspect", "4:5"],
    "a size": ["--size", "128x64"],
    "an aspect and its size": ["--aspect", "16:9", "--size", "704x384"],
    "a resolution, upscaled as the models do": ["--resolution", "720p"],
    "a resolution with an upscaler": ["--resolution", "1080p", "--aspect", "9:16", "--upscaler", "lanczos"],
    "the limits of guidance and steps": ["--guidance", "30", "--steps", "150"],
    "the rest of the page's controls": [
        "--no-align", "--style", "ink", "--pacing", "beats", "--motion", "zoom", "--pulse", "0.5", "--preview",
        "--reference-strength", "0.3", "--lora", "org/ink:0.5",
    ],
}  # fmt: skip
# What every door refuses, and the sentence it says (the page has no --upscaler: None).
REFUSED = {
    "an output rate the drawn rate does not divide": (
        ["--fps", "7", "--output-fps", "24"],
        "--output-fps 24 must be a whole multiple of --fps 7, so that every keyframe falls on a frame of the video",
    ),
    "a look's output rate the drawn rate does not divide": (
        ["--look", "music-video", "--fps", "7"],
        "--output-fps 30 must be a whole multiple of --fps 7, so that every keyframe falls on a frame of the video",
    ),
    "guidance past its limit": (["--guidance", "31"], "--guidance must be from 0 to 30, got 31"),
    "steps past their limit": (["--steps", "151"], "--steps must be from 1 to 150, got 151"),
    "fast with too many steps": (["--fast", "--steps", "20"], "--fast draws in 1 to 8 steps, not 20"),
    "a size not of its aspect": (
        ["--aspect", "16:9", "--size", "512x512"],
        "--size 512x512 is not 16:9: give --aspect or --size, not both",
    ),
    "a size SD cannot draw": (
        ["--size", "500x500"], "--size must be positive multiples of 8 up to 2048x2048, got 500x500",
    ),
    "a LoRA weight past its limit": (["--lora", "org/ink:2.5"], "--lora org/ink: its weight must be from -2 to 2, got 2.5"),
    "a reference strength past its limit": (
        ["--reference-strength", "1.5"], "--reference-strength must be from 0 to 1, got 1.5",
    ),
    "an upscaler without a resolution": (
        ["--upscaler", "lanczos"],
        "--upscaler only acts with --resolution (720p, 1080p or 4k): give both, or neither",
    ),
    "a video model without its transitions": (
        ["--video-model", "tiny-random-wan"], "--video-model only acts with --transitions video: give both, or neither",
    ),
    "a few-step LoRA without --fast": (
        ["--fast-lora", "org/lcm"], "--fast-lora only acts with --fast: give both, or neither",
    ),
    "a separator without vocals to separate": (
        ["--separator", "/no/such/demucs.th"], "--separator only acts with --separate-vocals: give both, or neither",
    ),
    "an interpolator without an output rate": (
        ["--interpolator", "blend"], "--interpolator only acts with --output-fps: give both, or neither",
    ),
    "pictures too small for the motion search": (
        ["--size", "16x64", "--output-fps", "30"],
        "--interpolator minterpolate needs pictures of 32 pixels a side at least, not 16x64: give --interpolator "
        "blend, or a larger --size",
    ),
    "a video side longer than H.264 takes": (
        ["--size", "16x2048", "--resolution", "720p"],
        "a 16x2048 picture at --resolution 720p is 720x92160, over the 16384 pixels a side H.264 takes: give a "
        "squarer --size or a lower --resolution",
    ),
}  # fmt: skip


def pairs(options: list[str]) -> list[tuple[str, str]]:
    """Options as (name, text): a flag's text is yes (no for --no-NAME)."""
    found, words = [], iter(options)
    for word in words:
        name = word.removeprefix("--")
        if name in ("fast", "preview", "align"):
            found.append((name, "yes"))
        elif name.startswith("no-"):
            found.append((name.removeprefix("no-"), "no"))
        else:
            found.append((name, next(words)))
    return found


def model_options(options: list[str]) -> list[str]:
    return [word for name, text in pairs(options) if ModelChoice.column(name) for word in (f"--{name}", text)]


def on_the_page(options: list[str]) -> bool:
    """Whether the page has a control for each option (it has none for --interpolator: its looks choose)."""
    return all(RenderSettings.column(name).name in controls.RENDER_FIELDS for name, _ in pairs(options))


def through_the_command_line(options: list[str]) -> RenderSettings:
    args = cli.build_parser().parse_args(["render", "song.wav", "--models", "tiny", *options])
    return cli.render_settings(args)[0]


def write_csv(folder: Path, cells: list[tuple[str, str]]) -> Path:
    playlist = folder / "songs.csv"
    playlist.write_text(
        ",".join(["path", *(name for name, _ in cells)]) + "\n" + ",".join(["a.wav", *(t for _, t in cells)])
    )
    return playlist


def planned(playlist: Path, options: list[str]) -> list[Job]:
    argv = ["batch", playlist, "-o", playlist.parent / "out", "--models", "tiny", *options]
    args = cli.build_parser().parse_args([str(a) for a in argv])
    return batch.jobs_of(args, batch.read_playlist(args.playlist), ModelChoice(**ModelChoice.given(args)))


def through_a_row(options: list[str], folder: Path) -> RenderSettings:
    """The options as the cells of a CSV row (the model options on the batch's command line)."""
    row = [(name, text) for name, text in pairs(options) if not ModelChoice.column(name)]
    return planned(write_csv(folder, row), model_options(options))[0].settings


def control(name: str, text: str):
    """What the page's control of a setting holds for an option's text (numbers as numbers, flags as ticks)."""
    kind = field_type(RenderSettings, name)
    return parse_bool(text) if kind is bool else kind(text) if kind in (int, float) and text else text


# The page names style LoRAs only by the names it offers (ui/loras.py): here it offers, under the name the other
# doors are given, the LoRA they read by it.
OFFERED_LORAS = {"org/ink": Path("org/ink")}


def through_the_page(options: list[str]) -> RenderSettings:
    """The page as a person uses it: the look and fast chosen first (the other controls then show what they
    set), then the other controls changed; the page's handlers read the controls so."""
    chosen = {RenderSettings.column(name).name: text for name, text in pairs(options) if not ModelChoice.column(name)}
    shown = controls.shown_controls("tiny")
    values = {"preset": "tiny", **shown}
    values.update({name: control(name, chosen.pop(name)) for name in controls.LAYERS if name in chosen})
    changes, _ = controls.followed(values, shown)
    values.update(changes)
    values.update({name: control(name, text) for name, text in chosen.items()})
    return controls.chosen(values, OFFERED_LORAS)


@pytest.mark.parametrize("options", list(CHOICES.values()), ids=list(CHOICES))
def test_the_same_choices_give_the_same_settings_at_every_door(options, tmp_path):
    settings = through_the_command_line(options)
    assert through_a_row(options, tmp_path) == settings
    if not model_options(options):
        assert through_the_page(options) == settings


@pytest.mark.parametrize("options, sentence", list(REFUSED.values()), ids=list(REFUSED))
def test_what_one_door_refuses_every_door_refuses_in_the_same_sentence(options, sentence, tmp_path, capsys):
    assert cli.main(["render", str(tmp_path / "song.wav"), "--models", "tiny", *options]) == 2
    assert capsys.readouterr().err == f"musicvid: {sentence}\n"
    row = [(name, text) for name, text in pairs(options) if not ModelChoice.column(name)]
    playlist = write_csv(tmp_path, row)
    assert (
        cli.main(["batch", str(playlist), "-o", str(tmp_path / "out"), "--models", "tiny", *model_options(options)])
        == 2
    )
    err = capsys.readouterr().err
    assert err.endswith(f": {sentence}\n") and err.count("\n") == 1 and err.startswith("musicvid: ")
    if not model_options(options) and on_the_page(options):
        with pytest.raises(UserError) as refused:
            through_the_page(options)
        assert str(refused.value) == sentence


# The command line's options and a row's cells, one over the other, as the same options all given at once.
SPLIT = {
    "a row's look under the command line's captions and size": (
        ["--captions", "line", "--size", "512x512"],
        [("look", "music-video")],
        ["--look", "music-video", "--captions", "line", "--size", "512x512"],
    ),
    "a row's output rate with the command line's fast": (
        ["--fast"], [("output-fps", "24")], ["--fast", "--output-fps", "24"],
    ),
    "a row's steps with the command line's fast": (["--fast"], [("steps", "6")], ["--fast", "--steps", "6"]),
    "a row's captions over the command line's look": (
        ["--look", "music-video"],
        [("captions", "none")],
        ["--look", "music-video", "--captions", "none"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("options, cells, together", list(SPLIT.values()), ids=list(SPLIT))
def test_a_row_over_the_command_line_is_the_options_given_together(options, cells, together, tmp_path):
    [job] = planned(write_csv(tmp_path, cells), options)
    assert job.settings == through_the_command_line(together)


def test_a_drawn_rate_on_the_command_line_and_a_row_output_rate_it_does_not_divide_are_refused(tmp_path, capsys):
    playlist = write_csv(tmp_path, [("output-fps", "24")])
    assert cli.main(["batch", str(playlist), "-o", str(tmp_path / "out"), "--models", "tiny", "--fps", "10"]) == 2
    err = capsys.readouterr().err  # as `render --fps 10 --output-fps 24` is: the row's rate does not change --fps
    assert err.endswith(
        ": --output-fps 24 must be a whole multiple of --fps 10, so that every keyframe falls on a frame of the video\n"
    )


def test_the_page_offers_each_setting_in_its_whole_range():
    from musicvid.settings.song import SongRequest
    from ui.app import build_app
    from ui.config import UIConfig

    app = build_app(UIConfig(models="tiny"))
    by_label = {getattr(block, "label", None): block for block in app.blocks.values()}
    for label, cls, name in [
        ("Lyric lines of context for ViPE", SongRequest, "context_size"),
        ("Guidance scale", RenderSettings, "guidance"),
        ("Denoising steps", RenderSettings, "steps"),
        ("Frames per second", RenderSettings, "fps"),
        ("Pulse: a zoom on strong beats", RenderSettings, "pulse"),
    ]:
        meta = cls.fields()[name].metadata
        assert (by_label[label].minimum, by_label[label].maximum) == (meta["low"], meta["high"]), label
    assert by_label["Guidance scale"].step == 0.5 and by_label["Lyric lines of context for ViPE"].step == 1
    offered = [
        value
        for value, _ in by_label["Video frame rate (empty: as drawn; the frames between are interpolated)"].choices
    ]
    assert offered == ["", "24", "25", "30", "60"]


def test_an_option_that_would_do_nothing_beside_a_storyboard_or_timed_lyrics_is_refused(tmp_path):
    (timed := tmp_path / "timed.txt").write_text("[00:01.00] a line\n")
    (plain := tmp_path / "plain.txt").write_text("a line\n")
    (board := tmp_path / "storyboard.json").write_text("{}")  # (read later, by the run's checks)

    def request(*options):
        return cli.song_request(cli.build_parser().parse_args(["render", "song.wav", *options]))

    with pytest.raises(UserError, match="^--break, --bars-per-scene only act where a storyboard is made, not with"):
        request("--storyboard", str(board), "--break", "2", "--bars-per-scene", "8")
    with pytest.raises(UserError, match="^--title only acts where a storyboard is made"):  # the file holds its own
        request("--storyboard", str(board), "--title", "Another")
    # the storyboard holds its scenes' seeds and prompts: another seed, or other prompts' choice, drew the same video
    for options, said in (
        (["--seed", "0"], "--seed"),
        (["--candidates", "4", "--lens", "literal"], "--candidates, --lens"),
        (["--context-size", "3"], "--context-size"),
    ):
        with pytest.raises(UserError, match=f"^{said} only acts? where a storyboard is made"):
            request("--storyboard", str(board), *options)
    with pytest.raises(UserError, match="^--separate-vocals does nothing with timed lyrics"):
        request("--lyrics", str(timed), "--separate-vocals")
    assert request("--lyrics", str(plain), "--separate-vocals").separate_vocals  # Whisper aligns plain lyrics
    (none := timed.with_name("none.txt")).write_text("Instrumental\n")
    with pytest.raises(UserError, match="^--separate-vocals does nothing with lyrics that say the song has no words"):
        request("--lyrics", str(none), "--separate-vocals")
    assert request("--storyboard", str(board), "--lyrics", str(timed)).lyrics_file == timed  # karaoke's word times


@pytest.mark.parametrize(
    "option, text",
    [("--steps", "1_0"), ("--steps", "５"), ("--fps", "+1_2.5"), ("--size", "64_0x64"), ("--fps", "1e400")]
    + [("--fps", "1E-400"), ("--fps", "0.5e-999")],
)
def test_a_number_is_ascii_digits_at_every_door(option, text, tmp_path, capsys):
    # Python's int() and float() read "1_0" as 10 and other scripts' digits: a slip drawn at a size nobody asked for
    assert cli.main(["render", str(tmp_path / "song.wav"), "--models", "tiny", option, text]) == 2
    assert f"argument {option}: must " in (said := capsys.readouterr().err) and f"{text!r}" in said
    playlist = write_csv(tmp_path, [(option[2:], text)])
    assert cli.main(["batch", str(playlist), "-o", str(tmp_path / "out"), "--models", "tiny"]) == 2
    assert f"{option[2:]} must " in capsys.readouterr().err


def test_every_number_option_of_every_command_reads_numbers_as_every_other_does():
    # a plain float() takes Arabic-Indic digits, "2_0" (read as 20) and spaces, which parse_number refuses
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    plain = [
        f"{name} {action.option_strings[0]}"
        for name, command in commands.items()
        for action in command._actions
        if action.type in (int, float)
    ]
    assert plain == []
    for argv in (["plan", "s.mp3", "--gpu-memory", "١_٦"], ["score", "w", "--fps", "2_0"]):
        with pytest.raises(SystemExit) as refused:
            cli.build_parser(argv).parse_args(argv)
        assert refused.value.code == 2


@pytest.mark.parametrize(
    "option, text, must",
    [("--max-upload-mb", "0.5", "a whole number"), ("--max-jobs-gb", "1e400", "a number a float can hold")],
)
def test_a_page_option_of_the_wrong_kind_of_number_is_refused_in_musicvids_words(capsys, option, text, must):
    assert cli.main(["ui", option, text]) == 2
    assert (
        capsys.readouterr().err
        == f"musicvid ui: argument {option}: must be {must}, not {text!r} (see musicvid ui --help)\n"
    )


def test_a_loras_weight_and_a_number_past_what_int_reads_are_refused_as_typed(tmp_path, capsys):
    # a weight read by float() took 1e400 as inf (its range echoed it) and 1e-400 as 0; int() refused 5,000 digits
    # in its own words, and the whole number was echoed back (round 17)
    assert cli.main(["render", str(tmp_path / "song.wav"), "--models", "tiny", "--lora", "ink.safetensors:1e400"]) == 2
    assert (
        "argument --lora: ink.safetensors:1e400: its weight must be a number a float can hold"
        in capsys.readouterr().err
    )
    with pytest.raises(UserError, match="^the style LoRA ink:1e-400: its weight must be a number a float can hold"):
        Loras.parse("ink:0.5\nink:1e-400")
    assert Loras.parse("C:\\loras\\ink.safetensors;ink:1_0") == (Lora("C:\\loras\\ink.safetensors"), Lora("ink:1_0"))
    assert cli.main(["render", str(tmp_path / "song.wav"), "--models", "tiny", "--seed", "9" * 5000]) == 2
    assert f"argument --seed: must be a whole number, not '{'9' * 40}…'" in capsys.readouterr().err
