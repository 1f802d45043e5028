"""The `vipe` command (pyproject.toml's scripts) and `python -m vipe_core`: its command line (vipe_core.cli), where
Ctrl-C while the libraries import is one sentence too (vipe_core.errors.started)."""

from vipe_core.errors import started


def main() -> int:
    return started("vipe", _command_line, ending=".")


def _command_line():
    from vipe_core.cli import main as command_line

    return command_line


if __name__ == "__main__":
    raise SystemExit(main())
