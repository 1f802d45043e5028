"""The picture's and the video's geometry: shapes, sizes, the video's short sides, and the rates drawn."""

from __future__ import annotations

import math

from musicvid.core.errors import UserError

ASPECTS = {"16:9": 16 / 9, "9:16": 9 / 16, "1:1": 1.0, "4:5": 4 / 5}  # landscape video, stories, square, feed
RESOLUTIONS = {"720p": 720, "1080p": 1080, "4k": 2160}  # the video's short side
DRAWN_FPS = 10.0  # the paper's rate: what SD draws when only --output-fps is given, or near it


def check_size(size: tuple[int, int]) -> None:
    width, height = size
    if not (0 < width <= 2048 and 0 < height <= 2048) or width % 8 or height % 8:
        raise UserError(f"--size must be positive multiples of 8 up to 2048x2048, got {width}x{height}")


def size_text(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def size_for_aspect(aspect: str, near: tuple[int, int], step: int = 8) -> tuple[int, int]:
    """Width × height of the shape `aspect` with about as many pixels as `near`, in the steps SD draws
    best: multiples of 64 (below 512², of the family's `step`: SD's 8, the flow-matching families' 16). 16:9 near
    512x512 is 704x384."""
    ratio, area = ASPECTS[aspect], near[0] * near[1]
    unit = 64 if area >= 512 * 512 else step

    def misfit(size: tuple[int, int]) -> float:  # log-distance from the pixel count, the shape thrice as much
        return abs(math.log(size[0] * size[1] / area)) + 3 * abs(math.log(size[0] / size[1] / ratio))

    heights = range(unit, 4 * math.isqrt(area) + unit, unit)
    return min(((max(unit, round(h * ratio / unit) * unit), h) for h in heights), key=misfit)


def drawn_fps(output_fps: float) -> float:
    """The rate SD draws at for a video of `output_fps` when none is given: the whole fraction of it
    nearest the paper's 10 (12 for 24, 12.5 for 25, 10 for 30 and 60)."""
    return output_fps / max(1, round(output_fps / DRAWN_FPS))


def drawn_size(size: tuple[int, int], step: int) -> tuple[int, int]:
    """The size a video model whose sides come in steps of `step` (VideoFamily.size_step) draws a video of `size`
    at: each side down to a multiple of it (at least one step)."""
    return tuple(max(step, side // step * step) for side in size)
