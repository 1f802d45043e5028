"""`musicvid batch`'s options, apart from the batch itself (musicvid.batch.command) so that the command line reads
them without importing what renders."""

from __future__ import annotations

from musicvid.settings.front_doors import parse_number, parse_path, parse_whole
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest


def add_arguments(groups: dict) -> None:
    """The batch's options in a command's option groups (musicvid.settings.front_doors.option_groups)."""
    song, video, speed = groups["song"], groups["video"], groups["speed"]
    video.add_argument(
        "-o", "--output", type=parse_path, required=True, help="folder for the videos, report.json and the table"
    )
    video.add_argument(
        "--workdir", type=parse_path, help="folder for the songs' work directories (default musicvid-work/)"
    )
    video.add_argument("--force", action="store_true", help="render songs again even if their video exists")
    RenderSettings.add_options(groups)
    song.add_argument(
        "playlist",
        type=parse_path,
        metavar="PLAYLIST",
        help="M3U/M3U8 playlist, folder of audio files, or CSV (path,title,artist,output,[per-song settings])",
    )
    SongRequest.add_options(groups, skip=("title", "artist", "workdir"))  # title and artist: per song
    ModelChoice.add_options(groups)
    speed.add_argument("--engine", choices=("local", "ray"), default="local", help="local (one process) or ray")
    speed.add_argument("--address", help="Ray cluster to join (e.g. auto); default: start Ray on this machine")
    speed.add_argument(
        "--workers", type=parse_whole, help="Ray actors, each keeping its models loaded (default: one per GPU, else 1)"
    )
    speed.add_argument(
        "--gpus-per-song", type=parse_number, help="GPUs each Ray actor asks for (default: 1 if the cluster has GPUs)"
    )
