"""Rendering needs none of the training stack: its dependencies are the `train` extra (pyproject.toml)."""

import json
import subprocess
import sys

import pytest

TRAIN_EXTRA = {"lyricsgenius", "pandas", "pyarrow", "profanity_check"}
TRAINING_STACK = {
    "vipe_core.collect",
    "vipe_core.teacher",
    "vipe_core.chat",
    "vipe_core.canvas",
    "vipe_core.train",
    "vipe_core.evaluate",
}
# Gradio imports pandas (and pandas pyarrow, where it is installed) for tables of its own.
GRADIOS_OWN = {"pandas", "pyarrow"}

IMPORTED = """
import json, sys
def imported():
    return sorted({name.partition('.')[0] for name in sys.modules} | set(sys.modules))
import musicvid.cli, musicvid.pipeline
render = imported()
import ui.app
print(json.dumps([render, imported()]))
"""


@pytest.mark.ci  # (three front doors imported in processes of their own: eleven seconds of the suite's 6 minutes)
def test_the_front_doors_import_nothing_of_the_training_extra():
    done = subprocess.run([sys.executable, "-c", IMPORTED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    render, page = (set(names) for names in json.loads(done.stdout))
    assert "musicvid.pipeline" in render and "ui.app" in page
    assert not render & (TRAIN_EXTRA | TRAINING_STACK)
    assert not page & (TRAIN_EXTRA - GRADIOS_OWN | TRAINING_STACK)
