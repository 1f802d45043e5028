"""libass itself, through ctypes (Debian's libass9): an ASS script drawn as the players that read it draw it
(mpv, VLC, Aegisub's preview), with the fonts it embeds and, where given, a folder's, and no system font."""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

import numpy as np

FONT_PROVIDER_NONE = 0  # ASS_FONTPROVIDER_NONE: no system font, only those given
# libass's messages (level, format, its va_list, data): none printed
MESSAGES = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p)
_SILENT = MESSAGES(lambda level, text, arguments, data: None)


class Image(ctypes.Structure):
    pass


Image._fields_ = [
    ("w", ctypes.c_int),
    ("h", ctypes.c_int),
    ("stride", ctypes.c_int),
    ("bitmap", ctypes.POINTER(ctypes.c_ubyte)),
    ("color", ctypes.c_uint32),
    ("dst_x", ctypes.c_int),
    ("dst_y", ctypes.c_int),
    ("next", ctypes.POINTER(Image)),
    ("type", ctypes.c_int),
]


def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("ass") or "libass.so.9")
    for name in ("ass_library_init", "ass_renderer_init", "ass_read_memory"):
        getattr(lib, name).restype = ctypes.c_void_p
    lib.ass_render_frame.restype = ctypes.POINTER(Image)
    lib.ass_render_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p]
    lib.ass_read_memory.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.ass_set_fonts.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
    ]
    lib.ass_set_message_cb.argtypes = [ctypes.c_void_p, MESSAGES, ctypes.c_void_p]
    return lib


def drawn(script: str, size: tuple[int, int], times_ms: list[int], fonts: Path | None = None) -> list[np.ndarray]:
    """The coverage (0-255) of everything `script` draws at each of `times_ms` on a picture of `size` (width,
    height): its embedded fonts read ([Fonts]), and the fonts in the folder `fonts`."""
    lib = _library()
    library = ctypes.c_void_p(lib.ass_library_init())
    lib.ass_set_message_cb(library, _SILENT, None)
    lib.ass_set_extract_fonts(library, 1)
    if fonts is not None:
        lib.ass_set_fonts_dir(library, str(fonts).encode())
    renderer = ctypes.c_void_p(lib.ass_renderer_init(library))
    lib.ass_set_frame_size(renderer, *size)
    data = script.encode("utf-8")
    track = ctypes.c_void_p(lib.ass_read_memory(library, data, len(data), None))
    lib.ass_set_fonts(renderer, None, b"sans-serif", FONT_PROVIDER_NONE, None, 1)
    pictures = []
    for ms in times_ms:
        canvas = np.zeros((size[1], size[0]), dtype=np.uint8)
        image = lib.ass_render_frame(renderer, track, ms, None)
        while image:
            part = image.contents
            if part.w and part.h:
                rows = np.ctypeslib.as_array(part.bitmap, shape=(part.h, part.stride))[:, : part.w]
                area = canvas[part.dst_y : part.dst_y + part.h, part.dst_x : part.dst_x + part.w]
                np.maximum(area, rows, out=area)
            image = part.next
        pictures.append(canvas)
    lib.ass_free_track(track)
    lib.ass_renderer_done(renderer)
    lib.ass_library_done(library)
    return pictures
