"""A Ray batch's actors (musicvid.batch.engines): one that dies twice on a song fails that song alone, a new actor
taking the songs after it; models the actors refuse are said before any song, as the local engine says them."""

import json
from pathlib import Path

import pytest

from tests.helpers import make_tone, run_batch

pytestmark = [pytest.mark.slow, pytest.mark.ci]


@pytest.fixture
def songs(tmp_path) -> Path:
    folder = tmp_path / "songs"
    folder.mkdir()
    for seconds, name in enumerate(("Band - First", "Band - Second", "Band - Third"), 2):  # (three songs, not one)
        make_tone(folder / f"{name}.wav", seconds)
    (tmp_path / "lyrics.lrc").write_text("[00:00.00]one\n[00:01.00]two\n")
    return folder


def on_ray(songs: Path, *options, kill: str | None = None) -> int:
    """The batch of `songs` on a Ray started for it, one actor; `kill`: tests.killer's pattern and count in every
    actor process (a restarted one counts anew)."""
    ray = pytest.importorskip("ray")
    env = {"MUSICVID_TEST_KILL": kill, "PYTHONPATH": str(Path(__file__).parents[1])} if kill else {}
    hook = {"worker_process_setup_hook": "tests.killer.from_env"} if kill else {}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env, **hook})
    try:
        common = ["--models", "tiny", "--fps", "2", "--size", "64x64", "-q", "--workdir", songs.parent / "work"]
        common += ["--lyrics", songs.parent / "lyrics.lrc"]
        return run_batch(songs, "-o", songs.parent / "out", "--engine", "ray", "--workers", "1", *common, *options)
    finally:
        ray.shutdown()


def test_an_actor_that_dies_twice_on_a_song_fails_that_song_alone_and_a_new_one_makes_the_rest(songs):
    assert on_ray(songs, kill="*/Band - Second/*.png 1") == 1
    report = json.loads((songs.parent / "out" / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["done", "failed", "done"]
    assert report[1]["error"].startswith("worker failed: ")
    assert (songs.parent / "out" / "Band - Third.mp4").stat().st_size > 0


def test_models_the_actors_refuse_are_said_before_any_song(songs, capsys):
    assert on_ray(songs, "--device", "mps") == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1] == "musicvid: --device mps is not a device here; this machine has auto, cpu", said
    assert not (songs.parent / "out" / "Band - First.mp4").exists()
