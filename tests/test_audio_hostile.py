"""The song file in hostile shapes: samples that are not numbers, a length ffmpeg only estimates, a gap in the
timestamps, several audio streams, a WAV or a music video (MP4, Matroska, WebM) cut off, a stereo song whose channels
cancel in its mono mix. The analysis (decode) and the mux must hear the same sound on the same timeline, and a refusal
must be true."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.io import wavfile

from musicvid.core import ffmpeg
from musicvid.core.audio import (
    QUIET_MIX_RMS,
    SAMPLE_RATE,
    check_length,
    decode,
    load_audio,
    loudness,
    read_tags,
    song_samples,
    wav_seconds,
)
from musicvid.core.errors import UserError
from musicvid.delivery.mux import encode_video
from tests.helpers import TINY_QUIET, make_tone, run

# A rising tone: a second of it shifted in time no longer matches itself, as a steady tone would
SWEEP = "sin(2*PI*(200+150*t)*t)"
CHIRP = f"aevalsrc=0.3*{SWEEP}:s=44100:d={{seconds}}"


def make(path: Path, *arguments: str) -> Path:
    subprocess.run([ffmpeg.exe(), "-v", "error", "-y", *arguments, str(path)], check=True)
    return path


def muxed_sound(song: Path, tmp_path: Path) -> np.ndarray:
    """The sound of a video muxed (grey frames at 2 fps, as long as the song) with `song`, as a player plays it: on its
    timestamps, a gap in them heard as silence (the analysis's decode would close it)."""
    frames = int(np.ceil(decode(song).size / SAMPLE_RATE * 2))
    video = tmp_path / f"{song.stem}.mp4"
    grey = (np.full((16, 16, 3), 128, np.uint8) for _ in range(frames))
    encode_video(grey, width=16, height=16, fps=2, audio=song, output=video)
    played = subprocess.run(
        [ffmpeg.exe(), "-v", "error", "-i", str(video), "-af", "aresample=async=1:first_pts=0"]
        + ["-ac", "1", "-ar", str(SAMPLE_RATE), "-f", "f32le", "-"],
        capture_output=True,
        check=True,
    )
    return np.frombuffer(played.stdout, np.float32)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_song_with_samples_that_are_not_numbers_is_refused_at_its_decoding(tmp_path, bad):
    samples = np.full(SAMPLE_RATE, 0.1, np.float32)
    samples[SAMPLE_RATE // 2] = bad
    wavfile.write(tmp_path / "float.wav", SAMPLE_RATE, samples)  # a float WAV, as a DAW or a numpy script writes it
    with pytest.raises(UserError, match=r"float.wav holds samples that are not numbers .*, the first at 0.5 s"):
        song_samples(tmp_path / "float.wav")


def test_a_render_of_a_song_with_nan_stops_before_any_model_loads(capsys, tmp_path):
    samples = np.full(SAMPLE_RATE, 0.1, np.float32)
    samples[100] = np.nan
    wavfile.write(tmp_path / "nan.wav", SAMPLE_RATE, samples)
    code, out, err = run(capsys, "render", tmp_path / "nan.wav", *TINY_QUIET, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "not numbers" in err and not (tmp_path / "w").exists(), err


def test_a_wav_whose_header_says_hours_and_holds_a_moment_is_cut_off_not_too_long(tmp_path):
    """A WAV's data chunk that claims 6 hours in a 1 kB file is a damaged file, not a long song; a WAV as long as
    it says and over the limit is too long."""
    import struct

    header = struct.pack("<4sI4s4sIHHIIHH", b"RIFF", 36 + 1000, b"WAVE", b"fmt ", 16, 1, 1, 44100, 88200, 2, 16)
    (damaged := tmp_path / "huge.wav").write_bytes(header + struct.pack("<4sI", b"data", 0x7FFE0000) + bytes(1000))
    with pytest.raises(
        UserError, match=r"huge.wav looks truncated or corrupt: its header says 24\d{3}.\d s but at most"
    ):
        check_length(damaged, 3600)
    wavfile.write(long := tmp_path / "long.wav", 8000, np.zeros(8000 * 3, np.int16))
    with pytest.raises(UserError, match=r"long.wav lasts 0.1 minutes; the limit is"):
        check_length(long, 2)


def test_a_length_ffmpeg_only_estimates_is_no_declared_length(tmp_path):
    # raw AAC starting with a second and a half of silence: ffmpeg estimates it from the bit rate at about 55 s
    intro = ["-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono:d=1.5", "-f", "lavfi", "-i", CHIRP.format(seconds=1.5)]
    song = make(tmp_path / "quiet.aac", *intro, "-filter_complex", "[0:a][1:a]concat=n=2:v=0:a=1", "-c:a", "aac")
    assert "Estimating duration from bitrate" in ffmpeg.describe(song)
    assert ffmpeg.declared_duration(song, sound=True) is None
    check_length(song, 30)  # not "lasts 0.9 minutes"
    assert load_audio(song, max_seconds=30).info.duration == pytest.approx(3, abs=0.1)  # not "looks truncated"
    with pytest.raises(UserError, match=r"quiet.aac lasts 0.\d minutes; the limit is"):
        song_samples(song, max_seconds=2)  # the limit still holds, by the length decoded


def test_the_mux_closes_a_gap_in_the_timestamps_as_the_analysis_does(tmp_path):
    song = make(
        tmp_path / "gap.mkv",
        *["-f", "lavfi", "-i", CHIRP.format(seconds=3), "-af", "asetpts='if(gte(T,1.5),PTS+0.25/TB,PTS)'"],
        *["-c:a", "flac"],
    )
    analysed, muxed = decode(song), muxed_sound(song, tmp_path)
    assert analysed.size == pytest.approx(3 * SAMPLE_RATE, abs=SAMPLE_RATE / 100)  # the gap closed
    assert muxed.size == pytest.approx(analysed.size, abs=SAMPLE_RATE / 20)
    after = slice(2 * SAMPLE_RATE, int(2.8 * SAMPLE_RATE))  # past the gap: a quarter of a second late if it were kept
    assert np.corrcoef(analysed[after], muxed[after])[0, 1] > 0.9


def test_an_ordinary_songs_muxed_sound_is_its_analysed_sound(tmp_path):
    song = make(tmp_path / "song.m4a", "-f", "lavfi", "-i", CHIRP.format(seconds=2), "-c:a", "aac")
    analysed, muxed = decode(song), muxed_sound(song, tmp_path)
    span = slice(SAMPLE_RATE // 4, min(analysed.size, muxed.size) - SAMPLE_RATE // 4)
    assert np.corrcoef(analysed[span], muxed[span])[0, 1] > 0.9


@pytest.mark.parametrize("second", [["-ac", "2"], ["-ar", "48000"]])
def test_a_song_whose_channels_or_rate_change_partway_is_muxed_whole_on_one_timeline(tmp_path, second):
    """MP3s joined byte after byte (a radio rip, a podcast's parts), a broadcast's stereo then 5.1: ffmpeg starts its
    filters again at the change, and the mux's sound must not start its count of samples again there."""
    chirp = ["-f", "lavfi", "-i", CHIRP.format(seconds=1.5), "-ac", "1", "-ar", "44100"]
    first, then = make(tmp_path / "a.mp3", *chirp), make(tmp_path / "b.mp3", *chirp, *second)
    song = tmp_path / "joined.mp3"
    song.write_bytes(first.read_bytes() + then.read_bytes())
    analysed, muxed = decode(song), muxed_sound(song, tmp_path)
    assert analysed.size == pytest.approx(3 * SAMPLE_RATE, abs=SAMPLE_RATE / 10)
    assert muxed.size == pytest.approx(analysed.size, abs=SAMPLE_RATE / 20)  # (it was 1.5 s: the rest at its end)
    # past the change, where the analysis has it within 10 ms (a resampler started again there takes a millisecond)
    start, end, shifts = int(1.8 * SAMPLE_RATE), int(2.8 * SAMPLE_RATE), range(-SAMPLE_RATE // 100, SAMPLE_RATE // 100)
    matches = [np.corrcoef(analysed[start:end], muxed[start + shift : end + shift])[0, 1] for shift in shifts]
    assert max(matches) > 0.9


def stereo(left: str, right: str) -> list[str]:
    """ffmpeg's arguments for 2 s of stereo sound: `left` and `right`, expressions of the time t."""
    return ["-f", "lavfi", "-i", f"aevalsrc={left}|{right}:s=44100:d=2"]


@pytest.mark.parametrize("name, right", [("song.wav", "-1"), ("song.mp3", "-0.9")])
def test_a_song_with_a_channel_phase_inverted_is_heard_not_taken_for_silence(tmp_path, caplog, name, right):
    """Its mono mix cancels what a player plays from two speakers; the side (L-R)/2 is the song."""
    song = make(tmp_path / name, *stereo(f"0.3*{SWEEP}", f"{right}*0.3*{SWEEP}"))
    mix, audio = decode(song), load_audio(song)
    heard = audio.samples
    assert (
        audio.side and loudness(mix) < 0.02 and heard.size == mix.size and loudness(heard) > 0.19
    )  # the sweep's: 0.21
    if name == "song.wav":
        assert np.allclose(heard, decode(make(tmp_path / "mono.wav", "-f", "lavfi", "-i", CHIRP.format(seconds=2))))
    assert [m for m in caplog.messages if "nearly opposite" in m] == [
        f"{song}: its left and right channels are nearly opposite (one's phase inverted), so that its mono mix is all "
        "but silent: the analysis hears their difference instead"
    ]


@pytest.mark.parametrize("level", [0.3, QUIET_MIX_RMS / 3])  # a quiet one's channels are decoded too, and kept
def test_an_ordinary_stereo_songs_analysis_is_ffmpegs_mono_mix_as_it_was(tmp_path, caplog, level):
    song = make(tmp_path / "song.flac", *stereo(f"{level}*{SWEEP}", f"{level}*sin(2*PI*440*t)"))
    assert np.array_equal(song_samples(song)[0], decode(song)) and not caplog.messages
    assert not song_samples(song)[1]


def two_streams(tmp_path: Path, *dispositions: str) -> Path:
    """A music video with a faint 300 Hz tone as its first audio stream and the song (a chirp) as its second."""
    return make(
        tmp_path / "two.mkv",
        *["-f", "lavfi", "-i", "sine=f=300:d=2,volume=0.01", "-f", "lavfi", "-i", CHIRP.format(seconds=2)],
        *["-map", "0:a", "-map", "1:a", "-c:a", "flac", *dispositions],
    )


def test_the_analysis_and_the_mux_take_the_stream_the_file_marks_default(tmp_path):
    song = two_streams(tmp_path, "-disposition:a:0", "0", "-disposition:a:1", "default")
    assert ffmpeg.song_stream(song) == 1
    analysed, muxed = decode(song), muxed_sound(song, tmp_path)
    assert np.sqrt(np.mean(analysed**2)) > 0.1 and np.sqrt(np.mean(muxed**2)) > 0.1  # the song, not the faint tone


def test_where_no_stream_is_marked_default_the_first_is_taken(tmp_path):
    song = two_streams(tmp_path, "-disposition:a:0", "0", "-disposition:a:1", "0")
    assert ffmpeg.song_stream(song) == 0 and np.sqrt(np.mean(decode(song) ** 2)) < 0.05


def pcm_wav(path: Path, seconds: float, dtype=np.int16) -> Path:
    samples = (np.sin(np.arange(int(seconds * SAMPLE_RATE)) / 10) * 0.3).astype(np.float32)
    wavfile.write(path, SAMPLE_RATE, (samples * 32767).astype(dtype) if dtype == np.int16 else samples)
    return path


@pytest.mark.parametrize("dtype", [np.int16, np.float32])
def test_a_wav_cut_off_is_refused_by_its_data_chunks_length(tmp_path, dtype):
    song = pcm_wav(tmp_path / "cut.wav", 2, dtype)
    assert wav_seconds(song) == 2
    song.write_bytes(song.read_bytes()[: song.stat().st_size // 2])
    with pytest.raises(UserError, match="cut.wav looks truncated or corrupt: its header says 2.0 s but only 1.0 s"):
        song_samples(song)


def test_a_wav_whose_writer_could_not_know_its_length_is_taken_whole(tmp_path):
    piped = tmp_path / "piped.wav"  # ffmpeg writing to a pipe leaves the sizes 0xFFFFFFFF
    with piped.open("wb") as out:
        subprocess.run(
            [ffmpeg.exe(), "-v", "error", "-i", str(pcm_wav(tmp_path / "a.wav", 1)), "-f", "wav", "-"],
            stdout=out,
            check=True,
        )
    assert wav_seconds(piped) is None and song_samples(piped)[0].size == SAMPLE_RATE
    assert wav_seconds(make_tone(tmp_path / "tone.mp3", 1)) is None  # (not a WAV)


def test_a_music_video_cut_off_is_refused(tmp_path):
    video = make(
        tmp_path / "video.mp4",
        *["-f", "lavfi", "-i", "testsrc=s=64x64:d=3:r=10", "-f", "lavfi", "-i", CHIRP.format(seconds=3)],
        *["-c:v", "libx264", "-c:a", "aac", "-shortest", "-movflags", "+faststart"],
    )
    assert load_audio(video).info.duration == pytest.approx(3, abs=0.1)
    video.write_bytes(video.read_bytes()[: video.stat().st_size // 2])  # its index still lists the whole song
    with pytest.raises(UserError, match="video.mp4 looks truncated or corrupt: its header says 3.0 s"):
        song_samples(video)
    song = make(tmp_path / "song.m4a", "-f", "lavfi", "-i", CHIRP.format(seconds=3), "-c:a", "aac")  # index last
    song.write_bytes(song.read_bytes()[: song.stat().st_size // 2])
    with pytest.raises(UserError, match=r"song.m4a looks truncated: its index \(an MP4's moov\) is missing"):
        song_samples(song)


def pictures_and_sound(pictures: float, sound: float) -> list[str]:
    """ffmpeg's inputs for a music video's moving pictures and its sound (a chirp), each as long as asked."""
    return ["-f", "lavfi", "-i", f"testsrc=s=32x32:d={pictures}:r=5", "-f", "lavfi", "-i", CHIRP.format(seconds=sound)]


MATROSKA_CODECS = {"mkv": ["-c:v", "libx264", "-c:a", "libopus"], "webm": ["-c:v", "libvpx", "-c:a", "libopus"]}


@pytest.mark.parametrize("suffix", ["mkv", "webm"])
def test_a_matroska_music_video_cut_off_is_refused_wherever_the_cut_falls(tmp_path, suffix):
    video = make(tmp_path / f"video.{suffix}", *pictures_and_sound(2, 2), *MATROSKA_CODECS[suffix])
    whole = video.read_bytes()
    assert ffmpeg.matroska_cut_off(video) is False and load_audio(video).info.duration == pytest.approx(2, abs=0.1)
    for size in range(100, len(whole), len(whole) // 16):  # (ffmpeg says "File ended prematurely" after most cuts)
        video.write_bytes(whole[:size])
        assert ffmpeg.matroska_cut_off(video) is True, size
    video.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(UserError, match=rf"video.{suffix} looks truncated or corrupt: its header says 2.0 s but only"):
        song_samples(video)


def piped(path: Path, *arguments: str) -> Path:
    """A Matroska file as ffmpeg writes it to a pipe (a live recording): it cannot seek back to write its sizes."""
    with path.open("wb") as out:
        subprocess.run([ffmpeg.exe(), "-v", "error", *arguments, "-f", "matroska", "pipe:1"], stdout=out, check=True)
    return path


@pytest.mark.parametrize(
    "made",
    [
        lambda where: make(where / "longer.mkv", *pictures_and_sound(3, 2), *MATROSKA_CODECS["mkv"]),
        lambda where: make(where / "shorter.webm", *pictures_and_sound(1, 2), *MATROSKA_CODECS["webm"]),
        lambda where: make(where / "shortest.mkv", *pictures_and_sound(3, 2), *MATROSKA_CODECS["mkv"], "-shortest"),
        # ffmpeg writes -t's 10 s as the Duration of a stream it cannot finish by seeking back: no length
        lambda where: piped(where / "live.mkv", *pictures_and_sound(2, 2), *MATROSKA_CODECS["mkv"], "-t", "10"),
        lambda where: piped(where / "live.mka", "-f", "lavfi", "-i", CHIRP.format(seconds=2), "-t", "10"),
    ],
    ids=["pictures longer", "pictures shorter", "shortest", "live video", "live sound"],
)
def test_a_whole_matroska_song_is_taken_whatever_its_pictures_or_its_writer(tmp_path, made):
    song = made(tmp_path)
    assert ffmpeg.matroska_cut_off(song) is not True
    assert load_audio(song).info.duration == pytest.approx(2, abs=0.1)


def test_a_song_with_a_channel_phase_inverted_gives_its_separator_the_channels_in_phase(tmp_path, monkeypatch):
    """Demucs' vocals are averaged to mono: of channels still opposite, that average would cancel again."""
    from musicvid.lyrics import vocals

    monkeypatch.setattr(vocals, "demucs_stem", lambda model, mix, *how, **bar: mix)  # a separator giving the mix back
    song = make(tmp_path / "song.wav", *stereo(f"0.3*{SWEEP}", f"-0.3*{SWEEP}"))
    separator, heard = SimpleNamespace(samplerate=SAMPLE_RATE, audio_channels=2), song_samples(song)[0]
    separated = vocals.separate_vocals(separator, song, heard.size, quiet=True)
    assert loudness(separated) > 0.19 and np.allclose(np.abs(separated), np.abs(heard), atol=1e-3)


def test_bytes_that_are_no_audio_are_refused_with_ffmpegs_reason_not_its_progress_line(tmp_path):
    noise = tmp_path / "song.mp3"  # an MP3's name on random bytes: ffmpeg guesses MP3, then finds no frame
    noise.write_bytes(np.random.default_rng(5).integers(0, 256, 200_000, dtype=np.uint8).tobytes())
    with pytest.raises(UserError) as refused:
        decode(noise)
    said = str(refused.value)
    assert said.startswith(f"{noise} is not audio that ffmpeg can read: ") and "Invalid data found" in said
    assert "size=" not in said and "filters" not in said


def test_a_file_whose_second_audio_track_runs_longer_is_its_first_tracks_length_not_cut_off(tmp_path):
    # a video's second language or commentary: the container's length is its longest track's
    song = make(
        tmp_path / "two.mkv",
        *("-f", "lavfi", "-i", CHIRP.format(seconds=2), "-f", "lavfi", "-i", "sine=f=220:d=4"),
        *("-map", "0:a", "-map", "1:a", "-c:a", "libvorbis"),
    )
    assert load_audio(song).info.duration == pytest.approx(2.0, abs=0.05)
    cut = tmp_path / "cut.mkv"  # one of them cut off is still found so
    cut.write_bytes(song.read_bytes()[: song.stat().st_size // 2])
    with pytest.raises(UserError, match="looks truncated or corrupt"):
        load_audio(cut)


def test_one_audio_stream_in_two_programs_of_a_transport_stream_is_one_stream(tmp_path):
    # ffmpeg lists a stream under each program that holds it: counted twice, its song had no length to be judged by
    song = make(
        tmp_path / "two_programs.ts",
        *("-f", "lavfi", "-i", CHIRP.format(seconds=2), "-c:a", "mp2"),
        *("-program", "title=A:st=0", "-program", "title=B:st=0", "-f", "mpegts"),
    )
    description = ffmpeg.describe(song)
    assert description.count(": Audio: ") == 2 and len(ffmpeg.audio_streams(description)) == 1
    assert ffmpeg.declared_duration(song, sound=True) == pytest.approx(2.0, abs=0.1)
    assert ffmpeg.song_stream(song) == 0


def test_a_playlist_or_a_list_of_files_is_no_song_whatever_it_names(capsys, tmp_path):
    # ffmpeg's HLS and concat demuxers read the files their input names: another file's sound, from anywhere
    (tmp_path / "elsewhere").mkdir()
    private = make(tmp_path / "elsewhere" / "private.mp3", "-f", "lavfi", "-i", CHIRP.format(seconds=2))
    listed = {
        "inner.m3u8": f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2.0,\nfile://{private}\n#EXT-X-ENDLIST\n",
        "song.mp3": "ffconcat version 1.0\nfile elsewhere/private.mp3\n",  # (relative: ffconcat's safe mode takes it)
        "list.wav": f"ffconcat version 1.0\nfile '{private}'\n",  # (absolute: refused by ffmpeg as "not permitted")
    }
    for name, text in listed.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(
            UserError, match=r"is a list of other files that ffmpeg would read as the song \((hls|concat)\)"
        ):
            song_samples(tmp_path / name)
    code, out, err = run(capsys, "render", tmp_path / "inner.m3u8", *TINY_QUIET, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "give the audio file itself" in err, err
    assert song_samples(private)[0].size == 2 * SAMPLE_RATE  # the song itself is one


def test_a_list_naming_a_pipe_or_a_song_ffmpeg_cannot_describe_in_time_is_refused_not_waited_on(tmp_path, monkeypatch):
    import os
    import subprocess

    os.mkfifo(tmp_path / "seg.mp3")  # (no one writes it: ffmpeg, opening it, would wait forever)
    for name, text in (("a.mp3", "ffconcat version 1.0\nfile seg.mp3\n"), ("b.mp3", "\ufeff#EXTM3U\nseg.mp3\n")):
        (tmp_path / name).write_text(text)
        with pytest.raises(UserError, match=r"is a list of other files that ffmpeg would read as the song"):
            song_samples(tmp_path / name)
    song = make(tmp_path / "slow.mp3", "-f", "lavfi", "-i", CHIRP.format(seconds=1))

    def timed_out(*_):
        raise subprocess.TimeoutExpired("ffmpeg", 60)

    monkeypatch.setattr(ffmpeg, "_description", timed_out)
    with pytest.raises(UserError, match=r"^ffmpeg could not read .*slow.mp3 within a minute"):
        song_samples(song)


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".ogg", ".m4a", ".mp3"])
def test_a_songs_title_and_artist_are_its_tags_in_every_container(tmp_path, suffix):
    tags = ["-metadata", "title=Fárok Light", "-metadata", "artist=The Tiny Models"]
    tagged = make(tmp_path / f"Someone - Name{suffix}", "-f", "lavfi", "-i", CHIRP.format(seconds=1), *tags)
    assert read_tags(tagged) == ("Fárok Light", "The Tiny Models")  # (a WAV's RIFF INFO: mutagen reads none)
    bare = make(tmp_path / f"Someone - Bare{suffix}", "-f", "lavfi", "-i", CHIRP.format(seconds=1))
    assert read_tags(bare) == ("Bare", "Someone")  # untagged: the name's


def test_a_tags_control_characters_are_spaces_as_the_page_fills_its_fields_with_them(tmp_path):
    """Round 13: the page filled Artist from a tag holding U+0001, then refused the Artist nobody typed."""
    tags = ["-metadata", "title=Line\nBreak\tand  Tab", "-metadata", "artist=Tiny\x01Models"]
    tagged = make(tmp_path / "song.mp3", "-f", "lavfi", "-i", CHIRP.format(seconds=1), *tags)
    assert read_tags(tagged) == ("Line Break and Tab", "Tiny Models")
