"""evaluate: deterministic generations, CIDEr-D per context size, profanity by bucket."""

from __future__ import annotations

import json

import pytest

from vipe_core.cli import main
from vipe_core.evaluate import EvalConfig, run_evaluate
from vipe_core.guards import LOCK_FILE

pytestmark = pytest.mark.slow


def test_evaluate_scores_each_context_size_and_buckets_profanity(trained, canvas_parquet, tmp_path, one_thread):
    out, _ = trained
    config = EvalConfig(
        checkpoints=[str(out)],
        data=str(canvas_parquet),
        contexts=[0, 1, 3],
        limit=12,
        batch_size=8,
        max_new_tokens=16,
        out=str(tmp_path / "eval"),
        progress=False,
    )
    results = run_evaluate(config)
    assert [(r["context"], r["examples"]) for r in results["cider_d"]] == [(0, 12), (1, 12), (3, 12)]
    by_context = {r["context"]: r["cider_d"] for r in results["cider_d"]}
    assert by_context[1] > 3.0  # the context size it was trained with: close to the teacher
    assert all(0 <= score <= 10 for score in by_context.values())
    profanity = results["profanity"]
    assert [b["range"] for b in profanity["buckets"]] == [[0.0, 0.2], [0.2, 0.4], [0.4, 0.6], [0.6, 0.8], [0.8, 1.0]]
    assert sum(b["lines"] for b in profanity["buckets"]) == 12
    assert set(profanity["rate_above_0.5"]) == {"lyrics", "teacher", str(out)}
    assert json.loads((tmp_path / "eval" / "results.json").read_text())["cider_d"] == results["cider_d"]

    # Deterministic: a fresh run (no journal to reuse) gives the same scores.
    again = run_evaluate(EvalConfig(**{**config.__dict__, "out": str(tmp_path / "again"), "profanity": False}))
    assert again["cider_d"] == results["cider_d"]


def test_evaluate_resumes_from_its_journal(trained, canvas_parquet, tmp_path, one_thread):
    out, _ = trained
    config = EvalConfig(
        checkpoints=[str(out / "best")],
        data=str(canvas_parquet),
        limit=6,
        max_new_tokens=16,
        out=str(tmp_path / "eval"),
        profanity=False,
        progress=False,
    )
    first = run_evaluate(config)
    journal = next((tmp_path / "eval").glob("generations-*-ctx1.jsonl"))
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + '\n{"key": "torn')  # as if killed mid-write
    assert run_evaluate(config)["cider_d"] == first["cider_d"]
    assert len(journal.read_text().splitlines()) == 6  # 3 kept, the torn line cut, 3 generated again


def test_evaluate_command_prints_a_table(trained, canvas_parquet, tmp_path, capsys, one_thread):
    out, _ = trained
    code = main(
        [
            "evaluate",
            str(out),
            str(canvas_parquet),
            "--limit",
            "4",
            "--max-new-tokens",
            "12",
            "--out",
            str(tmp_path / "eval"),
            "--quiet",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "CIDEr-D" in printed and "mean profanity score by bucket" in printed
    assert main(["evaluate", str(canvas_parquet)]) == 2
    assert main(["evaluate", str(tmp_path), str(canvas_parquet)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "not a trained checkpoint" in err[1]


def test_a_run_folder_a_kill_left_without_best_is_said_so(tmp_path, canvas_parquet, capsys):
    run = tmp_path / "run"
    (run / ".best.old.abcdefgh").mkdir(parents=True)  # best/ moved aside by a save the kill cut between its renames
    (run / LOCK_FILE).touch()
    assert main(["evaluate", str(run), str(canvas_parquet)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run} holds no best/" in err and "run that `vipe train` again" in err
