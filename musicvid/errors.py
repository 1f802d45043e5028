"""The two ways a run can fail, each with its exit code; the message is one sentence for a person."""


class MusicvidError(Exception):
    exit_code = 1


class UserError(MusicvidError):
    """Bad input or usage: a file that is not audio, a broken storyboard, impossible settings."""

    exit_code = 2


class RenderError(MusicvidError):
    """Something failed while working on good input (ffmpeg, a model)."""

    exit_code = 1
