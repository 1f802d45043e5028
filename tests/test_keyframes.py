"""Keyframes first: the keyframes and the contact sheet before the morphs, and a new seed for one scene."""

import json
import math
import shutil
from dataclasses import replace

import av
import numpy as np
import pytest
from PIL import Image, ImageDraw

from musicvid.cli import main
from musicvid.core.workdir import Workdir
from musicvid.pictures.camera import cover
from musicvid.pictures.schedule import frame_schedule
from musicvid.review import sheet
from musicvid.review.sheet import sheet_size
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, work_directory

FPS = 4  # the renders' rate: each scene's morph has frames between its keyframes, at the fewest drawings
LYRICS = "[00:01.00]the sky is burning\n[00:02.00]rivers made of glass\n[00:03.00]stars fall\n[00:04.00]into the sea\n[00:05.00]and rise\n"


def drawn(workdir) -> int:
    return json.loads((workdir / "timings.json").read_text())["pictures_drawn"]


def name(path) -> str:
    return f"{path.parent.name}/{path.name}"


def pictures(workdir) -> dict[str, bytes]:
    return {name(p): p.read_bytes() for p in workdir.glob("*/*.png")}


def changed_since(before: dict[str, bytes], workdir) -> set[str]:
    after = pictures(workdir)
    return {picture for picture in after if after[picture] != before.get(picture)}


def touching(scene: int, schedule, workdir) -> set[str]:
    """The in-between frames of the morphs into and out of `scene`."""
    segments = [s for s in schedule.segments if scene in (s.scene, s.target)]
    return {name(Workdir(workdir).frame(k)) for s in segments for k in range(s.first + 1, s.end)}


@pytest.mark.slow
def test_keyframes_first_then_a_render_draws_each_keyframe_once_and_a_new_seed_redraws_one_scene(capsys, tmp_path):
    song = make_tone(tmp_path / "song.mp3", 6.0)
    (tmp_path / "song.lrc").write_text(LYRICS)
    workdir = tmp_path / "work"
    common = [song, "--models", "tiny", "--lyrics", tmp_path / "song.lrc", "--workdir", workdir, "-q"]

    def run(*argv) -> str:
        assert main([str(a) for a in argv]) == 0
        return capsys.readouterr().out

    out = run("storyboard", *common, "--keyframes")
    board = load_storyboard(workdir / "storyboard.json")
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, FPS)
    shown = schedule.shown_scenes
    assert f"keyframes: {len(shown)} drawn" in out and f"contact sheet: {workdir / 'contact_sheet.png'}" in out
    assert sorted(p.name for p in (workdir / "keyframes").iterdir()) == sorted(
        Workdir(workdir).keyframe(i).name for i in shown
    )
    assert not (workdir / "frames").exists()  # no morph yet
    with Image.open(workdir / "contact_sheet.png") as sheet:  # one scored thumbnail per scene, four to a row
        assert sheet.size == sheet_size(len(shown), (64, 64), scored=True) and math.ceil(len(shown) / 4) == 2

    run("render", *common, "--fps", FPS, "-o", tmp_path / "video.mp4")
    morphs = sum(s.length - 1 for s in schedule.segments if s.target is not None)
    assert drawn(workdir) == morphs  # the keyframes were kept: each drawn once in all
    before = pictures(workdir)

    # a new seed for scene 2: its keyframe alone is redrawn, then only the morphs into and out of it
    board = board.with_scenes({2: replace(board.scenes[2], seed=board.scenes[2].seed + 1)})
    (workdir / "storyboard.json").write_text(board.text())
    assert "keyframes: 1 drawn" in run("storyboard", *common, "--keyframes")
    run("render", *common, "--fps", FPS, "-o", tmp_path / "video.mp4")
    assert changed_since(before, workdir) == touching(2, schedule, workdir) | {name(Workdir(workdir).keyframe(2))}
    assert drawn(workdir) == len(touching(2, schedule, workdir))
    # frames of other morphs in the edited frames' blocks were denoised beside them but kept: they are
    # what a render from nothing gives, byte for byte
    fresh = work_directory(tmp_path / "fresh")  # a work directory of this storyboard alone
    shutil.copy(workdir / "storyboard.json", fresh / "storyboard.json")
    run("render", *common[:-3], "--workdir", fresh, "-q", "--fps", FPS, "-o", tmp_path / "fresh.mp4")
    assert pictures(fresh) == pictures(workdir)

    # a pinned picture for scene 4 becomes its keyframe as uploaded (scaled to cover 64x64), and the
    # video's frame at the scene's start is that picture, up to H.264
    y, x = np.mgrid[0:90, 0:160]
    upload = np.stack([x * 255 // 159, y * 255 // 89, np.full_like(x, 90)], axis=2).astype(np.uint8)
    Image.fromarray(upload).save(tmp_path / "band.png")
    board = load_storyboard(workdir / "storyboard.json")
    board = board.with_scenes({4: replace(board.scenes[4], picture=str(tmp_path / "band.png"))})
    (workdir / "storyboard.json").write_text(board.text())
    before = pictures(workdir)
    assert "keyframes: 1 drawn" in run("storyboard", *common, "--keyframes")
    pinned = np.asarray(Image.open(Workdir(workdir).keyframe(4)))
    assert np.array_equal(pinned, cover(upload, (64, 64)))
    run("render", *common, "--fps", FPS, "-o", tmp_path / "video.mp4")
    assert changed_since(before, workdir) == touching(4, schedule, workdir) | {name(Workdir(workdir).keyframe(4))}
    start = schedule.segments[4].first
    with av.open(str(tmp_path / "video.mp4")) as container:
        shown = next(f.to_ndarray(format="rgb24") for k, f in enumerate(container.decode(video=0)) if k == start)
    error = np.mean((shown.astype(float) - pinned) ** 2)
    assert 10 * math.log10(255**2 / error) > 30  # dB


@pytest.mark.slow
def test_keyframes_are_drawn_in_blocks_of_scenes_and_a_lost_one_is_drawn_again_to_the_same_bytes(tmp_path, monkeypatch):
    from musicvid.core.audio import load_audio
    from musicvid.memory.plan import stage_offloads
    from musicvid.models.drawing import Drawing
    from musicvid.models.registry import ModelRegistry
    from musicvid.models.timing import Timings
    from musicvid.pictures import denoise
    from musicvid.pictures.draw import draw_pictures, pictures_of
    from musicvid.pictures.grouping import picture_groups
    from musicvid.pictures.keyframe_candidates import pick_keyframes
    from musicvid.run import Run
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.resolve import resolve_render_settings
    from musicvid.settings.song import SongRequest
    from musicvid.storyboard.board import Scene, SongAudio, Storyboard

    prompts = ["a red kite", "a city of glass", "rivers of light", "a lighthouse", "stars falling"]
    scenes = [Scene(index=i, kind="lyric", start=i, end=i + 1, text=p, prompt=p, seed=i) for i, p in enumerate(prompts)]
    board = Storyboard(SongAudio(5.0), scenes=scenes)
    schedule = frame_schedule([s.start for s in scenes], board.duration, 2)
    settings = resolve_render_settings(PRESETS["tiny"], {"batch_size": 2, "steps": 2})
    registry, workdir = ModelRegistry(PRESETS["tiny"], keep_loaded=True), Workdir(tmp_path / "work")
    song = make_tone(tmp_path / "song.wav", 5.0)
    request, offloads = SongRequest(song=song, quiet=True), stage_offloads(None, settings)
    run = Run(request, registry, workdir, load_audio(song), Timings(), settings, offloads=offloads)
    drawn_by = Drawing().key(registry.models, registry.precision)
    groups = picture_groups(board, schedule, settings, drawn_by, workdir, keyframes_only=True)
    assert [[p.scene for p in group] for group in groups] == [[0, 1], [2, 3], [4]]  # by blocks of scene numbers

    original, sizes = denoise.draw_group, []

    def counted(pipe, inputs, group, *rest):
        sizes.append(len(group))
        return original(pipe, inputs, group, *rest)

    monkeypatch.setattr(denoise, "draw_group", counted)
    picked = pick_keyframes(run, board, schedule)
    assert sizes == [2, 2, 1] and picked.keyframes == picked.keyframe_candidates == 5  # drawn as the render draws them
    kept = {s: workdir.keyframe(s).read_bytes() for s in range(5)}
    workdir.keyframe(3).unlink()  # lost, as by a killed run: drawn again in its block, to the same bytes
    pictures = pictures_of(run, picked.storyboard, schedule, keyframes_only=True)
    assert pictures.stale == {workdir.keyframe(3)}
    assert draw_pictures(run, pictures) == 1 and sizes[3:] == [2]
    assert {s: workdir.keyframe(s).read_bytes() for s in range(5)} == kept


def test_the_contact_sheet_fits_a_word_of_any_length_with_a_few_measures():
    """A lyric or prompt of one 99,000-letter word (lyrics allow it): its cell's text is fitted measuring never the
    whole word, let alone once per letter cut (it measured the row once per letter: minutes)."""
    real, word = ImageDraw.Draw(Image.new("RGB", (1, 1))), "w" * 99_000
    measured = []

    class Counting:  # the sheet's drawing, counting the letters it has measured
        def textlength(self, text, font):
            measured.append(len(text))
            assert sum(measured) < len(word), "measured more letters than the word has"
            return real.textlength(text, font=font)

    rows = sheet._wrapped(Counting(), f"hello {word}", 13, 4)
    assert rows[0] == "hello" and len(rows) == 2 and rows[1].strip("w") == "…"
    assert sheet.THUMB_WIDTH - 20 < sheet._length(real, rows[1], 13) <= sheet.THUMB_WIDTH


def test_the_contact_sheet_draws_each_lyric_in_the_font_the_video_draws_it_in():
    """Chinese, Japanese and Korean in the lyrics' CJK font, as the captions: in the first font alone, each would be
    a row of the same empty boxes; what no font has is left out, as in the video."""
    from musicvid.core.assets import LYRICS_CJK_FONT, LYRICS_FONT, LYRICS_SCRIPT_FONTS, font_runs

    assert font_runs("I love 我爱你 🔥 you") == [
        (LYRICS_FONT, "I love "),
        (LYRICS_CJK_FONT, "我爱你  "),
        (LYRICS_FONT, "you"),
    ]
    # a word in the first font that has all of it: a joiner (ZWJ) in Hindi, an Urdu word with ہ, each shaped whole;
    # the line's other Urdu word (تم, which DejaVu has too) in Naskh with it, a line of Arabic in DejaVu
    devanagari, arabic = LYRICS_SCRIPT_FONTS[0], LYRICS_SCRIPT_FONTS[-1]
    assert (arabic.stem, devanagari.stem) == ("LyricsArabic-Bold", "LyricsDevanagari-Bold")
    assert font_runs("स्\u200dवागत, تم ہوں") == [
        (devanagari, "स्\u200dवागत"),
        (LYRICS_FONT, ", "),
        (arabic, "تم ہوں"),
    ]
    assert font_runs("love تم ہوں, hi") == [(LYRICS_FONT, "love "), (arabic, "تم ہوں"), (LYRICS_FONT, ", hi")]
    assert font_runs("أحبك يا قلبي") == [(LYRICS_FONT, "أحبك يا قلبي")]

    def drawn(text: str) -> np.ndarray:
        image = Image.new("RGB", (200, 30))
        sheet._draw(ImageDraw.Draw(image), (0, 0), text, 16, (255, 255, 255))
        return np.asarray(image).astype(int)

    lines = [drawn(text) for text in ("我们的歌声", "春の夜の夢", "사랑의노래")]
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert (np.abs(lines[a] - lines[b]).max(axis=2) > 100).sum() > 100, (a, b)


@pytest.mark.slow
def test_a_picture_model_whose_weights_hold_nan_stops_the_render_rather_than_draw_it_black(capsys, tmp_path):
    """Its shapes are whole, so only its first pictures tell: NaN, which would be written black."""
    import torch

    from musicvid.models.tiny import local_diffusion
    from musicvid.settings.presets import TINY

    pipe = local_diffusion(TINY)
    with torch.no_grad():
        pipe.unet.conv_out.weight.fill_(float("nan"))
    pipe.save_pretrained(folder := tmp_path / "diverged")
    song = make_tone(tmp_path / "song.mp3", 3.0)
    (tmp_path / "song.lrc").write_text(LYRICS)
    capsys.readouterr()  # (the save's progress)
    argv = [
        "render",
        song,
        "--models",
        "tiny",
        "--diffusion",
        folder,
        "--lyrics",
        tmp_path / "song.lrc",
        "-o",
        tmp_path / "v.mp4",
        "--workdir",
        tmp_path / "w",
    ]
    assert main([str(a) for a in [*argv, "-q"]]) == 2
    err = capsys.readouterr().err  # (in this process diffusers' loading bars are on: the hub was imported before -q)
    said = "musicvid: the picture model drew NaN, not pictures: its weights hold NaN or infinite values"
    assert err.splitlines()[-1] == said and "Traceback" not in err
    assert not (tmp_path / "v.mp4").exists()


def test_a_decoder_overflowing_float16_is_refused_with_float32_advised():
    """The same weights in float32 decode to numbers: only float16's range (to 65504) overflowed."""
    import torch

    from musicvid.core.errors import UserError
    from musicvid.models.tiny import local_diffusion
    from musicvid.pictures.denoise import decode
    from musicvid.settings.presets import TINY

    pipe = local_diffusion(TINY)
    with torch.no_grad():
        pipe.vae.decoder.conv_out.weight.mul_(1e5)
    latents = torch.randn(1, 4, 8, 8, generator=torch.Generator().manual_seed(0))
    assert decode(pipe, latents).shape == (1, 64, 64, 3)
    pipe.vae.to(torch.float16)
    with pytest.raises(UserError, match=r"overflow float16 \(try --precision float32\)"):
        decode(pipe, latents)
