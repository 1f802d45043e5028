"""The benchmark script still runs, in its smallest setting, and writes well-formed JSON."""

import json

from benchmarks.render import main


def test_render_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["--quick", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    run = results["stage_breakdown"][0]
    assert run["models"] == "tiny" and run["pictures_drawn"] > 0 and run["frames_per_second"] > 0
    assert {"denoise", "decode", "write frames", "mux"} <= set(run["stages"])
    assert abs(sum(run["share"].values()) - 1.0) < 1e-3
    assert all(v > 0 for v in run["peak_rss_mib"].values())
    assert [r["song_seconds"] for r in results["scaling"]] == [3]
    assert [r["batch_size"] for r in results["batch_sweep"]] == [1, 2]
    assert "Stage breakdown" in capsys.readouterr().out
