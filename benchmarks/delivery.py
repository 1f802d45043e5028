"""What delivering the video costs and how good it is: the whole delivery of the music-video look
(frames between, 1080p, karaoke, H.264), frame interpolation (--output-fps) and upscaling (--resolution).

    python -m benchmarks.delivery                    # synthetic clips, on this machine
    python -m benchmarks.delivery --frames WORKDIR   # also the frames of a real render made with --fps 20
    python -m benchmarks.delivery --quick            # small and short: checks the script still works

Interpolation quality, as the issue asks: a clip at 20 fps loses every other frame, each interpolator
makes it 20 fps again from the 10 left, and the frames it made are compared with the ones dropped
(PSNR in dB, SSIM). Clips: what a music video of ours holds besides the morphs, at the drawn size
(704x384): a slow zoom and a pan (musicvid.pictures.camera) over scikit-image's photographs, and a crossfade
between two of them; with --frames, the in-between frames of a render drawn at 20 fps (the morphs
themselves; that needs real Stable Diffusion weights to mean anything). Speed: frames made per second.

Upscaling cost per frame from 704x384 to 1920x1080: Lanczos, and Real-ESRGAN x4plus's architecture
(64 features, 23 blocks) through spandrel with random weights (the cost does not depend on their
values; the quality does, so none is claimed).

Delivery throughput, as the look costs it: a clip of morph-like crossfades between photographs drawn at
10 fps and 704x384, with karaoke lyrics, delivered at 30 fps and 1920x1080. "frames/s" is the video's
frames over the extra wall time of the look over the same clip encoded at its drawn rate and size with
its lyrics (what a render without the look does). Rows: the way before (ffmpeg interpolates, Pillow
scales each frame in Python, a second ffmpeg encodes with x264 medium) and one ffmpeg doing all of it,
per interpolator and x264 preset at CRF 18, with the file's size and its PSNR against the frames of
the same filters unencoded (the row before scaled with Pillow's Lanczos, not swscale's: its PSNR also
counts the difference of the two).

Writes JSON (default benchmarks/results/delivery-<host>.json) and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from musicvid import ffmpeg
from musicvid.delivery import captions
from musicvid.delivery.mux import INTERPOLATORS, X264_PRESET, encode_video, filter_chain, interpolate
from musicvid.delivery.upscale import Upscaler, cover
from musicvid.pictures import camera
from musicvid.pictures.render import load_picture
from musicvid.pictures.schedule import frame_schedule
from musicvid.storyboard import Scene, Storyboard

DRAWN = (704, 384)  # 16:9 at SD 1.5's pixel count
VIDEO = (1920, 1080)
DRAWN_FPS, VIDEO_FPS = 10, 30  # the music-video look's
SCENE_SECONDS = 5


def photographs() -> list[np.ndarray]:
    from skimage import data

    return [cover(picture, DRAWN) for picture in (data.astronaut(), data.coffee(), data.chelsea())]


def clips(seconds: float) -> dict[str, list[np.ndarray]]:
    """Clips at 20 fps of the drawn size."""
    frames = round(seconds * 20)
    schedule = frame_schedule([0.0], seconds, 20)  # one scene: the camera moves in and out again
    astronaut, coffee, chelsea = photographs()
    zoom, pan = camera.views(schedule, "zoom"), camera.views(schedule, "pan")
    fade = [((1 - k / frames) * coffee + k / frames * chelsea).round().astype(np.uint8) for k in range(frames)]
    return {
        "zoom over a photograph": [camera.look_through(astronaut, zoom[k]) for k in range(frames)],
        "pan over a photograph": [camera.look_through(coffee, pan[k]) for k in range(frames)],
        "crossfade of two photographs": fade,
    }


def rendered_clip(workdir: Path) -> list[np.ndarray]:
    """The longest run of consecutive in-between frames of a render (frames/<k>.png)."""
    numbers = sorted(int(p.stem) for p in (workdir / "frames").glob("*.png"))
    runs, run = [], []
    for k in numbers:
        run = run + [k] if run and k == run[-1] + 1 else [k]
        runs.append(run)
    longest = max(runs, key=len)
    return [load_picture(workdir / "frames" / f"{k}.png") for k in longest]


def quality(clip: list[np.ndarray], interpolator: str) -> dict:
    """Drop the odd frames, interpolate 10 -> 20 fps, compare the made odd frames with the dropped."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    kept = clip[::2]
    height, width = clip[0].shape[:2]
    count = 2 * len(kept) - 1  # the last kept frame has no frame after it to interpolate towards
    started = time.perf_counter()
    made = list(
        interpolate(
            kept, width=width, height=height, fps=10, output_fps=20, frame_count=count, interpolator=interpolator
        )
    )
    seconds = time.perf_counter() - started
    pairs = [(made[k], clip[k]) for k in range(1, count, 2)]
    return {
        "psnr": float(np.mean([peak_signal_noise_ratio(truth, frame) for frame, truth in pairs])),
        "ssim": float(np.mean([structural_similarity(truth, frame, channel_axis=2) for frame, truth in pairs])),
        "frames_per_second": count / seconds,
    }


def interpolation(args) -> dict:
    named = clips(args.seconds)
    if args.frames:
        named["morph frames of the render in " + str(args.frames)] = rendered_clip(args.frames)
    return {name: {method: quality(clip, method) for method in INTERPOLATORS} for name, clip in named.items()}


def morphs(seconds: float) -> list[np.ndarray]:
    """A clip at the drawn rate and size that changes as morphs do: each scene fades from one photograph
    to the next."""
    pictures = [picture.astype(np.float32) for picture in photographs()]
    per_scene = SCENE_SECONDS * DRAWN_FPS
    frames = []
    for k in range(round(seconds * DRAWN_FPS)):
        scene, u = divmod(k, per_scene)
        before, after = pictures[scene % 3], pictures[(scene + 1) % 3]
        frames.append(((1 - u / per_scene) * before + u / per_scene * after).round().astype(np.uint8))
    return frames


def karaoke(folder: Path, seconds: float, size: tuple[int, int]) -> Path:
    """A karaoke script over the clip: a line of four words every 2 s."""
    scenes = [
        Scene(index=i, kind="lyric", start=2.0 * i, end=2.0 * i + 2, text="we sing the night")
        for i in range(int(seconds // 2))
    ]
    words = {
        s.index: [(s.start + 0.5 * w, s.start + 0.5 * w + 0.5, t) for w, t in enumerate(s.text.split())] for s in scenes
    }
    board = Storyboard(audio={"duration": seconds}, title="", artist="", language="en", settings={}, scenes=scenes)
    script = folder / f"lyrics-{size[0]}x{size[1]}.ass"
    captions.write_script(script, captions.ass_script(board, *size, words))
    return script


def psnr_of(video: Path, reference: list[np.ndarray], chain: list[str], folder: Path) -> float:
    """The video's PSNR (dB, Y, U and V averaged) against the frames `chain` makes of `reference` unencoded."""
    source = folder / "reference.rgb"
    source.write_bytes(b"".join(np.ascontiguousarray(frame).tobytes() for frame in reference))
    command = [
        ffmpeg.exe(), "-hide_banner", "-nostdin", "-i", ffmpeg.file_url(video),
        "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{DRAWN[0]}x{DRAWN[1]}", "-framerate", str(DRAWN_FPS),
        "-i", ffmpeg.file_url(source),
        "-filter_complex", f"[1:v]{','.join(chain)},format=yuv420p[reference];[0:v][reference]psnr", "-f", "null", "-",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=True)
    source.unlink()
    return float(result.stderr.rsplit("average:", 1)[1].split()[0])


def throughput(args) -> dict:
    """Seconds, frames/s, size and PSNR of each way of delivering the look (see the module's text)."""
    clip = morphs(args.delivery_seconds)
    seconds = len(clip) / DRAWN_FPS
    count = round(seconds * VIDEO_FPS)
    drawn = dict(width=DRAWN[0], height=DRAWN[1], fps=DRAWN_FPS)
    look = dict(output_fps=VIDEO_FPS, frame_count=count, video_size=VIDEO)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        look_script, plain_script = karaoke(folder, seconds, VIDEO), karaoke(folder, seconds, DRAWN)

        def timed(name: str, deliver, **options) -> dict:
            video = folder / f"{name}.mp4"
            started = time.perf_counter()
            deliver(iter(clip), audio=None, output=video, **options)
            return {"seconds": time.perf_counter() - started, "megabytes": video.stat().st_size / 1e6, "video": video}

        def before(frames, **options) -> None:
            made = interpolate(frames, **drawn, interpolator="minterpolate", output_fps=VIDEO_FPS, frame_count=count)
            upscaled = (cover(frame, VIDEO) for frame in made)
            encode_video(upscaled, width=VIDEO[0], height=VIDEO[1], fps=VIDEO_FPS, preset="medium", **options)

        plain = timed("plain", encode_video, **drawn, subtitles=plain_script)
        rows = {
            ("minterpolate", "before: minterpolate, Pillow, x264 medium"): timed(
                "before", before, subtitles=look_script
            )
        }
        for interpolator in INTERPOLATORS:
            presets = (
                ["medium", X264_PRESET, "superfast"] if interpolator == "blend" and not args.quick else [X264_PRESET]
            )
            for preset in presets:
                name = f"one ffmpeg: {interpolator}, x264 {preset}"
                options = dict(**drawn, **look, subtitles=look_script, interpolator=interpolator, preset=preset)
                rows[interpolator, name] = timed(name.replace(" ", ""), encode_video, **options)
        for (interpolator, _), row in rows.items():
            chain = filter_chain(interpolator=interpolator, size=DRAWN, subtitles=look_script, **look)
            row["psnr"] = psnr_of(row.pop("video"), clip, chain, folder)
            row["frames_per_second"] = count / max(row["seconds"] - plain["seconds"], 1e-9)
        plain.pop("video")
    return {
        "drawn_frames": len(clip),
        "video_frames": count,
        "plain": plain,
        "look": {n: r for (_, n), r in rows.items()},
    }


def upscaling(args) -> dict:
    from spandrel import ModelLoader
    from spandrel.architectures.ESRGAN import ESRGAN

    frame = photographs()[0]
    results = {}
    started = time.perf_counter()
    for _ in range(args.repeats):
        cover(frame, VIDEO)
    results["lanczos (Pillow, in Python)"] = round((time.perf_counter() - started) / args.repeats, 4)
    torch.manual_seed(0)
    features, blocks = (8, 1) if args.quick else (64, 23)
    model = ModelLoader().load_from_state_dict(ESRGAN(num_filters=features, num_blocks=blocks, scale=4).state_dict())
    learned = Upscaler(model.eval(), VIDEO)
    learned(frame)  # one frame: a minute or more on a CPU
    results[f"real-esrgan x4plus architecture ({features} features, {blocks} blocks)"] = learned.cost()[
        "seconds_per_frame"
    ]
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=Path, help="the work directory of a render made with --fps 20")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each synthetic interpolation clip")
    parser.add_argument("--delivery-seconds", type=float, default=20.0, help="length of the delivered clip")
    parser.add_argument("--repeats", type=int, default=5, help="Lanczos upscales to time")
    parser.add_argument("--quick", action="store_true", help="short clips and a tiny network")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.delivery_seconds, args.repeats = 0.5, 1.0, 1
    device = (
        "CUDA " + torch.cuda.get_device_name()
        if torch.cuda.is_available()
        else f"CPU, {torch.get_num_threads()} threads"
    )
    report = {
        "host": platform.node(),
        "device": device,
        "drawn_size": DRAWN,
        "video_size": VIDEO,
        "delivery": throughput(args),
        "interpolation": interpolation(args),
        "upscale_seconds_per_frame": upscaling(args),
    }
    out = args.out or Path("benchmarks/results") / f"delivery-{platform.node() or 'host'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    delivery = report["delivery"]
    print(f"## Delivering the music-video look: {delivery['drawn_frames']} frames drawn at {DRAWN[0]}x{DRAWN[1]}")
    print(f"-> {delivery['video_frames']} at {VIDEO[0]}x{VIDEO[1]}, 30 fps, karaoke ({device})\n")
    print(f"Plain (the drawn rate and size, its lyrics): {delivery['plain']['seconds']:.1f} s\n")
    print("| way | seconds | frames/s of delivery | MB | PSNR dB |\n|---|---|---|---|---|")
    for name, r in delivery["look"].items():
        print(
            f"| {name} | {r['seconds']:.1f} | {r['frames_per_second']:.1f} | {r['megabytes']:.1f} | {r['psnr']:.2f} |"
        )
    print(f"\n## Interpolation, 10 -> 20 fps at {DRAWN[0]}x{DRAWN[1]} ({device})\n")
    print("| clip | interpolator | PSNR dB | SSIM | frames/s |\n|---|---|---|---|---|")
    for clip, methods in report["interpolation"].items():
        for method, r in methods.items():
            print(f"| {clip} | {method} | {r['psnr']:.2f} | {r['ssim']:.4f} | {r['frames_per_second']:.1f} |")
    print(f"\n## Upscaling {DRAWN[0]}x{DRAWN[1]} -> {VIDEO[0]}x{VIDEO[1]}, seconds per frame\n")
    print("| upscaler | s/frame |\n|---|---|")
    for name, seconds in report["upscale_seconds_per_frame"].items():
        print(f"| {name} | {seconds:.3f} |")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
