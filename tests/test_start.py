"""The commands as their console scripts start them (pyproject.toml): Ctrl-C while the command line's libraries
import, before its own handler is in place, is one sentence and exit 130, as it is later."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

# the command line started with Ctrl-C met in its first import of argparse (the parser's: musicvid.cli, vipe_core.options)
STOPPED_IN_AN_IMPORT = """
import builtins, sys
real = builtins.__import__
def stopped(name, *args, **kwargs):
    if name == "argparse":
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = stopped
from {module}.__main__ import main
sys.exit(main())
"""


@pytest.mark.parametrize("command, module, ending", [("musicvid", "musicvid", ""), ("vipe", "vipe_core", ".")])
def test_ctrl_c_while_the_libraries_import_is_one_sentence(command, module, ending):
    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[command] == f"{module}.__main__:main"
    code = STOPPED_IN_AN_IMPORT.format(module=module)
    done = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=120)
    said = f"{command}: interrupted; run the same command again to continue{ending}\n"
    assert (done.returncode, done.stderr, done.stdout) == (130, said, "")
