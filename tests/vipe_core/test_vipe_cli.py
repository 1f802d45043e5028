"""Every stage answers bad input with one sentence on stderr and exit code 2, never a traceback; a reader of standard
output that went away ends it quietly with 141, as musicvid's (vipe_core.errors.run_guarded)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from vipe_core.cli import STAGES, main

from .helpers import REPO, subprocess_env


def bad_inputs(tmp_path):
    (tmp_path / "lyrics").mkdir()
    (tmp_path / "lyrics" / "a.json").write_text("[1, 2]")
    (tmp_path / "clean.jsonl").write_text('{"song_id": "1", "title": "t", "artist": "a", "lines": ["x y"]}\n[1]\n')
    (tmp_path / "canvas").mkdir()
    (tmp_path / "canvas" / "1.json").write_text('{"elaborations": []}')
    (tmp_path / "data.parquet").write_text("not parquet")
    return {
        "collect": ["collect", "--artists", str(tmp_path / "missing.txt")],
        "filter": ["filter", str(tmp_path / "lyrics")],
        "label": ["label", str(tmp_path / "clean.jsonl"), "--api-key", "k", "--out", str(tmp_path / "out")],
        "build": ["build", str(tmp_path / "canvas"), "--out", str(tmp_path / "lc.parquet")],
        "train": ["train", str(tmp_path / "data.parquet"), "--out", str(tmp_path / "ckpt")],
        "evaluate": ["evaluate", str(tmp_path), str(tmp_path / "data.parquet")],
    }


@pytest.mark.parametrize("stage", ["collect", "filter", "label", "build", "train", "evaluate"])
def test_bad_input_is_one_line_and_exit_code_2(stage, tmp_path, capsys):
    assert main(bad_inputs(tmp_path)[stage]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vipe {stage}: ") and err.count("\n") == 1 and "Traceback" not in err


def test_python_dash_m_vipe_core_runs_the_cli(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "vipe_core", "filter", str(tmp_path / "nothing")],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    done = subprocess.run(
        [sys.executable, "-m", "vipe_core", "--help"],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    for stage in ("collect", "filter", "label", "build", "train", "evaluate"):
        assert stage in done.stdout


@pytest.mark.parametrize(
    "stage, module",
    [
        ("collect", "lyricsgenius"),
        ("label", "httpx"),
        ("build", "pandas"),
        ("train", "pyarrow"),
        ("evaluate", "profanity_check"),
    ],
)
def test_a_stage_without_the_training_extra_names_it_in_one_line_and_exit_code_2(
    stage, module, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, module, None)  # as where it is not installed: importing it fails
    assert main(bad_inputs(tmp_path)[stage]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vipe {stage}: this stage needs {module},") and err.count("\n") == 1
    assert err.rstrip().endswith("pip install 'musicvid[train]'")


def test_train_options_default_to_train_config():
    """One source for the training defaults: the command line reads TrainConfig's."""
    from dataclasses import MISSING, fields

    from vipe_core.options import build_parser
    from vipe_core.train_config import TrainConfig

    args = build_parser().parse_args(["train", "canvas.parquet"])
    given = [f for f in fields(TrainConfig) if hasattr(args, f.name) and f.default is not MISSING]
    assert {f.name for f in given} >= {"base", "context_size", "epochs", "lr", "warmup_steps", "mixed_precision"}
    assert all(getattr(args, f.name) == f.default for f in given)


def test_filter_options_default_to_filter_config():
    """One source for the filters' defaults: the command line reads FilterConfig's."""
    from dataclasses import fields

    from vipe_core.filters import FilterConfig
    from vipe_core.options import build_parser

    args = build_parser().parse_args(["filter", "lyrics"])
    given = [f for f in fields(FilterConfig) if hasattr(args, f.name)]
    assert {f.name for f in given} == {f.name for f in fields(FilterConfig)} - {"strip_headers", "english_only"}
    assert all(getattr(args, f.name) == f.default for f in given)
    assert (not args.keep_headers, not args.all_languages) == (FilterConfig.strip_headers, FilterConfig.english_only)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopping_signal_ends_a_stage_as_ctrl_c_does_in_one_line(number, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(STAGES, "filter", lambda args: os.kill(os.getpid(), number))
    assert main(["filter", str(tmp_path), "--out", str(tmp_path / "clean.jsonl")]) == 128 + number
    name = signal.Signals(number).name
    assert capsys.readouterr().err == f"vipe filter: stopped ({name}); run the same command again to continue.\n"


def test_a_help_whose_reader_went_away_ends_quietly_as_a_unix_tool():
    read, write = os.pipe()
    os.close(read)  # `vipe --help | head -1`, head gone before the help is written
    done = subprocess.run(
        [sys.executable, "-m", "vipe_core", "--help"],
        cwd=REPO,
        env=subprocess_env(),
        stdout=write,
        stderr=subprocess.PIPE,
    )
    os.close(write)
    assert done.returncode == 128 + signal.SIGPIPE and done.stderr == b""


def into_gone_reader(argv: list[str], buffering: int, monkeypatch) -> int:
    """`vipe ARGV`'s exit code, its standard output a pipe whose reader went away."""
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w", buffering=buffering) as pipe, monkeypatch.context() as patch:
        patch.setattr(sys, "stdout", pipe)
        return main(argv)


# buffered, as a terminal-less run's; line by line, where the write itself fails (and argparse's help ignores that)
@pytest.mark.parametrize("buffering", [-1, 1], ids=["buffered", "unbuffered"])
def test_a_stages_lost_output_is_141_where_its_reader_went_away_and_one_line_where_it_is_full(
    buffering, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(STAGES, "filter", lambda args: print("songs removed: 0"))
    argv = ["filter", str(tmp_path), "--out", str(tmp_path / "clean.jsonl")]
    assert into_gone_reader(argv, buffering, monkeypatch) == 128 + signal.SIGPIPE
    assert into_gone_reader(["filter", "--help"], buffering, monkeypatch) == 128 + signal.SIGPIPE
    assert capsys.readouterr().err == ""
    with open("/dev/full", "w", buffering=buffering) as full:  # (closed at no loss: its descriptor writes nowhere now)
        monkeypatch.setattr(sys, "stdout", full)
        assert main(argv) == 1
    said = "vipe: the work is done, but standard output cannot take it (No space left on device)\n"
    assert capsys.readouterr().err == said
