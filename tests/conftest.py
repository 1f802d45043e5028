import os

# Nothing in the tests may wait on a model hub that cannot answer.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import shutil  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from musicvid.assets import DEMO_LYRICS, DEMO_SONG  # noqa: E402
from musicvid.audio import ffmpeg_exe  # noqa: E402


@pytest.fixture
def demo_song(tmp_path) -> Path:
    """A private copy of the demo song (tests may cut or rename it)."""
    path = tmp_path / "demo.mp3"
    shutil.copyfile(DEMO_SONG, path)
    return path


@pytest.fixture
def demo_lyrics() -> Path:
    return DEMO_LYRICS


def make_tone(path: Path, seconds: float, *extra: str) -> Path:
    """A short synthetic song (a chord of sines) in whatever format `path`'s suffix names."""
    subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-y", "-f", "lavfi", "-i",
         f"sine=frequency=220:duration={seconds},volume=0.3", *extra, str(path)],
        check=True,
    )  # fmt: skip
    return path
