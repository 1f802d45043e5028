"""The keyed picture cache: every picture is a PNG named by its frame (or scene) with a key in its metadata,
a hash of exactly the inputs it was drawn from. A rerun keeps each picture whose key still matches, so a
killed render continues where it stopped and an edited storyboard redraws only what depends on the edit.
(docs/frames.md)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image, PngImagePlugin

from vipe_core.atomic import atomic_path

KEY_FIELD = "musicvid-key"


def picture_key(*parts) -> str:
    """A hash of exactly the inputs a picture is drawn from (its key)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def stored_key(path: Path, size: tuple[int, int] | None = None) -> str | None:
    """The key a picture on disk was drawn with; None if it is missing, damaged or (given `size`,
    width × height) of another size than the video's."""
    try:
        with Image.open(path) as image:
            return image.text.get(KEY_FIELD) if size is None or image.size == size else None
    except (OSError, SyntaxError, ValueError):
        return None  # missing or damaged: render it again


def save_picture(
    path: Path, pixels: np.ndarray, key: str, on_saved: Callable[[Path, np.ndarray], object] = lambda path, pixels: None
) -> None:
    """`pixels` as the PNG `path` with its `key`, written whole or not at all; then `on_saved(path, pixels)`."""
    meta = PngImagePlugin.PngInfo()
    meta.add_text(KEY_FIELD, key)
    with atomic_path(path) as tmp:
        Image.fromarray(pixels).save(tmp, format="PNG", pnginfo=meta, compress_level=1)
    on_saved(path, pixels)


def load_picture(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))
