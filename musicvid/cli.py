"""`musicvid render | storyboard | plan | batch | score | ui` — the command line.

Exit codes: 0 done, 1 failure while rendering, 2 bad input or usage, 128 + a signal's number where one stopped the
run (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; 141 a reader of standard output that went away). Errors are one line.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Sequence
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path

# Library chatter (optional backends, deprecations) is not for the person running the command.
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from musicvid.core.errors import MusicvidError, UserError, out_of_memory, out_of_room  # noqa: E402
from musicvid.core.paths import printable  # noqa: E402
from musicvid.lyrics.known import check_lyrics_file  # noqa: E402
from musicvid.settings.front_doors import option_groups, parse_file_path, parse_number, parse_path  # noqa: E402
from musicvid.settings.geometry import DRAWN_FPS  # noqa: E402
from musicvid.settings.model_choice import DEFAULT_GPU_GB, ModelChoice, check_gpu_memory  # noqa: E402
from musicvid.settings.render import BETWEEN_AND_AFTER, RenderSettings
from musicvid.settings.resolve import check_used, reference_only, resolve_render_settings
from musicvid.settings.schema import check_field, option_name
from musicvid.settings.song import SongRequest, making_only
from vipe_core.errors import OutputLost, run_guarded, stop_said, stopped_as_interrupted
from vipe_core.parsing import OneLineParser

log = logging.getLogger("musicvid")


class DashedFileParser(OneLineParser):
    """Usage errors as one line (OneLineParser); where a word given names a file that starts with '-' (which argparse
    takes for an option), the line says how to give it."""

    def __init__(self, *args, given: Sequence[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.given = given  # the command line's words

    def hint(self, message: str) -> str:
        dashed = next((word for word in self.given if word[:1] == "-" and Path(word).is_file()), None)
        if dashed:
            return f"; a file whose name starts with '-' is given as ./{dashed}"
        wanting = re.fullmatch(r"argument (\S+): expected one argument", message)  # (`-o -y.mp4`: a new file)
        names = wanting[1].split("/") if wanting else []
        given, options = list(self.given), self.options()
        value = next((b for a, b in zip(given, given[1:]) if a in names and b[:1] == "-" and b not in options), None)
        return f"; a value that starts with '-' is given as {names[-1]}={value}" if value else ""

    def options(self) -> set[str]:
        """This command's options, as its help lists them."""
        return {word.rstrip(",") for word in self.format_help().split() if word[:1] == "-"}


def add_song_options(groups: dict, skip: tuple[str, ...] = ()) -> None:
    song = SongRequest.fields()["song"].metadata["help"]
    groups["song"].add_argument("song", type=parse_path, metavar="SONG", help=song)
    SongRequest.add_options(groups, skip)
    ModelChoice.add_options(groups, skip)


def grouped(commands, name: str, help: str, usage: str) -> dict:
    """A command whose help lists its options in the groups of musicvid.settings.schema.GROUPS, under a short
    usage line (the full one would list them all again, in no order a person could scan)."""
    return option_groups(commands.add_parser(name, help=help, usage=f"%(prog)s {usage} [options]"))


def add_score_options(p: argparse.ArgumentParser) -> None:
    """The score's own options first, then the models' ones in their groups."""
    p.add_argument(
        "workdir", type=parse_path, help="a render's work directory (musicvid-work/<song>-<hash>/, --workdir)"
    )
    p.add_argument(
        "--fps",
        type=parse_number,
        help=f"the rate a render drew at, for one whose timings.json does not record it (older renders; default {DRAWN_FPS:g})",
    )
    p.add_argument("--json", action="store_true", help="print score.json instead of its summary")
    # --models and --scorer: by default the scorer the render used (its timings.json says)
    keep = {"models", "scorer", "device", "precision"}
    ModelChoice.add_options(option_groups(p), skip=tuple(set(ModelChoice.fields()) - keep))


def build_parser(given: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The commands; a command's own options go in the groups too, each where it belongs, and the render settings
    first in theirs (a group opens with them). `given`: the words to parse, which a usage error may name."""
    about = "Turn a song into a music video of what its lyrics mean."
    parser = DashedFileParser(prog="musicvid", description=about, given=given)
    parser.add_argument("--debug", action="store_true", help="show full tracebacks")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=partial(DashedFileParser, given=given))

    render = grouped(commands, "render", "song -> music video (MP4)", "SONG")
    render["video"].add_argument(
        "-o", "--output", type=parse_file_path, help="output video (default <song>.mp4 beside the song)"
    )
    RenderSettings.add_options(render)
    add_song_options(render)

    storyboard = grouped(commands, "storyboard", "song -> storyboard.json, to review and edit", "SONG")
    storyboard["pictures"].add_argument(
        "--keyframes",
        action="store_true",
        help="also draw each scene's keyframe (a later render reuses them) and contact_sheet.png; after an "
        "edit of storyboard.json, only the edited scenes' keyframes are redrawn",
    )
    RenderSettings.add_options(storyboard, skip=BETWEEN_AND_AFTER)
    # it writes only in its work directory, and draws no frames between keyframes (no --video-model, --upscaler)
    add_song_options(storyboard, skip=("overwrite", *ModelChoice.between_and_after()))

    plan = grouped(commands, "plan", "the GPU memory a render needs and how it fits, before any work", "SONG")
    RenderSettings.add_options(plan)
    add_song_options(plan, skip=("overwrite",))
    plan["speed"].add_argument(
        "--gpu-memory",
        type=parse_number,
        metavar="GB",
        help=f"plan for this much GPU memory (default: what is free on the CUDA device, else a {DEFAULT_GPU_GB:g} GB card)",
    )
    plan["speed"].add_argument("--json", action="store_true", help="print the plan as JSON")

    batch = grouped(commands, "batch", "render every song of a playlist, folder or CSV", "PLAYLIST -o DIR")
    from musicvid.batch.options import add_arguments

    add_arguments(batch)

    score = commands.add_parser("score", help="a render's report: how well its pictures show the lyrics (score.json)")
    add_score_options(score)

    # Commands of the packages above this one (the web page's `ui`) add themselves: musicvid imports none of them
    for entry in entry_points(group="musicvid.commands"):
        entry.load()(commands)
    return parser


def song_request(args) -> SongRequest:
    """The song's request as the options give it, refused where an option given would do nothing: one that only
    makes a storyboard beside --storyboard, or --separate-vocals where timed lyrics leave Whisper nothing to hear
    (a batch's options may serve some rows alone, and the page's controls are always set: neither is refused)."""
    given = SongRequest.given(args)
    request = SongRequest(**given)
    if request.storyboard_file and (said := making_only(given)):
        raise UserError(f"{said}, not with --storyboard: leave it out")
    if request.separate_vocals and request.lyrics_file and (known := check_lyrics_file(request.lyrics_file)).timed:
        said = "timed lyrics" if known.lines else "lyrics that say the song has no words"
        raise UserError(f"--separate-vocals does nothing with {said} (Whisper does not listen then): leave it out")
    return request


def render_settings(args) -> tuple[RenderSettings, ModelChoice, tuple[str, ...]]:
    """The settings the options give (musicvid.settings.resolve.resolve_render_settings), the models, and the
    options given that act only where the run draws a reference picture (its storyboard's scenes may name theirs)."""
    from musicvid.models.choose import models_of

    choice, given = ModelChoice(**ModelChoice.given(args)), RenderSettings.given(args)
    settings = resolve_render_settings(models_of(choice), given)
    choice.check_used([settings], SongRequest.given(args).get("separate_vocals", False))
    check_used(given, [settings])
    return settings, choice, reference_only(given, choice)


# What a storyboard alone (no --keyframes) is not made with: an option that affects only these draws
DRAWN = frozenset({"keyframes", "between", "video"})


def check_drawn(args) -> None:
    """`storyboard` without --keyframes draws nothing: an option given that acts only where pictures are drawn would
    do nothing, and is refused, as one a render does not use is: every render setting (the storyboard is made from
    the song's request and the models alone; how fast pictures are drawn too), and the models that affect only what
    is drawn, or nothing kept (the scorer, which picks among keyframe candidates)."""
    if args.keyframes:
        return
    models = [ModelChoice.fields()[name] for name in ModelChoice.given(args)]
    fields = [
        *(RenderSettings.fields()[name] for name in RenderSettings.given(args)),
        *(f for f in models if set(f.metadata["affects"]) <= DRAWN | {"nothing"}),
    ]
    idle = [f"--{option_name(f)}" for f in fields]
    if idle:
        raise UserError(
            f"{idle[0]} only acts with --keyframes (a storyboard alone draws nothing): give both, or neither"
        )


def cmd_storyboard(args) -> int:
    check_drawn(args)
    settings, choice, references = render_settings(args)  # checked even when only the storyboard is made
    from musicvid.models.registry import registry_of  # (torch: once every option is checked)
    from musicvid.pipeline import get_storyboard, make_keyframes
    from musicvid.storyboard.table import scene_table, weakest_keyframes

    registry = registry_of(choice)
    if args.keyframes:
        made = make_keyframes(song_request(args), settings, registry, reference_only=references)
        storyboard, workdir = made.storyboard, made.workdir
    else:
        storyboard, workdir, _ = get_storyboard(song_request(args), registry)
    print(scene_table(storyboard))
    print(f"\nstoryboard: {workdir.storyboard}")
    if args.keyframes:
        print(f"keyframes: {made.pictures_drawn} drawn, in {workdir.keyframes}")
        print(f"contact sheet: {made.contact_sheet}")
        weakest = weakest_keyframes(storyboard, made.scenes)
        if weakest:  # last: what a person may want to redraw
            print("\n" + "\n".join(weakest))
    return 0


def cmd_render(args) -> int:
    settings, choice, references = render_settings(args)
    from musicvid.models.registry import registry_of  # (torch: once every option is checked)
    from musicvid.pipeline import make_video
    from musicvid.review.run_report import report_line

    request, registry = song_request(args), registry_of(choice)
    made = make_video(request, settings, registry, output=args.output, reference_only=references)
    print(report_line(made.timings), file=sys.stderr)
    print(made.video)
    return 0


def cmd_plan(args) -> int:
    settings, choice, references = render_settings(args)
    check_gpu_memory(args.gpu_memory)
    from musicvid import plan_command  # (torch: once every option is checked)

    return plan_command.run(song_request(args), settings, choice, references, args.gpu_memory, args.json)


def cmd_batch(args) -> int:
    from musicvid.batch import command as batch

    return batch.run(args)


def cmd_score(args) -> int:
    import json

    check_field(RenderSettings.fields()["fps"], args.fps)  # the range render's --fps takes
    from musicvid.models.registry import registry_of  # (torch: once every option is checked)
    from musicvid.review.score import render_scorer, score_render, summary_text

    given = ModelChoice.given(args)
    if not {"models", "scorer"} & set(given):  # the scorer the render used, as its work directory records it
        given["scorer"] = render_scorer(args.workdir)
    report = score_render(args.workdir, registry_of(ModelChoice(**given)), args.fps)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else summary_text(report))
    if not args.json:
        print(f"report: {args.workdir / 'score.json'} and score.png beside it")
    return 0


COMMANDS = {
    "render": cmd_render,
    "storyboard": cmd_storyboard,
    "plan": cmd_plan,
    "batch": cmd_batch,
    "score": cmd_score,
}


def _current_folder_gone() -> bool:
    """Whether the current folder is gone or its path too long to name: torch's libraries then fail to load, saying
    the install is broken."""
    try:
        os.getcwd()
    except OSError:
        return True
    return False


def _printable_record(record: logging.LogRecord) -> bool:
    """A warning as the terminal is given it: a person's text in it (a lyric, a file's name) commands nothing."""
    record.msg, record.args = printable(record.getMessage()), ()
    return True


def main(argv: list[str] | None = None) -> int:
    return run_guarded(lambda: _run(argv), "musicvid")


def _run(argv: list[str] | None) -> int:
    try:
        args = build_parser(sys.argv[1:] if argv is None else [str(word) for word in argv]).parse_args(argv)
    except SystemExit as exit:  # usage errors and --help: argparse has said what it had to
        return int(exit.code or 0)
    logging.basicConfig(level=logging.WARNING, format="musicvid: %(message)s")
    for handler in logging.getLogger().handlers:
        if _printable_record not in handler.filters:
            handler.addFilter(_printable_record)
    from vipe_core.bars import on_terminal  # (tqdm: not for --help's start)

    # Before the model libraries are imported (they read it then): the hub's download bars off with --quiet, and in a
    # log, which they would fill with redraws; an added command keeps them (the page's: Gradio tracks them).
    if getattr(args, "quiet", False) or (args.command in COMMANDS and not on_terminal()):
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    if _current_folder_gone():
        print(
            "musicvid: the current folder is gone, or its path is too long: cd to another and run again",
            file=sys.stderr,
        )
        return 2
    try:
        with stopped_as_interrupted():
            return (COMMANDS.get(args.command) or args.run)(args)  # (an added command sets its own `run`)
    except OutputLost:  # (run_guarded says it)
        raise
    except MusicvidError as error:
        print(f"musicvid: {printable(str(error))}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as stopped:
        return stop_said(stopped, "musicvid")
    except Exception as error:  # a bug or an environment problem: one line, the traceback on request
        if args.debug:
            raise
        if full := out_of_room(error):
            print(f"musicvid: {full}", file=sys.stderr)
            return 1
        if memory := out_of_memory(error):
            print(f"musicvid: {memory}", file=sys.stderr)
            return memory.exit_code
        print(f"musicvid: failed: {type(error).__name__}: {error} (rerun with --debug for details)", file=sys.stderr)
        return 1
