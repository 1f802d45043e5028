"""The front hall (musicvid.prepare): a render's checks, each done once and before any work, into the one Run every
stage takes; and a run that is refused or fails leaves the file system as it found it (its work directory taken only
once every check has passed, given back where it holds nothing but the lock)."""

import functools
import inspect
import os
import subprocess
import sys
from collections import Counter
from contextlib import contextmanager

import pytest
from PIL import Image

from musicvid.core.workdir import LOCK
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import make_tone, run

# Besides every function and method whose name starts with "check": what the front hall resolves once
RESOLVED_ONCE = {("musicvid.prepare", "default_output"), ("musicvid.core.workdir", "Workdir.of_song")}
# A setting's limits are its dataclass's invariant, checked wherever one is made (RenderSettings checks its fields
# as it is made: the command line's, a batch row's, the memory plan's batched copy), not a check of the run's files
# Checked once before any work, and once more as the output is placed: another run may have taken -o's folder as
# its work directory while this one rendered (musicvid.core.outputs.write_output)
AGAIN_AS_PLACED = {"check_outside_work_directories": 2}
INVARIANTS = {
    "check_field",
    "check_bounds",
    "check_text",
    "Checked.check_together",
    "RenderSettings.check_together",
    "SongRequest.check_together",
}


def checks_of_musicvid() -> dict:
    """Every check function of musicvid's loaded modules, by the object it is: where each module holds it, and
    its name."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("musicvid.") or module is None:
            continue
        for attribute, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == name:
                for method, function in vars(value).items():
                    function = function.__func__ if isinstance(function, classmethod) else function
                    if inspect.isfunction(function) and is_check(name, f"{attribute}.{method}"):
                        found.setdefault((value, method), f"{attribute}.{method}")
            elif inspect.isfunction(value) and is_check(value.__module__, value.__qualname__):
                found.setdefault((module, attribute), value.__qualname__)
    return found


def is_check(module: str, qualname: str) -> bool:
    if qualname in INVARIANTS:
        return False
    return qualname.split(".")[-1].startswith("check") or (module, qualname) in RESOLVED_ONCE


def count_calls(monkeypatch) -> Counter:
    """Calls of every check (checks_of_musicvid), by the check and what it was given."""
    calls = Counter()

    def counted(name, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            calls[(name, repr(args), repr(sorted(kwargs.items())))] += 1
            return function(*args, **kwargs)

        return wrapper

    for (holder, attribute), name in checks_of_musicvid().items():
        original = inspect.getattr_static(holder, attribute)
        if isinstance(original, classmethod):
            monkeypatch.setattr(holder, attribute, classmethod(counted(name, original.__func__)))
        else:
            monkeypatch.setattr(holder, attribute, counted(name, original))
    return calls


def storyboard_file(song, pinned) -> object:
    """A storyboard of `song` (3 s) as a person hands it in: two scenes with their prompts and sections (nothing
    is transcribed or elaborated), the second with a pinned picture."""
    scenes = [
        Scene(0, "lyric", 0.0, 1.5, "a light in the storm", "a lighthouse at night", 1, section="verse"),
        Scene(1, "lyric", 1.5, 3.0, "and the sea", "waves under the moon", 2, picture=str(pinned), section="verse"),
    ]
    path = song.with_name("board.json")
    path.write_text(Storyboard(SongAudio(3.0), "Song", "Artist", scenes=scenes).text())
    return path


@pytest.mark.slow
def test_no_check_is_done_twice_in_one_render(capsys, tmp_path, monkeypatch):
    import musicvid.pipeline  # noqa: F401  (every module a render uses, loaded before its checks are counted)

    song = make_tone(tmp_path / "song.wav", 3)
    pinned, reference = tmp_path / "pinned.png", tmp_path / "look.png"
    Image.new("RGB", (64, 64), (200, 40, 90)).save(pinned)
    Image.new("RGB", (64, 64), (20, 90, 200)).save(reference)
    argv = ["render", song, "--models", "tiny", "-q", "--fps", "2", "--storyboard", storyboard_file(song, pinned)]
    calls = count_calls(monkeypatch)
    code, out, err = run(capsys, *argv, "--reference", reference, "--workdir", tmp_path / "w", "--preview")
    assert code == 0, err
    twice = {call: n for call, n in calls.items() if n > AGAIN_AS_PLACED.get(call[0], 1)}
    assert twice == {}, "\n".join(f"{n} x {c[0]}{c[1][:150]}" for c, n in twice.items())
    done = Counter(name for name, _, _ in calls.elements())
    assert done["check_before_work"] == done["default_output"] == done["Workdir.of_song"] == 1
    assert done["check_picture"] == 2  # the pin and the reference, before any work


# --- a refused or failed run leaves the file system as it found it --------------------------------------------


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("found", ["an empty folder of a person's", "no folder", "no folder, nor the two above it"])
@pytest.mark.parametrize("end", ["refused", "failed", "interrupted"])
def test_a_run_that_ends_before_writing_gives_its_work_directory_back_as_it_found_it(
    capsys, tmp_path, monkeypatch, found, end
):
    song = make_tone(tmp_path / "song.wav", 2)
    lyrics = tmp_path / "words.txt"
    lyrics.write_text("[Chorus]\n\n[Verse 1]\n" if end == "refused" else "a light in the storm\n")
    workdir = {"no folder": tmp_path / "wd", "no folder, nor the two above it": tmp_path / "n1" / "n2" / "wd"}.get(
        found, tmp_path / "mine"
    )
    if found.startswith("an empty"):
        workdir.mkdir()
    before = files_under(tmp_path)
    if end != "refused":  # the lyrics stage ends the run, after the work directory is taken, before it is written
        failure = RuntimeError("a bug") if end == "failed" else KeyboardInterrupt()

        def fail(run):
            assert (workdir / LOCK).is_file()  # (taken by now)
            raise failure

        monkeypatch.setattr("musicvid.storyboard.make.get_transcript", fail)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", workdir)
    assert code == {"refused": 2, "failed": 1, "interrupted": 130}[end], err
    assert err.count("\n") == 1 and ("no lines of lyrics" in err if end == "refused" else True)
    assert files_under(tmp_path) == before  # no lock, no folder it made, above it or not
    # so the folder is still not musicvid's: a video a person keeps there later is never replaced
    if workdir.is_dir():
        (workdir / "video.mp4").write_bytes(b"mine")
        monkeypatch.undo()
        code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--workdir", workdir)
        assert code == 2 and "holds video.mp4, which musicvid did not make" in err
        assert (workdir / "video.mp4").read_bytes() == b"mine"


@pytest.mark.parametrize(
    "named, refusal",
    [
        ("n1/n2/wd", "lyrics file not found"),
        ("n1/n2/wd", "must name a video file"),
        (None, "lyrics file not found"),  # the default work directory, in musicvid-work/
        ("existing/n2/wd", "lyrics file not found"),  # a folder that was there stays
    ],
)
def test_a_run_refused_before_any_work_makes_no_folder(capsys, tmp_path, monkeypatch, named, refusal):
    monkeypatch.chdir(tmp_path)
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "existing").mkdir()
    before = files_under(tmp_path)
    bad = ["-o", "v.srt"] if "video" in refusal else ["--lyrics", "missing.lrc"]
    workdir = ["--workdir", tmp_path / named] if named else []
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", *bad, *workdir)
    assert code == 2 and refusal in err and err.count("\n") == 1
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("points_at", ["a person's file", "a person's folder", "nothing"])
def test_a_lock_file_that_is_a_link_is_not_musicvids_and_is_refused_in_one_sentence(capsys, tmp_path, points_at):
    song = make_tone(tmp_path / "song.wav", 2)
    theirs = tmp_path / "theirs"
    if points_at == "a person's file":
        theirs.write_text("a person's notes")
    elif points_at == "a person's folder":
        theirs.mkdir()
    workdir = tmp_path / "wd"
    workdir.mkdir()
    (workdir / LOCK).symlink_to(theirs)
    before = files_under(tmp_path)
    for command in ("render", "storyboard"):
        code, out, err = run(capsys, command, song, "--models", "tiny", "-q", "--workdir", workdir)
        assert code == 2 and f"holds {LOCK}, which musicvid did not make" in err and err.count("\n") == 1
    assert files_under(tmp_path) == before and (workdir / LOCK).is_symlink()
    if points_at == "a person's file":
        assert theirs.read_text() == "a person's notes"


# --- every file a run or a plan reads is read only once it is found to be a file ------------------------------


@contextmanager
def never_waited_on(fifo, seconds: float = 60):
    """A test that opens `fifo` to read it fails instead of hanging: after `seconds`, another process opens it to
    write (a reader waiting there then reads its end; a read that holds the interpreter's lock stops no process) and
    leaves a mark beside it, which the test finds."""
    mark = fifo.with_name(fifo.name + ".waited-on")
    opener = (
        f"import os, time; time.sleep({seconds})\n"
        f"try:\n    os.close(os.open({str(fifo)!r}, os.O_WRONLY | os.O_NONBLOCK))\n"
        f"except OSError:\n    pass\nelse:\n    open({str(mark)!r}, 'w').close()"
    )
    process = subprocess.Popen([sys.executable, "-c", opener])
    try:
        yield mark
    finally:
        process.kill()
        process.wait()


# Each file a command reads, as a named pipe (with what makes the command read it)
READ = [
    ("render", "--diffusion", "model.safetensors", ()),
    ("render", "--diffusion", "model", ()),
    ("render", "--lora", "style.safetensors", ()),
    ("render", "--fast-lora", "lcm.safetensors", ("--fast",)),
    ("render", "--upscaler", "x4.pth", ("--resolution", "720p")),
    ("render", "--scorer", "clip.safetensors", ()),
    ("render", "--lyrics", "words.lrc", ()),
    ("render", "--lyrics", "words.txt", ()),
    ("render", "--storyboard", "board.json", ()),
    ("render", "--reference", "look.png", ()),
    ("render", "SONG", "song.mp3", ()),
    ("storyboard", "--lyrics", "words.srt", ()),
    ("plan", "--diffusion", "model.safetensors", ()),
    ("plan", "--diffusion", "model", ()),
    ("plan", "--upscaler", "x4.pth", ("--resolution", "720p")),
    ("plan", "SONG", "song.mp3", ()),
]


@pytest.mark.parametrize("command, option, name, reads_it", READ)
def test_a_named_pipe_given_for_any_file_is_refused_not_waited_on(capsys, tmp_path, command, option, name, reads_it):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    song = fifo if option == "SONG" else make_tone(tmp_path / "song.wav", 2)
    given = [] if option == "SONG" else [option, fifo]
    with never_waited_on(fifo) as waited:
        code, out, err = run(
            capsys, command, song, "--models", "tiny", "-q", *given, *reads_it, "--workdir", tmp_path / "wd"
        )
    assert not waited.exists() and code == 2 and err.count("\n") == 1, err
    assert any(s in err for s in ("not a regular file", "is a single file", "neither a file", "cannot size")), err
