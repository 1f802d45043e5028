"""Mux: frames become H.264 (yuv420p) at the render's fps, with the song as AAC, through ffmpeg."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

import numpy as np

from musicvid import ffmpeg
from musicvid.errors import RenderError
from vipe_core.files import atomic_path


def encode_video(
    frames: Iterable[np.ndarray],
    *,
    width: int,
    height: int,
    fps: float,
    audio: Path | None,
    output: Path,
    subtitles: Path | None = None,
    crf: int = 18,
) -> None:
    """Pipe raw RGB frames to ffmpeg and write `output` atomically (never a half-written MP4).
    With no `audio` the video is silent. `subtitles`, an ASS file, is burned in by libass; ffmpeg runs
    in its folder and is given only its plain name, because in a filter graph `:`, `'`, `\\` and `,` of
    a path are syntax (every other file reaches ffmpeg as an absolute file: URL)."""
    if subtitles is not None and not re.fullmatch(r"[\w.-]+", subtitles.name):
        raise RenderError(f"subtitles must have a plain file name, not {subtitles.name!r}")
    with atomic_path(output) as tmp, tempfile.TemporaryFile() as log:
        command = [
            ffmpeg.exe(),
            "-y",
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-s",
            f"{width}x{height}",
            "-framerate",
            f"{fps}",
            "-i",
            "pipe:0",
            *(
                ["-i", ffmpeg.file_url(audio), "-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-b:a", "192k"]
                if audio
                else []
            ),
            *(["-vf", f"ass=filename={subtitles.name}"] if subtitles else []),
            "-c:v",
            "libx264",
            "-preset",
            "medium",
            "-crf",
            str(crf),
            "-pix_fmt",
            "yuv420p",
            "-movflags",
            "+faststart",
            ffmpeg.file_url(tmp),
        ]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stderr=log, cwd=subtitles.parent if subtitles else None
        )
        try:
            for number, frame in enumerate(frames):
                if frame.shape != (height, width, 3):  # raw frames have no borders: one would shift the rest
                    raise RenderError(
                        f"frame {number} is {frame.shape[1]}x{frame.shape[0]}, the video {width}x{height}"
                    )
                process.stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).tobytes())
        except BrokenPipeError:
            pass  # ffmpeg quit early; its own message below says why
        finally:
            process.stdin.close()
            returncode = process.wait()
        if returncode != 0:
            log.seek(0)
            raise RenderError(
                f"ffmpeg could not write the video: {ffmpeg.reason(log.read().decode('utf-8', 'replace'))}"
            )
