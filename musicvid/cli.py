"""`musicvid render | storyboard | batch | ui` — the command line.

Exit codes: 0 done, 1 failure while rendering, 2 bad input or usage. Errors are one line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

# Library chatter (optional backends, deprecations) is not for the person running the command.
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from musicvid.errors import MusicvidError  # noqa: E402
from vipe_core.choose import LENSES  # noqa: E402

log = logging.getLogger("musicvid")


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line and exit code 2, like every other bad input."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size must look like 512x512, got {text!r}") from None
    return width, height


def add_song_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("song", type=Path, help="audio file (mp3, wav, flac, m4a, ogg, ... anything ffmpeg reads)")
    p.add_argument("--title", help="song title (default: the file's tags, then its name)")
    p.add_argument("--artist", help="artist (default: the file's tags)")
    p.add_argument("--models", default="default", help="model preset: default (the paper's) or tiny (offline, random)")
    p.add_argument("--asr", choices=("openai-whisper", "faster-whisper"), help="speech recognition backend")
    p.add_argument("--asr-model", help="Whisper model name or local checkpoint / CTranslate2 directory")
    p.add_argument("--vipe", help="ViPE model name or directory (e.g. one trained with `vipe train`)")
    p.add_argument("--vipe-tokenizer",
                   help="tokenizer for --vipe (default: the checkpoint's own, else GPT-2 Medium's as for the released ViPE)")  # fmt: skip
    p.add_argument("--diffusion", help="Stable Diffusion 1.x model name or directory")
    p.add_argument("--separator", help="Demucs model for --separate-vocals: a name (htdemucs), or a .th/.safetensors file")
    p.add_argument("--device", default="auto", help="auto (CUDA, MPS, CPU), cuda, mps or cpu")
    p.add_argument("--lyrics", type=Path,
                   help="the lyrics: timed (.lrc, .srt, transcript .json; skips Whisper) or plain lines (.txt; Whisper times them)")  # fmt: skip
    p.add_argument("--separate-vocals", action="store_true",
                   help="take the band away (Demucs htdemucs) before Whisper listens: for loud mixes")  # fmt: skip
    p.add_argument("--storyboard", type=Path, help="render this (edited) storyboard.json instead of making one")
    p.add_argument("--context-size", type=int, default=7, help="lyric lines before each line that ViPE reads")
    p.add_argument("--break", dest="break_seconds", type=float, default=4.0,
                   help="instrumental gaps at least this long (s) become scenes of their own")  # fmt: skip
    p.add_argument("--candidates", type=int, default=1,
                   help="ViPE elaborations per scene; the most concrete (or the one --lens favours) is kept")  # fmt: skip
    p.add_argument("--lens", choices=LENSES,
                   help="the reading of each line the choice among --candidates favours")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed for prompts and pictures")
    p.add_argument("--workdir", type=Path, help="work directory (default musicvid-work/<song>-<hash>/)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def add_render_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", type=Path, help="output video (default <song>.mp4 beside the song)")
    p.add_argument("--fps", type=float, default=10.0, help="frames per second (the paper: 10)")
    p.add_argument("--steps", type=int, help="denoising steps (default: the preset's, 25 for SD 1.5)")
    p.add_argument("--guidance", type=float, default=7.5, help="classifier-free guidance scale")
    p.add_argument("--size", type=parse_size, help="WxH, multiples of 8 (default: the preset's, 512x512 for SD 1.5)")
    p.add_argument("--scheduler", default="dpm++", help="deterministic sampler: dpm++ or ddim")
    p.add_argument("--batch-size", type=int, default=4, help="frames denoised together")
    p.add_argument("--no-align", dest="align", action="store_false",
                   help="plain slerp of text embeddings, without Chunked Similarity Alignment")  # fmt: skip
    p.add_argument("--align-chunk", type=int, default=4, help="rows per chunk for the alignment")
    p.add_argument("--style", default="", help="text appended to every prompt, e.g. 'oil painting'")
    p.add_argument("--negative-prompt", default="", help="what the pictures should not show")
    p.add_argument("--captions", action="store_true", help="burn the lyric lines into the video")
    p.add_argument("--preview", action="store_true", help="keyframes only, crossfaded: a fast first look")
    p.add_argument("--attention-slicing", action="store_true", help="less GPU memory, a little slower")
    p.add_argument("--vae-slicing", action="store_true", help="decode frames one at a time (less memory)")
    p.add_argument("--low-vram", action="store_true",
                   help="for small GPUs (8 GB at 512²): slicing, and each model on the GPU only while it runs")  # fmt: skip
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the UNet and VAE decoder: a minute or more to start, then faster frames (long songs on a GPU)")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="musicvid", description="Turn a song into a music video of what its lyrics mean.")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    render = commands.add_parser("render", help="song -> music video (MP4)")
    add_song_options(render)
    add_render_options(render)

    storyboard = commands.add_parser("storyboard", help="song -> storyboard.json, to review and edit")
    add_song_options(storyboard)

    batch = commands.add_parser("batch", help="render every song of a playlist, folder or CSV")
    from musicvid import batch as batch_module

    batch_module.add_arguments(batch)

    ui = commands.add_parser("ui", help="the web page (Gradio)")
    from ui import cli as ui_cli

    ui_cli.add_arguments(ui)
    return parser


def model_set(args):
    from musicvid.models import choose_models

    return choose_models(args.models, asr_backend=args.asr, asr=args.asr_model, vipe=args.vipe,
                         vipe_tokenizer=args.vipe_tokenizer, diffusion=args.diffusion, separator=args.separator)  # fmt: skip


def model_registry(args, keep_loaded: bool = False):
    from musicvid.models import ModelRegistry

    return ModelRegistry(model_set(args), device=args.device, keep_loaded=keep_loaded)


def song_request(args):
    from musicvid.pipeline import SongRequest

    return SongRequest(
        song=args.song, title=args.title, artist=args.artist, workdir=args.workdir,
        storyboard_file=args.storyboard, lyrics_file=args.lyrics, context_size=args.context_size,
        seed=args.seed, break_seconds=args.break_seconds, candidates=args.candidates, lens=args.lens,
        separate_vocals=args.separate_vocals, quiet=args.quiet,
    )  # fmt: skip


def cmd_storyboard(args) -> int:
    from musicvid.pipeline import get_storyboard
    from musicvid.storyboard import scene_table

    storyboard, workdir, _ = get_storyboard(song_request(args), model_registry(args))
    print(scene_table(storyboard))
    print(f"\nstoryboard: {workdir / 'storyboard.json'}")
    return 0


def render_settings(args, models):
    """RenderSettings from the render options, with the model set's size and steps as defaults."""
    from musicvid.render import RenderSettings

    width, height = args.size or models.size
    settings = RenderSettings(
        fps=args.fps, width=width, height=height, steps=models.steps if args.steps is None else args.steps,
        guidance=args.guidance, scheduler=args.scheduler, batch_size=args.batch_size, align=args.align,
        align_chunk=args.align_chunk, style=args.style, negative_prompt=args.negative_prompt,
        captions=args.captions, preview=args.preview, attention_slicing=args.attention_slicing,
        vae_slicing=args.vae_slicing, low_vram=args.low_vram, compile=args.compile,
    )  # fmt: skip
    settings.check()
    return settings


def cmd_render(args) -> int:
    from musicvid.render import render_song

    registry = model_registry(args)
    video = render_song(song_request(args), render_settings(args, registry.models), registry, output=args.output)
    print(video)
    return 0


def cmd_batch(args) -> int:
    from musicvid import batch

    return batch.run(args)


def cmd_ui(args) -> int:
    from ui import cli

    return cli.run(args)


COMMANDS = {"render": cmd_render, "storyboard": cmd_storyboard, "batch": cmd_batch, "ui": cmd_ui}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # usage errors and --help: argparse has said what it had to
        return int(exit.code or 0)
    logging.basicConfig(level=logging.WARNING, format="musicvid: %(message)s")
    if getattr(args, "quiet", False):  # before the model libraries are imported: they read it then
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    try:
        return COMMANDS[args.command](args)
    except MusicvidError as error:
        print(f"musicvid: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("musicvid: interrupted; run the same command again to continue", file=sys.stderr)
        return 130
    except Exception as error:  # a bug or an environment problem: one line, the traceback on request
        if args.debug:
            raise
        print(f"musicvid: failed: {type(error).__name__}: {error} (rerun with --debug for details)", file=sys.stderr)
        return 1
