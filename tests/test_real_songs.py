"""Lyrics on real recordings with a band (tests/fixtures/recordings.py: Muldjord's metal songs, CC BY-SA 3.0,
and Sectoid's instrumentals, from Debian's fretsonfire packages, mixed here from their stems), through
both backends with the real Whisper tiny.en weights computing in float32 (int8's kernels differ between
processors). Excerpts keep the suite short; `python -m benchmarks.real_songs` measures the whole songs."""

import pytest

from musicvid.core.audio import load_audio
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import hear, recognize, sung_lines, transcribe
from musicvid.storyboard.scenes import scenes_from_lines
from tests.fixtures.recordings import INSTRUMENTAL, SUNG, counted, installed, kept_in_lyrics, mix, words_per_minute
from tests.fixtures.whisper_ct2 import load_tiny_en

pytestmark = [
    pytest.mark.slow,
    pytest.mark.ci,
    pytest.mark.skipif(not installed(), reason="apt-get install fretsonfire-songs-muldjord fretsonfire-songs-sectoid"),
]


@pytest.fixture(scope="module")
def sung(tmp_path_factory):
    """90 s of chaos_god that are sung nearly throughout."""
    return load_audio(mix(SUNG["chaos_god"], tmp_path_factory.mktemp("sung") / "chaos_god.wav", 25, 90))


@pytest.fixture(scope="module")
def instrumental(tmp_path_factory):
    """The first minute of Metal madness, over whose opening Whisper says a video's goodbye."""
    return load_audio(mix(INSTRUMENTAL["metal_madness"], tmp_path_factory.mktemp("inst") / "metal.wav", 0, 60))


# (the whole file is in the ci tier: hearing the sung excerpt takes 30 s of the suite's 6 minutes on faster-whisper,
# 40 s on openai-whisper, and the lyric matrix, which .ci/run runs too, gates both backends on the whole recordings)
@pytest.fixture(scope="module", params=["faster-whisper", "openai-whisper"])
def asr(request, tmp_path_factory):
    return load_tiny_en(request.param, tmp_path_factory.mktemp("openai-whisper"))


@pytest.fixture(scope="module")
def heard(asr, sung):
    """What Whisper hears over the sung excerpt with no gate, and the lines musicvid keeps of it."""
    _, silero, heard = hear(asr, sung.samples, quiet=True)
    return heard, sung_lines(heard, silero, sung.info.duration)


def test_a_sung_recording_keeps_what_whisper_hears(asr, sung, heard):
    heard, lines = heard
    scenes = scenes_from_lines(lines, sung.info.duration)
    kept = kept_in_lyrics(heard, scenes)
    print(f"\n{asr.backend}: {kept} of {len(counted(heard))} segments heard kept in lyric scenes, {len(lines)} lines")
    assert len(counted(heard)) >= 8  # the excerpt is sung: Silero hears almost none of it
    assert kept >= 0.7 * len(counted(heard))
    assert sum(s.kind == "lyric" for s in scenes) >= 6


# (in the ci tier: a whole instrumental decoded twice is a minute and a half of the suite's 6 on openai-whisper, and
# half a minute on faster-whisper)
@pytest.mark.parametrize("asr", ["faster-whisper", "openai-whisper"], indirect=True)
def test_a_recording_heard_again_in_one_process_is_heard_the_same(asr, instrumental):
    """The temperature fallback samples from the seed whatever the model decoded before, so a song in a batch is
    heard as it is alone (a faster-whisper model once went on with its samples: "You", then nothing)."""
    first, again = (recognize(asr, instrumental.samples, "transcribe", "en", False) for _ in range(2))
    assert first == again


@pytest.mark.parametrize("asr", ["faster-whisper"], indirect=True)
def test_an_instrumental_gets_no_invented_lyrics(asr, instrumental):
    transcript = transcribe(asr, instrumental.samples, instrumental.info.sha256, quiet=True)
    scenes = scenes_from_lines(transcript.lines, instrumental.info.duration)
    invented = words_per_minute(scenes, instrumental.info.duration)
    print(f"\n{asr.backend}: {invented:.1f} invented words a minute: {[line.text for line in transcript.lines]}")
    assert invented <= 3


# (not faster-whisper's: its temperature fallback samples differently in each decode, so the lines heard move)
# Where they land is measured against hand annotations (benchmarks/jamendo.py), not against tiny.en's hearing: it
# misses lines the singer sings (a refrain sung more often than it wrote), and the alignment may place a known
# line in one of those instead (docs/lyrics.md, "The lyric matrix").
@pytest.mark.parametrize("asr", ["openai-whisper"], indirect=True)
def test_known_lyrics_of_a_recording_are_each_placed_in_order_where_it_is_sung(asr, sung, heard):
    _, lines = heard
    known = align_lyrics(asr, sung.samples, [line.text for line in lines], sung.info.sha256, quiet=True)
    assert " ".join(line.text for line in known.lines) == " ".join(line.text for line in lines)
    words = [w for line in known.lines for w in line.words]
    assert all(w.start <= w.end for w in words) and all(a.start <= b.start for a, b in zip(words, words[1:]))
    assert words[-1].end <= sung.info.duration + 0.01
    heard_lines = [line for line in known.lines if line.confidence]
    print(
        f"\n{asr.backend} aligned: {len(heard_lines)} of {len(known.lines)} lines heard, at {[line.start for line in known.lines]}"
    )
    assert len(heard_lines) >= 0.7 * len(known.lines)  # the audio gives evidence for the lines Whisper heard in it
    assert known.lines[0].start >= lines[0].start - 2.0  # not spread from the song's first second
