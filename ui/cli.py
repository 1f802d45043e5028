"""`musicvid ui`: options and start-up of the web page (light to import: the page loads on run)."""

from __future__ import annotations

import argparse
import socket
import time

from musicvid.core.errors import UserError
from musicvid.core.files import MAX_SONG_SECONDS
from musicvid.settings.front_doors import option_groups, parse_number, parse_path, parse_whole
from musicvid.settings.model_choice import ModelChoice, check_device, check_device_here
from musicvid.settings.presets import PRESETS
from musicvid.settings.schema import check_bounds
from ui.config import UIConfig, jobs_root

# The page's own options' bounds: a port is one of 1-65535; jobs are kept up to a year; a song is at most as long as
# the command line takes; jobs hold at most a pebibyte, more than a disk (1e400 reads as infinity).
LIMITS = {
    "port": dict(low=1, high=65535),
    "keep_hours": dict(above=0, high=365 * 24),
    "max_minutes": dict(above=0, high=MAX_SONG_SECONDS / 60),
    "max_upload_mb": dict(low=1),
    "max_jobs_gb": dict(above=0, high=2**20),
}


def add_command(commands) -> None:
    """`musicvid ui`, added to musicvid's command line through the entry point pyproject.toml declares."""
    p = commands.add_parser("ui", help="the web page (Gradio)")
    add_arguments(p)
    p.set_defaults(run=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    p.add_argument("--port", type=parse_whole, default=7860, help="port to listen on (default: %(default)s)")
    groups = option_groups(p)  # the page's models, device and precision where the other commands have them
    groups[ModelChoice.fields()["models"].metadata["group"]].add_argument(
        "--models",
        default=UIConfig.models,
        help=f"model preset the page starts with: {', '.join(PRESETS)} (default: %(default)s)",
    )
    for name in ("device", "precision"):  # as every front door has them (musicvid.settings.model_choice.ModelChoice)
        f = ModelChoice.fields()[name]
        groups[f.metadata["group"]].add_argument(
            f"--{name}", default=f.default, choices=f.metadata["choices"], help=f.metadata["help"]
        )
    p.add_argument("--share", action="store_true", help="also publish through a Gradio share link")
    for name, kind, said in (
        ("jobs-dir", parse_path, "where uploads and results live"),
        ("keep-hours", parse_number, "remove jobs unused for longer than this"),
        ("max-minutes", parse_number, "longest song accepted"),
        ("max-upload-mb", parse_whole, "largest upload accepted"),
        (
            "max-jobs-gb",
            parse_number,
            "what all jobs may hold on disk; past it a new job removes the least recently used",
        ),
    ):
        default = getattr(UIConfig, name.replace("-", "_"))
        p.add_argument(f"--{name}", type=kind, default=default, help=f"{said} (default: %(default)s)")
    p.add_argument(
        "--lora-dir",
        type=parse_path,
        default=None,
        help="a folder of style LoRAs the page offers by name (its .safetensors files); visitors may also upload "
        "their own",
    )


def config_from(args) -> UIConfig:
    """The page's configuration from its options, checked before the page starts: numbers out of their bounds, a
    --lora-dir that is not a folder, a device this machine lacks (the --jobs-dir: ui.config.jobs_root)."""
    for name, bounds in LIMITS.items():
        check_bounds(f"--{name.replace('_', '-')}", getattr(args, name), **bounds)
    if args.lora_dir is not None and not args.lora_dir.is_dir():
        raise UserError(f"--lora-dir {args.lora_dir} is not a folder")
    check_device(args.device)
    check_device_here(args.device)
    return UIConfig(
        args.models,
        args.device,
        args.jobs_dir,
        args.keep_hours,
        args.max_minutes,
        args.max_upload_mb,
        args.lora_dir,
        args.precision,
        args.max_jobs_gb,
    )


def check_listening(host: str, port: int) -> None:
    """Refuse, before the page is built, a --host that names nothing (an empty one), that does not resolve to an
    address of this machine, or a --port already taken there: Gradio would say only that it found no empty port."""
    if not host.strip():
        raise UserError("--host is empty: give the address to listen on (e.g. 127.0.0.1, or 0.0.0.0 for every one)")
    errors: list[Exception] = []
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:  # (gaierror is an OSError; an over-long label a UnicodeError)
        found, errors = [], [error]
    for family, kind, proto, _, address in found:  # (a name of IPv4 and IPv6 addresses: either may serve)
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (as the server does: a page just stopped)
                probe.bind(address)
            return
        except OSError as error:
            errors.append(error)
    reason = getattr(errors[0], "strerror", None) or str(errors[0]) or type(errors[0]).__name__
    raise UserError(f"--host {host} --port {port}: the page cannot listen there ({reason})")


def run(args) -> int:
    from ui.app import build_app

    if args.models not in PRESETS:
        raise UserError(f"--models must be one of {', '.join(PRESETS)}, not {args.models!r}")
    config = config_from(args)
    check_listening(args.host, args.port)
    served = jobs_root(config.jobs_dir)  # checked before the page is built: the folder the page serves alone
    app = build_app(config)
    app.queue(default_concurrency_limit=1).launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        max_file_size=f"{config.max_upload_mb}mb",
        allowed_paths=[str(served)],
        show_error=True,
        prevent_thread_lock=True,  # (Gradio's own wait ends quietly on a stop: the stop is said, exit 128 + signal)
    )
    try:
        while True:
            time.sleep(3600)
    finally:
        app.close()
