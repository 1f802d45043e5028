"""Options that act only where a run draws a reference picture (--ip-adapter, --reference-strength): refused by a run
that draws none, by `plan` as a render would be, and by a batch where no row draws one, before any work."""

import pytest

from musicvid.core.errors import UserError
from musicvid.prepare import check_before_work
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import reference_only
from musicvid.settings.song import SongRequest
from tests.helpers import make_tone, quick, referencing_board, run, work_directory
from tests.test_batch_hostile2 import faked_renders, report_of, run_batch
from tests.test_model_checks import refused_before_the_work

STRENGTH, ADAPTER = "--reference-strength", "--ip-adapter"
SAID = "only {} with --reference, or a storyboard whose scenes name their own reference pictures, and {}"


@pytest.fixture
def song(tmp_path):
    return make_tone(tmp_path / "song.wav", 2)


def timed(song):
    """The song, the tiny models and a timed line beside it (Whisper skipped): a storyboard's or plan's arguments."""
    song.with_suffix(".lrc").write_text("[00:00.50]a light in the storm\n")
    return [song, "--models", "tiny", "--lyrics", song.with_suffix(".lrc")]


def test_the_options_named_are_those_given():
    assert reference_only({}, ModelChoice()) == ()
    assert reference_only({"reference_strength": 0.6}, ModelChoice()) == (STRENGTH,)  # (the default's value, given)
    both = reference_only({"reference_strength": 0.2, "steps": 4}, ModelChoice(ip_adapter="mine.safetensors"))
    assert both == (STRENGTH, ADAPTER)


@pytest.mark.parametrize("options", [(ADAPTER,), (STRENGTH,), (STRENGTH, ADAPTER)])
def test_a_run_that_draws_no_reference_refuses_them_and_one_that_draws_any_takes_them(tmp_path, song, options):
    def checked(settings=None, **request):
        request = SongRequest(song=song, **{"workdir": tmp_path / "w", **request})
        settings = settings or RenderSettings()
        return check_before_work(request, PRESETS["tiny"], settings, video=False, reference_only=options)

    verb, them = ("acts", "it") if len(options) == 1 else ("act", "them")
    said = f"^{' and '.join(options)} {SAID.format(verb, 'this run draws none')}: give one, or leave {them} out$"
    with pytest.raises(UserError, match=said):
        checked()
    board = referencing_board(tmp_path, song, 2.0)
    checked(RenderSettings(reference=tmp_path / "ref.png"))
    checked(storyboard_file=board)
    kept = work_directory(tmp_path / "kept")
    (kept / "storyboard.json").write_text(board.read_text())  # the work directory's own, which the run may draw
    checked(workdir=kept)


@pytest.mark.parametrize(
    "command, option",
    [
        ("render", [STRENGTH, "0.8"]),
        ("render", [ADAPTER, TINY]),
        ("keyframes", [STRENGTH, "0"]),
        ("plan", [STRENGTH, "1"]),
    ],
)
def test_each_command_refuses_them_before_any_work(capsys, tmp_path, song, command, option):
    said = f"{option[0]} {SAID.format('acts', 'this run draws none')}"
    if command == "render":
        return refused_before_the_work(capsys, tmp_path, quick(song, *option), said)
    first = ["storyboard", "--keyframes"] if command == "keyframes" else ["plan"]
    code, out, err = run(capsys, *first, *timed(song), *option, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and said in err and not out, err
    assert not (tmp_path / "w").exists()


def test_the_default_strength_unsaid_is_no_choice(capsys, tmp_path, song):
    code, out, err = run(capsys, "plan", *timed(song), "--workdir", tmp_path / "w")
    assert code == 0 and "song.wav" in out, err


def test_a_batch_refuses_them_where_no_row_draws_a_reference_and_takes_them_where_one_does(
    tmp_path, capsys, monkeypatch
):
    rendered = faked_renders(monkeypatch)
    make_tone(tmp_path / "a.wav", 1)
    make_tone(tmp_path / "b.wav", 1)
    (tmp_path / "s.csv").write_text("path\na.wav\nb.wav\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out", STRENGTH, "0.3")
    assert code == 2 and err.count("\n") == 1, err
    assert f"{STRENGTH} {SAID.format('acts', 'no row of the batch draws one')}" in err
    assert not (tmp_path / "out").exists() and rendered == []
    referencing_board(tmp_path, tmp_path / "b.wav", 1.0)  # (its ref.png: b's row draws with it)
    (tmp_path / "s.csv").write_text("path,reference\na.wav,\nb.wav,ref.png\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out", STRENGTH, "0.3", ADAPTER, TINY)
    assert code == 0, err
    assert rendered == [1, 2] and [row["status"] for row in report_of(tmp_path / "out")] == ["done", "done"]
