"""A picture a person gives (pinned, a reference) is drawn as a viewer shows it: upright, its 16-bit and float grey
scaled to 8 bits, not clipped (musicvid.pictures.given)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.pictures.conditioning import covering_picture
from musicvid.pictures.given import given_picture
from musicvid.settings.render import RenderSettings

RAMP = np.tile(np.linspace(0, 1, 64), (16, 1))  # black on the left to white on the right


def _grey(picture: Image.Image) -> np.ndarray:
    pixels = np.asarray(picture).astype(int)
    assert pixels.shape[2] == 3 and (pixels[..., 0] == pixels[..., 2]).all()
    return pixels[..., 0]


@pytest.mark.parametrize(
    "mode, top, dtype", [("I;16", 65535, np.uint16), ("I", 65535, np.int32), ("F", 1.0, np.float32)]
)
def test_a_wide_grey_picture_is_scaled_to_eight_bits_not_clipped(tmp_path, mode, top, dtype):
    path = tmp_path / ("ramp.tif" if mode != "I;16" else "ramp.png")
    Image.fromarray((RAMP * top).astype(dtype)).save(path)
    with Image.open(path) as written:
        assert written.mode == mode
    grey = _grey(given_picture(path, "pinned"))
    assert np.abs(grey - np.rint(RAMP * 255)).max() <= 1  # (float rounding at the steps)
    assert grey[:, 0].max() == 0 and grey[:, -1].min() == 255 and 120 < grey.mean() < 135


def test_a_sixteen_bit_png_written_by_ffmpeg_keeps_its_gradient(tmp_path):
    path = tmp_path / "gradient.png"
    source = "gradients=s=64x64:c0=black:c1=white:x0=0:y0=0:x1=63:y1=0,format=gray16be"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-f", "lavfi", "-i", source, "-frames:v", "1", str(path)], check=True)
    grey = _grey(given_picture(path, "pinned"))
    row = grey[32]
    assert row[0] < 10 and row[-1] > 245 and (np.diff(row) >= 0).all() and 100 < row.mean() < 155


@pytest.mark.parametrize("orientation, turn", [(6, Image.Transpose.ROTATE_90), (8, Image.Transpose.ROTATE_270)])
def test_a_photo_stored_on_its_side_is_drawn_upright(tmp_path, orientation, turn):
    upright = np.zeros((48, 32, 3), np.uint8)
    upright[:24] = (255, 0, 0)  # red above, blue below
    upright[24:] = (0, 0, 255)
    exif = Image.Exif()
    exif[0x0112] = orientation
    path = tmp_path / "phone.jpg"
    Image.fromarray(upright).transpose(turn).save(path, exif=exif, quality=95)
    shown = np.asarray(given_picture(path, "pinned")).astype(int)
    assert shown.shape == (48, 32, 3)
    assert np.abs(shown - upright).mean() < 4
    covered = covering_picture(path, "pinned", RenderSettings(size=(64, 96)))
    assert covered.shape == (96, 64, 3) and covered[10, 32, 0] > 200 and covered[85, 32, 2] > 200


def test_what_a_picture_leaves_transparent_is_black_not_the_colour_it_hides(tmp_path):
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[..., :3] = (255, 0, 255)  # magenta under alpha 0, half alpha, whole
    rgba[:, 4:6, 3], rgba[:, 6:, 3] = 128, 255
    Image.fromarray(rgba).save(tmp_path / "logo.png")
    palette = Image.fromarray(rgba[..., :3]).convert("P")
    palette.save(tmp_path / "palette.png", transparency=palette.getpixel((0, 0)))
    for name in ("logo.png", "palette.png"):
        shown = np.asarray(given_picture(tmp_path / name, "pinned")).astype(int)
        assert (shown[:, :4] == 0).all(), name
    shown = np.asarray(given_picture(tmp_path / "logo.png", "pinned")).astype(int)
    assert abs(shown[0, 4, 0] - 128) <= 1 and shown[0, 4, 1] == 0 and (shown[:, 6:] == (255, 0, 255)).all()


def test_an_eight_bit_picture_reads_as_pillow_converts_it_and_a_non_picture_is_one_sentence(tmp_path):
    palette = Image.fromarray((RAMP * 255).astype(np.uint8)).convert("P")
    palette.save(tmp_path / "palette.png")
    assert (
        np.asarray(given_picture(tmp_path / "palette.png", "reference")) == np.asarray(palette.convert("RGB"))
    ).all()
    (tmp_path / "notes.png").write_text("not a picture")
    with pytest.raises(UserError, match=r"^reference picture .*notes\.png is not an image Pillow can read$"):
        given_picture(tmp_path / "notes.png", "reference")


def test_a_pinned_picture_drawn_from_a_file_read_by_other_rules_is_drawn_again(tmp_path, monkeypatch):
    from musicvid.pictures import grouping
    from musicvid.storyboard.board import Scene, SongAudio, Storyboard

    Image.new("L", (8, 8), 90).save(tmp_path / "pin.png")
    scenes = [
        Scene(index=0, kind="lyric", start=0, end=1, text="a", prompt="a", seed=0, picture=str(tmp_path / "pin.png"))
    ]
    board, settings = Storyboard(SongAudio(1.0), scenes=scenes), RenderSettings()
    before = grouping.KeyframeKeys(board, settings, {}).key(scenes[0])
    assert grouping.KeyframeKeys(board, settings, {}).key(scenes[0]) == before  # the same file, the same rules
    monkeypatch.setattr(grouping, "READING", grouping.READING + "; another rule")
    assert grouping.KeyframeKeys(board, settings, {}).key(scenes[0]) != before
