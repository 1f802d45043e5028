"""The ways a run can fail (or be stopped), each with its exit code; the message is one sentence for a person,
with its numbers written as people write them (number_text). And a failure for want of memory told from a broken
install, which it reads as (out_of_memory), and a write that ran out of room (out_of_room)."""

from __future__ import annotations

import errno
import logging
import os
import resource
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from vipe_core.atomic import temporary_of

# What a failed allocation says: torch's CPU allocator ("can't allocate memory"), strerror(ENOMEM) ("Cannot ...")
ALLOCATION_FAILED = ("can't allocate memory", "cannot allocate memory")
# What the loader says of a library it found no room to map (torch's, llvmlite's, an extension module's)
NOT_MAPPED = "failed to map segment from shared object"


def number_text(value) -> str:
    """A value as messages and the page write it: 30 for 30.0, 12.5 as it is, 100000000 as typed (not 1e+08)."""
    return f"{value:.15g}" if isinstance(value, float) else str(value)


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


def _ran_out(error: BaseException, limited: bool) -> bool:
    """Whether `error`, or one it was raised from or while handling (llvmlite's "Could not find/load shared object"
    over the loader's own), failed for want of memory."""
    seen = set()
    while error is not None and id(error) not in seen:  # (a chain may loop back)
        seen.add(id(error))
        text = str(error).lower()
        if (
            isinstance(error, MemoryError)
            or (isinstance(error, OSError) and error.errno == errno.ENOMEM)
            or any(said in text for said in ALLOCATION_FAILED)
            # under an address-space limit (else more likely a file system mounted noexec, or a bug): a library not
            # mapped, or C code whose allocation failed unsaid ("error return without exception set")
            or (limited and (NOT_MAPPED in text or isinstance(error, SystemError)))
        ):
            return True
        error = error.__cause__ or error.__context__
    return False


def out_of_memory(error: BaseException) -> UserError | None:
    """The error to say in place of `error` where it failed for want of the memory the process may use, naming its
    address-space limit where one is set (`ulimit -v`: importing torch or loading a model under one fails as a broken
    install would); None for any other, and for musicvid's own (which says itself, though raised while one for want
    of memory was handled)."""
    if isinstance(error, MusicvidError):
        return None
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    limited = limit != resource.RLIM_INFINITY
    if not _ran_out(error, limited):
        return None
    if not limited:
        return UserError("the process ran out of memory: free some and run the same command again to continue")
    return UserError(
        f"the process ran out of the memory it may use, its address-space limit of {limit / 2**30:.1f} GB (ulimit -v "
        f"{limit // 1024}): raise or lift that limit and run the same command again to continue"
    )


# What a write that ran out of room says, by its errno: a full disk, a used-up quota, a file size limit.
FULL = {
    errno.ENOSPC: ("the disk is full", "free some space"),
    errno.EDQUOT: ("the disk quota is used up", "free some space"),
    errno.EFBIG: ("a file outgrew the size limit (ulimit -f)", "raise the limit"),
}


def out_of_room(error: BaseException) -> UserError | None:
    """The error to say in place of `error` where a write ran out of room (a full disk, a quota, a size limit: FULL),
    naming the file being written (as its artifact where it was our temporary); None for any other."""
    if not (isinstance(error, OSError) and error.errno in FULL):
        return None
    full, remedy = FULL[error.errno]
    again = f"; {remedy} and run the same command again to continue"
    # a copy or a link names its source first and the file it writes second (shutil.copyfile's ENOSPC, os.link's)
    name = error.filename2 or error.filename
    if not name:
        return UserError(full + again)
    path = Path(os.fsdecode(name))
    written = path.with_name(temporary[1]) if (temporary := temporary_of(path)) else path
    return UserError(f"{full}, where {written} was being written{again}")


@contextmanager
def warnings_held() -> Iterator[None]:
    """The warnings this thread logs inside, held until the block ends: said then, unless it refuses the run (a
    UserError), whose one sentence is then all a person reads (a note on the lyrics it refuses is moot)."""
    logger, thread, held = logging.getLogger("musicvid"), threading.get_ident(), []

    def hold(record: logging.LogRecord) -> bool:
        if record.thread != thread or record.levelno < logging.WARNING:  # (another job's, on the page; progress)
            return True
        held.append(record)
        return False

    logger.addFilter(hold)
    try:
        yield
    except UserError:
        held.clear()
        raise
    finally:
        logger.removeFilter(hold)
        for record in held:
            logger.handle(record)
