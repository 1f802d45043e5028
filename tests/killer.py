"""Kill a musicvid run as a crash or the OOM killer would (SIGKILL: no cleanup, no finally), at a moment
chosen by the test: just before the Nth atomic rename (or hard link) onto a path matching a pattern. A finished
artifact is then about to replace its name, and its temporary file is left behind for the rerun.

    python -m tests.killer [--log FILE] [--pause-until GO] PATTERN N -- musicvid arguments...
    (N = 0: never; FILE gets every renamed path, one per line, to choose kill points from; with GO the
    run is paused there instead, GO + ".paused" written, until the file GO exists)

In a Ray worker: env MUSICVID_TEST_KILL="PATTERN N" and worker_process_setup_hook="tests.killer.from_env".
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import signal
import sys
import threading
import time

ENV = "MUSICVID_TEST_KILL"


def install(pattern: str, n: int, log: str | None = None, pause_until: str | None = None) -> None:
    """This process killed (or paused) just before the Nth artifact placed on a path matching `pattern`: placed by a
    rename, or by a hard link (an output, which must not replace another run's)."""
    lock = threading.Lock()  # pictures are written by two threads
    seen = 0

    def placing(real):
        def place(src, dst, *args, **kwargs):
            before(dst)
            return real(src, dst, *args, **kwargs)

        return place

    def before(dst):
        nonlocal seen
        with lock:
            if log:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"{os.fspath(dst)}\n")
            if fnmatch.fnmatch(os.fspath(dst), pattern):
                seen += 1
                if seen == n and pause_until:
                    open(f"{pause_until}.paused", "w").close()
                    while not os.path.exists(pause_until):
                        time.sleep(0.01)
                elif seen == n:
                    os.kill(os.getpid(), signal.SIGKILL)

    os.replace, os.link = placing(os.replace), placing(os.link)


def from_env() -> None:
    pattern, n = os.environ[ENV].rsplit(" ", 1)
    install(pattern, int(n))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pattern")
    parser.add_argument("n", type=int)
    parser.add_argument("--log")
    parser.add_argument("--pause-until")
    parser.add_argument("musicvid", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    install(args.pattern, args.n, args.log, args.pause_until)
    from musicvid.cli import main as musicvid

    argv = args.musicvid[1:] if args.musicvid[:1] == ["--"] else args.musicvid
    return musicvid(argv)


if __name__ == "__main__":
    sys.exit(main())
