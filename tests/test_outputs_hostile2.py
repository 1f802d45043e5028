"""The file at -o holds the container its name says (an .mkv is Matroska, the same bytes every time), and a sidecar
(.srt, .ass) written for one video is not replaced for another video of the same name stem (`-o v.mp4`, then
`-o v.mkv`) unless --overwrite: it would no longer fit the video it was made for."""

import logging
import subprocess
from pathlib import Path
from types import SimpleNamespace

import av
import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.core.outputs import check_replaceable, remember, write_output
from musicvid.core.workdir import Workdir
from musicvid.delivery.deliver import stale_script
from musicvid.delivery.mux import encode_video
from tests.helpers import digest, make_tone, video_frames, work_directory


@pytest.fixture(scope="module")
def video(tmp_path_factory) -> Path:
    """A work directory's video as the mux writes it: an MP4, with sound."""
    folder = tmp_path_factory.mktemp("mux")
    frames = [np.full((64, 64, 3), level, np.uint8) for level in (0, 128, 255, 64)]
    output = folder / "video.mp4"
    encode_video(frames, width=64, height=64, fps=2, audio=make_tone(folder / "song.wav", 2), output=output)
    return output


def container(path: Path) -> str:
    """ffmpeg's name for the format it reads the file as (ffprobe's format_name)."""
    with av.open(str(path)) as opened:
        return opened.format.name


def test_an_mkv_output_is_matroska_and_the_same_bytes_every_time(tmp_path, video):
    workdir = Workdir(work_directory(tmp_path / "w"))
    output = tmp_path / "out" / "x.mkv"
    write_output(workdir, output, False, copy_of=video)
    assert container(output) == "matroska,webm" and video_frames(output) == 4
    with av.open(str(output)) as opened:
        assert [s.type for s in opened.streams] == ["video", "audio"]  # remuxed whole, not re-encoded
        assert opened.streams.video[0].codec_context.name == "h264"
    first = digest(output)
    write_output(workdir, output, False, copy_of=video)  # a render run again (or resumed): its own file, replaced
    write_output(workdir, tmp_path / "out" / "y.mkv", False, copy_of=video)
    assert digest(output) == first == digest(tmp_path / "out" / "y.mkv")
    assert not [p for p in output.parent.iterdir() if p.name.startswith(".")]  # no temporary left
    # the song as long as in the MP4 (Debian 12's ffmpeg 5.1 dropped the AAC encoder's delay: 23 ms late, 39 ms long)
    assert sound_samples(output) == sound_samples(video) == 2 * 44100


def sound_samples(path: Path) -> int:
    """How many samples of sound ffmpeg decodes from `path`, its container's edits and encoder delay applied."""
    command = [ffmpeg_exe(), "-v", "error", "-i", str(path), "-map", "0:a", "-f", "s16le", "-ac", "1", "-"]
    return len(subprocess.run(command, capture_output=True, check=True).stdout) // 2


@pytest.mark.parametrize("suffix", [".mp4", ".m4v", ".mov", ".MOV"])
def test_the_iso_family_is_copied_as_the_mux_wrote_it(tmp_path, video, suffix):
    output = tmp_path / f"x{suffix}"
    write_output(Workdir(work_directory(tmp_path / "w")), output, False, copy_of=video)
    assert digest(output) == digest(video) and container(output) == "mov,mp4,m4a,3gp,3g2,mj2"


def written_beside(workdir: Workdir, video: Path, *sidecars: str) -> list[Path]:
    """`video` (a stand-in) and its sidecars, written by a run of `workdir`: the outputs of a render to it."""
    write_output(workdir, video, False, text="a video")
    for suffix in sidecars:
        write_output(workdir, video.with_suffix(suffix), False, f"for {video.name}", beside=video)
    return [video, *(video.with_suffix(suffix) for suffix in sidecars)]


def test_a_sidecar_of_another_video_is_refused_in_one_sentence_unless_overwrite(tmp_path):
    workdir = Workdir(work_directory(tmp_path / "w"))
    mp4 = written_beside(workdir, tmp_path / "v.mp4", ".srt", ".ass")
    check_replaceable(mp4, workdir, False)  # the same -o again
    mkv = [tmp_path / "v.mkv", tmp_path / "v.srt", tmp_path / "v.ass"]
    with pytest.raises(UserError) as refused:
        check_replaceable(mkv, workdir, False)
    said = str(refused.value)
    assert said.startswith(f"{tmp_path / 'v.srt'} was written for {tmp_path / 'v.mp4'}, another video")
    assert "--overwrite" in said and "-o another name" in said and "\n" not in said
    check_replaceable(mkv, workdir, True)
    written_beside(workdir, tmp_path / "v.mkv", ".srt", ".ass")  # with --overwrite: now v.mkv's
    check_replaceable(mkv, workdir, False)
    with pytest.raises(UserError, match=r"v\.ass was written for .*v\.mkv, another video"):
        check_replaceable([mp4[0], mp4[2]], workdir, False)
    (tmp_path / "v.mkv").unlink()  # that video gone: its sidecars fit nothing there, and may be replaced
    check_replaceable(mp4, workdir, False)


def test_a_sidecar_recorded_before_videos_were_is_taken_as_written_beside_the_video_of_its_stem_recorded(tmp_path):
    workdir = Workdir(work_directory(tmp_path / "w"))
    mp4, srt = tmp_path / "v.mp4", tmp_path / "v.srt"
    mp4.write_text("a video")
    srt.write_text("1\n")
    remember(workdir, srt, srt)  # [size, sha256], no video: an outputs.json an earlier musicvid wrote
    check_replaceable([tmp_path / "v.mkv", srt], workdir, False)  # no video of its stem recorded: written for none
    remember(workdir, mp4, mp4)  # the older run recorded the video it wrote too: the .srt was that one's
    with pytest.raises(UserError, match=r"v\.srt was written for .*v\.mp4, another video"):
        check_replaceable([tmp_path / "v.mkv", srt], workdir, False)
    check_replaceable([mp4, srt], workdir, False)  # for that video again: its own
    mp4.unlink()  # that video gone: the .srt fits nothing there, and may be replaced
    check_replaceable([tmp_path / "v.mkv", srt], workdir, False)


def test_without_captions_the_ass_of_another_video_stays_said(tmp_path, caplog):
    workdir = Workdir(work_directory(tmp_path / "w"))
    video, ass = written_beside(workdir, tmp_path / "v.mp4", ".ass")
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        stale_script(SimpleNamespace(output=tmp_path / "v.mkv", workdir=workdir))
    assert ass.read_text() == "for v.mp4"
    assert len(caplog.records) == 1 and caplog.records[0].getMessage().startswith(f"{ass} is left as it is")
    stale_script(SimpleNamespace(output=video, workdir=workdir))  # its own video rendered without captions
    assert not ass.exists()
