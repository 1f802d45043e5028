"""Mux: frames become H.264 (yuv420p, BT.709) with the song as AAC, through ffmpeg, the lyrics burned in
(--captions); on the way the frames between the drawn ones are synthesised (--output-fps) and the
frames scaled to the video's size (--resolution), all in the one ffmpeg the frames are piped to.

Interpolation runs at the drawn size, before scaling: ffmpeg's interpolators run on the CPU, and
minterpolate makes about 14 frames/s at 704x384 on one core but 2 at 1920x1080.

The interpolators, compared in benchmarks/delivery.py:
- minterpolate: ffmpeg's motion-compensated interpolation (bidirectional motion estimation, overlapped
  blocks), which follows a moving picture;
- blend: ffmpeg's framerate filter, a crossfade of the two frames around each new one.
An output frame that falls on a drawn frame's time is that frame (up to the conversion to YUV).

x264's preset, `veryfast`, was chosen by measurement (docs/frames.md, "Delivery"): the look's delivery
at 1080p on two cores makes 43 frames/s with it and 12.5 with `medium`, at CRF 18 with a file 4%
smaller and a PSNR 1.6 dB lower (46.9 against 48.5 dB)."""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from musicvid.core import ffmpeg
from musicvid.core.errors import RenderError
from musicvid.core.workdir import FONTS
from musicvid.settings.render import RenderSettings
from vipe_core.atomic import atomic_path, new_temporary

# The filter of each interpolator musicvid.settings.render.INTERPOLATORS names (tests/test_one_source checks the names).
INTERPOLATORS = {
    "minterpolate": "minterpolate=fps={fps}:mi_mode=mci:mc_mode=aobmc:me_mode=bidir:vsbmc=1",
    "blend": "framerate=fps={fps}:interp_start=0:interp_end=255:scene=100",  # always blend, never cut
}
X264_PRESET = "veryfast"


def filter_chain(
    *,
    output_fps: float | None,
    interpolator: str,
    frame_count: int | None,
    size: tuple[int, int],
    video_size: tuple[int, int],
    subtitles: Path | None,
) -> list[str]:
    """ffmpeg's filter chain from the piped frames to the encoder: the frames between made at the drawn
    size (cheaper there), scaled by Lanczos to cover `video_size` and cropped to its middle (swscale,
    threaded), the lyrics burned in by libass with the fonts of the folder FONTS beside the script."""
    chain = []
    if output_fps:
        chain.append(INTERPOLATORS[interpolator].format(fps=output_fps))
    if frame_count is not None:
        chain.append(f"trim=end_frame={frame_count}")
    if tuple(video_size) != tuple(size):
        width, height = video_size
        chain.append(f"scale={width}:{height}:force_original_aspect_ratio=increase:flags=lanczos")
        chain.append(f"crop={width}:{height}")
    if subtitles is not None:
        fonts = f":fontsdir={FONTS}" if (subtitles.parent / FONTS).is_dir() else ""
        chain.append(f"ass=filename={subtitles.name}{fonts}")
    return chain


# RGB frames to H.264's YUV by BT.709's matrix, in its limited range, and the stream tagged so: players and browsers
# read an untagged HD video as BT.709, and swscale's default matrix, BT.601's, would shift every colour (a green
# frame's green by 27 levels of 255)
# (the frames carry the tags: ffmpeg's encoders take a frame's over their own options)
BT709 = (
    "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p,"
    "setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv"
)


@contextlib.contextmanager
def song_sound(song: Path | None, beside: Path) -> Iterator[Path | None]:
    """The song as the analysis decodes it (musicvid.core.audio.decode), in a temporary WAV beside `beside` for the
    mux; None without a song. Its samples follow one another from 0 whatever their timestamps say (a stream that
    starts late, as a video's sound may, or with a gap, a dropped packet, would otherwise put every picture and
    caption after it early), at the rate and in mono or stereo as the song begins (ffmpeg.song_format). Decoded
    apart, not by a filter of the mux: where a stream's rate or channels change partway (MP3s joined, a broadcast's
    stereo then 5.1) ffmpeg starts its filters again, and a filter counting samples counted from 0 again there."""
    if song is None:
        yield None
        return
    rate, channels = ffmpeg.song_format(song)
    wav = new_temporary(beside, ".wav")
    try:
        command = [
            ffmpeg.exe(), "-v", "error", "-nostdin", "-y", "-i", ffmpeg.file_url(song),
            "-map", f"0:a:{ffmpeg.song_stream(song)}", "-vn", "-map_metadata", "-1", "-ac", str(channels),
            "-ar", str(rate), "-c:a", "pcm_f32le", "-fflags", "+bitexact",
            "-rf64", "auto", "-f", "wav", ffmpeg.file_url(wav),  # (RF64 past 4 GB: an hour at 192 kHz)
        ]  # fmt: skip
        decoded = subprocess.run(command, capture_output=True)
        if decoded.returncode != 0:
            stderr = decoded.stderr.decode("utf-8", "replace")
            raise ffmpeg.failed("decode the song for the mux", stderr, decoded.returncode, wav)
        yield wav
    finally:
        wav.unlink(missing_ok=True)


def encode_video(
    frames: Iterable[np.ndarray],
    *,
    width: int,
    height: int,
    fps: float,
    audio: Path | None,
    output: Path,
    subtitles: Path | None = None,
    output_fps: float | None = None,
    interpolator: str = RenderSettings.interpolator,  # the setting's default: one source for it
    frame_count: int | None = None,
    video_size: tuple[int, int] | None = None,
    crf: int = 18,
    preset: str = X264_PRESET,
    tags: Mapping[str, str] | None = None,
) -> None:
    """Pipe raw RGB `frames` of width × height at `fps` to one ffmpeg, which delivers them (at
    `output_fps`, made by `interpolator`, `frame_count` frames in all; at `video_size`; with the ASS
    script `subtitles` burned in) and writes `output` atomically (never a half-written MP4), with `tags` (its
    title, artist: those written). With no `audio` the video is silent.

    ffmpeg runs in the script's folder and is given only its plain name, because in a filter graph `:`,
    `'`, `\\` and `,` of a path are syntax (every other file reaches ffmpeg as an absolute file: URL)."""
    if subtitles is not None and not re.fullmatch(r"[\w.-]+", subtitles.name):
        raise RenderError(f"subtitles must have a plain file name, not {subtitles.name!r}")
    if output_fps:
        frames = _held(frames, fps, output_fps)
    chain = filter_chain(
        output_fps=output_fps,
        interpolator=interpolator,
        frame_count=frame_count,
        size=(width, height),
        video_size=video_size or (width, height),
        subtitles=subtitles,
    )
    with atomic_path(output) as tmp, song_sound(audio, output) as sound, tempfile.TemporaryFile() as log:
        command = [
            ffmpeg.exe(), "-y", "-hide_banner", "-loglevel", "error", "-nostdin", *_piped(width, height, fps),
            *(
                ["-i", ffmpeg.file_url(sound), "-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-b:a", "192k"]
                if sound
                else []
            ),
            "-vf", ",".join([*chain, BT709]),
            "-c:v", "libx264", "-preset", preset, "-crf", str(crf), "-pix_fmt", "yuv420p",
            # the song is read faster than the frames come: without this the file's interleaving follows their pace
            "-max_interleave_delta", "0", "-movflags", "+faststart",
            *(part for key, value in (tags or {}).items() if value for part in ("-metadata", f"{key}={value}")),
            ffmpeg.file_url(tmp),
        ]  # fmt: skip
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
            pass  # ffmpeg quit early, done or failed: its exit status below says which
        finally:
            with contextlib.suppress(BrokenPipeError):  # closing flushes the frames it no longer reads
                process.stdin.close()
            returncode = process.wait()
        if returncode != 0:
            log.seek(0)
            raise ffmpeg.failed("write the video", log.read().decode("utf-8", "replace"), returncode, tmp)


def _held(frames: Iterable[np.ndarray], fps: float, output_fps: float) -> Iterable[np.ndarray]:
    """The frames, the last one given again: the interpolators wait for the frame after each new one,
    so the held frames end the video on time (the surplus is trimmed in the filter chain)."""
    last = None
    for last in frames:
        yield last
    if last is not None:
        yield from itertools.repeat(last, math.ceil(output_fps / fps) + 1)


def _piped(width: int, height: int, fps: float) -> list[str]:
    """ffmpeg's input: raw RGB frames on its standard input."""
    return ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-framerate", f"{fps}", "-i", "pipe:0"]


def interpolate(
    frames: Iterable[np.ndarray],
    *,
    width: int,
    height: int,
    fps: float,
    output_fps: float,
    frame_count: int,
    interpolator: str,
) -> Iterator[np.ndarray]:
    """`frames` at `fps` in, `frame_count` frames at `output_fps` out, the new ones made by
    `interpolator`. ffmpeg reads the frames from a thread while they are taken from its output."""
    size = (width, height)
    chain = filter_chain(
        output_fps=output_fps,
        interpolator=interpolator,
        frame_count=frame_count,
        size=size,
        video_size=size,
        subtitles=None,
    )
    command = [
        ffmpeg.exe(), "-hide_banner", "-loglevel", "error", "-nostdin", *_piped(width, height, fps),
        "-vf", ",".join(chain), "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1",
    ]  # fmt: skip
    held = _held(frames, fps, output_fps)
    failure: list[BaseException] = []
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)

        def feed() -> None:
            try:
                for frame in held:
                    process.stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).tobytes())
            except BrokenPipeError:
                pass  # ffmpeg has all the frames it wants, or quit: its own message says why
            except BaseException as error:  # a frame that could not be read: the caller hears of it
                failure.append(error)
            finally:
                process.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        size, made = width * height * 3, 0
        try:
            while made < frame_count and len(data := process.stdout.read(size)) == size:
                made += 1
                yield np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)
        finally:  # also when the caller stops taking frames: then ffmpeg is stopped
            if made < frame_count and process.poll() is None:
                process.kill()
            process.stdout.close()
            writer.join()
            returncode = process.wait()
        if failure:
            raise failure[0]
        if returncode != 0 or made < frame_count:
            log.seek(0)
            reason = (
                ffmpeg.reason(log.read().decode("utf-8", "replace"), returncode)
                if returncode
                else f"{made} of {frame_count} frames"
            )
            raise RenderError(f"ffmpeg could not interpolate: {reason}")
