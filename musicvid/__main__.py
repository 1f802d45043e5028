"""The `musicvid` command (pyproject.toml's scripts) and `python -m musicvid`: its command line (musicvid.cli), where
Ctrl-C while the libraries import is one sentence too (vipe_core.errors.started)."""

from vipe_core.errors import started


def main() -> int:
    return started("musicvid", _command_line)


def _command_line():
    from musicvid.cli import main as command_line

    return command_line


if __name__ == "__main__":
    raise SystemExit(main())
