"""The command lines' parser (both, `vipe` and `musicvid`, take it): a usage error is one sentence too. Not in
vipe_core.errors, which the commands import before Ctrl-C is said in a sentence: argparse's import comes after."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """A command line whose usage errors are one line and exit code 2, like every other bad input (argparse's own put
    its usage above them); `hint` may add to the line. An option is its whole name: argparse would take a prefix of one
    (`--max-jobs 3` as `--max-jobs-gb 3`, a bound the person never asked for), so none is taken."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message}{self.hint(message)} (see {self.prog} --help)\n")

    def hint(self, message: str) -> str:
        return ""
