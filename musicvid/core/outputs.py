"""What a render writes outside its work directory (the video, its .srt, its .ass with captions), and
whether it may replace what is already at those names.

An output replaces only a file that musicvid wrote there for this song: the work directory's
outputs.json records, per output path, the sizes and digests of the last contents its runs wrote
there, each recorded before it is renamed into place (so a run killed between the two still owns its
file). Any other file at an output's name (a hand-made .srt, another song's video, a person's video at
the name `-o` gives) is refused before any work, in one sentence, unless the person gives --overwrite.
No input is ever an output, whatever its name, and no output lies in a work directory (this run's or
another's: musicvid.core.workdir).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import (
    check_not_inputs,
    check_output,
    check_video_name,
    file_sha256,
    parse_json,
    resolved,
)
from musicvid.core.workdir import Workdir, check_outside_work_directories
from vipe_core.atomic import TEMPORARY_EXTRA_BYTES, new_temporary, write_json

KEPT_VERSIONS = 4  # contents remembered per output: enough for a run killed between record and rename


def check_name_length(path: Path) -> None:
    """Refuse a name too long to write through a temporary beside it (the file system's limit, less
    what a temporary's name adds)."""
    try:
        most = os.pathconf(next(p for p in (path.parent, *path.parents) if p.exists()), "PC_NAME_MAX")
    except (OSError, ValueError, StopIteration):
        most = 255
    if len(os.fsencode(path.name)) > most - TEMPORARY_EXTRA_BYTES:
        raise UserError(
            f"the file name {path.name[:40]}… is too long ({len(os.fsencode(path.name))} bytes; musicvid writes "
            f"names of at most {most - TEMPORARY_EXTRA_BYTES}): give -o a shorter one"
        )


def named_file(video: Path) -> Path:
    """The video's path, refused where it names no file: `-o ''` is Path('.'), `-o /` the root."""
    if not video.name or video.name == "..":
        raise UserError(f"-o names no file, only the folder {str(video)!r}: give the video's file name, e.g. video.mp4")
    return video


def check_outputs(outputs: list[Path], inputs: dict[str, Path]) -> None:
    """Refuse, before any work, outputs (the video first) of which a name is too long, cannot be written, is one of
    the `inputs` (what each is -> its path), or where the video's is no video name (one in a work directory:
    Workdir.check_apart)."""
    for path in outputs:
        check_name_length(path)
        check_output(path)
    check_not_inputs(outputs, inputs)
    if outputs:
        check_video_name(outputs[0])


# --- what a work directory's runs wrote ---------------------------------------------------------


def _record(workdir: Workdir) -> dict[str, list]:
    """outputs.json: resolved output path -> [[size, sha256], ...], the newest last (a broken record is
    an empty one: then nothing is ours, and nothing is replaced without --overwrite)."""
    try:
        data = parse_json(workdir.outputs.read_text(encoding="utf-8"), str(workdir.outputs))
    except (OSError, UnicodeDecodeError, UserError):
        return {}
    written = data.get("written") if isinstance(data, dict) else None
    return written if isinstance(written, dict) else {}


def written_here(path: Path, workdir: Workdir) -> bool:
    """Whether the file at `path` is one that a run of `workdir` wrote there (its size, then its hash)."""
    versions = _record(workdir).get(str(resolved(path)), [])
    size = path.stat().st_size
    sized = [v for v in versions if isinstance(v, list) and len(v) == 2 and v[0] == size]
    return bool(sized) and any(v[1] == file_sha256(path) for v in sized)


def check_replaceable(paths: list[Path], workdir: Workdir, overwrite: bool) -> None:
    """Refuse, before any work, to replace a file at one of `paths` that musicvid did not write there for
    this song (as `workdir` records), unless `overwrite`."""
    for path in paths:
        if overwrite or not (path.exists() or path.is_symlink()):
            continue
        if not _ours(path, workdir):
            raise UserError(
                f"{path} exists and musicvid did not write it for this song: give --overwrite to replace it, or "
                "-o another name"
            )


def remember(workdir: Workdir, output: Path, content: Path) -> None:
    """Record in `workdir` that `content` is about to be renamed onto `output`."""
    record = _record(workdir)
    versions = [v for v in record.get(str(resolved(output)), []) if isinstance(v, list)]
    record[str(resolved(output))] = [*versions, [content.stat().st_size, file_sha256(content)]][-KEPT_VERSIONS:]
    write_json(workdir.outputs, {"written": record})


def write_output(
    workdir: Workdir, output: Path, overwrite: bool, text: str | None = None, copy_of: Path | None = None
) -> None:
    """`output` written with `text`, or as a copy of the file `copy_of`, recorded as ours before it is
    placed. Unless `overwrite`, it is placed only where the name is still free or ours: another run may have
    written there since the check before any work (a hard link never replaces; a file system without them is
    checked again just before the rename)."""
    check_outside_work_directories(output, workdir.root)  # again: another run may have taken -o's folder since
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_temporary(output)
    try:
        if copy_of is not None:
            shutil.copyfile(copy_of, tmp)
        else:
            tmp.write_text(text or "", encoding="utf-8")
        remember(workdir, output, tmp)
        if overwrite or _ours(output, workdir):
            os.replace(tmp, output)
            return
        try:
            os.link(tmp, output)
        except FileExistsError:
            raise UserError(
                f"{output} was written by something else while this render ran, and is left as it is: render with "
                "-o another name (the work directory holds the finished video, so it is done at once)"
            ) from None
        except OSError:
            check_replaceable([output], workdir, overwrite)
            os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)


def _ours(output: Path, workdir: Workdir) -> bool:
    """Whether a file of this song's, which a run of `workdir` wrote, is at `output`."""
    return output.is_file() and not output.is_symlink() and written_here(output, workdir)
