"""Delivery: the drawn frames through the camera, muxed with the song and the lyrics into the work
directory's video (on a GPU in a thread beside the drawing, each frame as soon as its picture is written),
then copied out with its subtitles. (docs/frames.md, "Delivery")"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256
from musicvid.core.outputs import beside_another, write_output, written_here
from musicvid.delivery import captions, subtitles
from musicvid.delivery.ass_fonts import with_fonts
from musicvid.delivery.cue_times import word_times
from musicvid.delivery.mux import encode_video, interpolate
from musicvid.delivery.upscale import Upscaler
from musicvid.lyrics.transcript import Transcript
from musicvid.pictures.draw import Pictures, draw_pictures
from musicvid.pictures.frames import PendingPictures, camera_frames
from musicvid.pictures.schedule import to_frame
from musicvid.run import Run
from musicvid.storyboard.board import Storyboard
from vipe_core.atomic import write_text

log = logging.getLogger("musicvid")


@dataclass(frozen=True)
class Delivery:
    """What the drawn frames are delivered with."""

    song: Path  # the audio, muxed in whole
    script: Path | None  # the lyrics on screen (lyrics_script), burned in; None without captions
    accent: np.ndarray | None  # per drawn frame, the beats' accent (--pulse)
    upscale: Upscaler | None  # the learned upscaler (--resolution)
    tags: tuple[tuple[str, str], ...] = ()  # the video's own (title, artist: the storyboard's), as players list it


def lyrics_script(run: Run, storyboard: Storyboard, heard: Transcript | None) -> Path | None:
    """The lyrics on screen as an ASS script at the video's size, each line while `heard` (the run's timed lyrics,
    else the work directory's transcript of its song: storyboard.make.word_source) sings it (karaoke: each word's
    time, Whisper's where it heard the line); None without captions. Made anew each run, as the video is."""
    settings, workdir = run.settings, run.workdir
    if settings.captions == "none":
        return None
    words = word_times(storyboard, heard) if settings.captions == "karaoke" else None
    script = captions.ass_script(storyboard, *settings.video_size, words, heard)
    captions.write_script(workdir.lyrics_script, script)
    return workdir.lyrics_script


def mux_video(run: Run, frames: Iterator[np.ndarray], duration: float, delivery: Delivery) -> Path:
    """The work directory's video: `frames` (the drawn frames through the camera: camera_frames) at the output
    rate and size, `duration` seconds, encoded with the song and the lyrics' script burned in (docs/frames.md,
    "Delivery"). One ffmpeg does all but the camera and a learned upscaler. That network sees the drawn frames
    where the frames between are blends (a third of the frames, at 30 fps from 10; the blends are made at the
    video's size); minterpolate's motion search is too slow at the video's size (2 frames/s at 1080p), so there
    the frames between are made at the drawn size first and come back to be upscaled."""
    settings, upscale = run.settings, delivery.upscale
    video = run.workdir.video(settings.preview)
    song_kept(run, delivery.song)
    frame_count = to_frame(duration, settings.video_fps)
    rate = dict(output_fps=settings.output_fps, interpolator=settings.interpolator, frame_count=frame_count)
    (width, height), fps = settings.size, settings.fps
    with run.timings.measure("mux"):
        if upscale is not None and settings.output_fps and settings.interpolator == "minterpolate":
            frames = interpolate(frames, width=width, height=height, fps=fps, **rate)
            rate, fps = {}, settings.video_fps
        if upscale is not None:
            frames, (width, height) = upscale(frames), settings.video_size
        try:
            encode_video(
                frames,
                width=width,
                height=height,
                fps=fps,
                **rate,
                video_size=settings.video_size,
                audio=delivery.song,
                output=video,
                subtitles=delivery.script,
                tags=dict(delivery.tags),
            )
        except Exception:
            song_kept(run, delivery.song)  # a song gone since is the reason, not what ffmpeg says of it
            raise
    try:
        song_kept(run, delivery.song)
    except UserError:
        video.unlink(missing_ok=True)  # the song as it is now, under pictures of what it was
        raise
    return video


def song_kept(run: Run, song: Path) -> None:
    """Refuse to mux a song that is no longer what was decoded (replaced, edited or gone since): its pictures and
    times are the decoded one's. Checked before the mux and after it, which reads the file again."""
    try:
        kept = file_sha256(song) == run.audio.info.sha256
    except OSError:
        kept = False
    if not kept:
        raise UserError(f"the song {song} changed or went while it was rendered: render it again")


def delivers_while_drawing(device: torch.device) -> bool:
    """Whether the delivery (on the CPU) runs beside a drawing on `device`: only where that is not the CPU."""
    return device.type != "cpu"


def draw_and_deliver(run: Run, pictures: Pictures, delivery: Delivery) -> tuple[int, Path]:
    """The pictures drawn while the video is delivered from them (mux_video) in another thread,
    each frame as soon as its picture is written: on a GPU the CPU's part of the delivery (interpolation,
    scaling, captions, x264) then ends about when the drawing does instead of starting there. The frames
    reach ffmpeg in the same order with the same bytes as after the drawing, so the video is the same (most
    handed over by the drawing, pixels and all, rather than read back from the PNGs it has just written).
    Returns the pictures drawn and the video. A drawing that fails or is stopped ends the delivery too,
    leaving no video; "mux" counts the delivery's time but not its waits for pictures.

    Where the pictures are drawn on the CPU the delivery waits for the drawing instead: both then share
    the same cores, and overlapped they took 11% more wall time and 20% more CPU time on two cores."""
    storyboard, schedule, settings, workdir = pictures.storyboard, pictures.schedule, run.settings, run.workdir
    if delivers_while_drawing(run.registry.device):
        pending = PendingPictures(pictures.stale)

        def ready(path: Path) -> np.ndarray | None:
            with run.timings.waiting("mux"):
                return pending.wait(path)

        frames = camera_frames(storyboard, schedule, workdir, settings, delivery.accent, ready)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deliver") as deliverer:
            video = deliverer.submit(mux_video, run, frames, storyboard.duration, delivery)
            try:
                drawn = draw_pictures(run, pictures, on_saved=pending.saved)
            finally:
                pending.close()  # a delivery waiting for a picture never drawn stops there
            return drawn, video.result()
    drawn = draw_pictures(run, pictures)
    frames = camera_frames(storyboard, schedule, workdir, settings, delivery.accent)
    return drawn, mux_video(run, frames, storyboard.duration, delivery)


def copy_out(run: Run, storyboard: Storyboard, video: Path, script: Path | None, heard: Transcript | None) -> None:
    """The video to the run's output (in the container its name says), with its .srt (also kept in the work
    directory; each line while `heard` sings it, as lyrics_script's) and, for editors, the lyrics' .ass beside it
    with its fonts in it (musicvid.delivery.ass_fonts); each recorded as this song's, the sidecars as this video's
    (musicvid.core.outputs). Without captions, an .ass an earlier run left there goes (stale_script)."""
    workdir, output, overwrite = run.workdir, run.output, run.request.overwrite
    cues = subtitles.srt(storyboard, heard)
    if output.resolve() != video.resolve():
        write_output(workdir, output, overwrite, copy_of=video)
    write_output(workdir, output.with_suffix(".srt"), overwrite, cues, beside=output)
    if script is not None:
        ass = with_fonts(script.read_text(encoding="utf-8"))  # (the work directory's has its fonts/ beside it)
        write_output(workdir, output.with_suffix(".ass"), overwrite, ass, beside=output)
    else:
        stale_script(run)
    write_text(workdir.subtitles, cues)


def stale_script(run: Run) -> None:
    """The .ass beside a video rendered without captions, removed where it is the one a run of this work directory
    wrote there (outputs.json records its bytes), not beside another video still there: a player loads it by name
    and would show its lyrics over the video. Any other file there is a person's or that video's: left, and said
    in one line."""
    ass, workdir = run.output.with_suffix(".ass"), run.workdir
    if (
        ass.is_file()
        and not ass.is_symlink()
        and written_here(ass, workdir)
        and not beside_another(ass, run.output, workdir)
    ):
        ass.unlink()
    elif ass.exists() or ass.is_symlink():
        log.warning(
            "%s is left as it is (musicvid did not write it for this song and video, or it changed since); a player "
            "may show it over %s, rendered without captions",
            ass,
            run.output,
        )
