"""Errors a person can act on: each carries one sentence and the exit code the CLI returns."""


class VipeError(Exception):
    """Bad input or usage (a missing token, a file that is not what a stage expects): exit code 2."""

    exit_code = 2


class StageError(VipeError):
    """Good input, but the work failed (a service kept failing, training diverged): exit code 1."""

    exit_code = 1
