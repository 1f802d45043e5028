"""A picture a person gives (a pinned keyframe, a reference picture), read as RGB the way a viewer shows it.

Pillow's `convert("RGB")` alone shows neither: it ignores a photo's EXIF orientation (a phone's portrait photo is
stored on its side, Orientation 6 or 8, and was drawn so), and it clips a 16-bit or 32-bit grey picture's values to
0..255 instead of scaling them (a 16-bit ramp from black to white came out white but for its first column).

    grey 16-bit (I;16, I;16B, I;16L; I, as some readers open 16-bit files):  v8 = round(v / 257), v clipped to 0..65535
    grey float (F):                                                         v8 = round(255 v), v clipped to 0..1
    transparent (RGBA, LA, PA; P, L or RGB with a transparent colour):     laid over black
    every other mode (1, L, P, RGB, CMYK, YCbCr, LAB, ...):                 Pillow's convert("RGB")

Over black, as a video shows what lies behind nothing: convert("RGB") alone showed whatever colour the transparent
pixels hid (a palette's magenta). An animated picture (GIF, WebP, APNG) gives its first frame, as Pillow opens it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from musicvid.core.errors import UserError

# How a given picture is read, in its cached pictures' keys beside its file's hash: a picture drawn from a file read by
# other rules (before EXIF orientation and wide grey were read, a 16-bit ramp drew white) is drawn again.
READING = "upright by EXIF; grey 16-bit / 257, float x 255; transparent over black"
WIDE = {"I;16": 65535, "I;16B": 65535, "I;16L": 65535, "I;16N": 65535, "I": 65535, "F": 1.0}


def as_shown(image: Image.Image) -> Image.Image:
    """`image` upright (its EXIF orientation applied) and in 8-bit RGB: its grey values scaled, not clipped, and its
    transparent pixels black."""
    image = ImageOps.exif_transpose(image)
    if image.mode in WIDE:
        top = WIDE[image.mode]
        values = np.clip(np.asarray(image, dtype=np.float64), 0, top)
        return Image.fromarray(np.rint(values * (255 / top)).astype(np.uint8)).convert("RGB")
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        return Image.alpha_composite(Image.new("RGBA", image.size, "black"), image.convert("RGBA")).convert("RGB")
    return image.convert("RGB")


def given_picture(path: Path, what: str) -> Image.Image:
    """The picture at `path` (`what`: pinned, reference) as shown; one sentence where Pillow cannot read it."""
    try:
        with Image.open(path) as image:
            return as_shown(image)
    except (OSError, SyntaxError, ValueError):
        raise UserError(f"{what} picture {path} is not an image Pillow can read") from None
