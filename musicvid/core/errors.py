"""The ways a run can fail (or be stopped), each with its exit code; the message is one sentence for a person,
with its numbers written as people write them (number_text)."""


def number_text(value) -> str:
    """A value as messages and the page write it: 30 for 30.0, 12.5 as it is."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def either(choices) -> str:
    """Choices as a sentence names them: "720p, 1080p or 4k"."""
    words = [number_text(choice) for choice in choices]
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


class MusicvidError(Exception):
    exit_code = 1


class UserError(MusicvidError):
    """Bad input or usage: a file that is not audio, a broken storyboard, impossible settings."""

    exit_code = 2


class RenderError(MusicvidError):
    """Something failed while working on good input (ffmpeg, a model)."""

    exit_code = 1


class Cancelled(MusicvidError):
    """The person who started the job stopped it (the web page's Cancel button)."""

    exit_code = 1
