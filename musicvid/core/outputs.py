"""What a render writes outside its work directory (the video, in the container its name says; its .srt; its
.ass with captions), and whether it may replace what is already at those names.

An output replaces only a file that musicvid wrote there for this song: the work directory's
outputs.json records, per path, the sizes and digests of the last contents its runs wrote there (its
storyboard.json's too), each recorded before it is renamed into place (so a run killed between the two
still owns its file). A version holding a person's edits (a storyboard.json built on them and written
back: musicvid.storyboard.kept) is recorded marked so, and is never musicvid's own to replace without a
copy. Musicvids older than those marks recorded such a write-back unmarked, and one of them may rewrite the record
still (an older version on a newer work directory): so outputs.json carries a format mark, and a record without it
proves no storyboard.json its own (they are read as holding edits: set aside, never deleted). Any other file at an
output's name (a hand-made .srt, another song's video, a person's video at the name `-o` gives) is refused before
any work, in one sentence, unless the person gives --overwrite; so is a sidecar (.srt, .ass) written beside another
video of the same name stem still there (`v.srt` of `v.mp4`, for `-o v.mkv`), which would then no longer fit that
video.
No input is ever an output, whatever its name, and no output lies in a work directory (this run's or
another's: musicvid.core.workdir).
"""

from __future__ import annotations

import glob
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from musicvid.core import ffmpeg
from musicvid.core.errors import UserError
from musicvid.core.files import (
    VIDEO_SUFFIXES,
    check_not_inputs,
    check_output,
    check_video_name,
    file_sha256,
    parse_json,
    resolved,
)
from musicvid.core.paths import is_folder, printable
from musicvid.core.workdir import WORK_ROOT, Workdir, check_outside_work_directories, is_work_directory
from vipe_core.atomic import TEMPORARY_EXTRA_BYTES, new_temporary, write_json

KEPT_VERSIONS = 4  # contents remembered per output: enough for a run killed between record and rename
EDITS = {"edits": True}  # the mark of a version holding a person's edits: a dict, so never taken for a video's path
FORMAT = 2  # outputs.json's "format" as this version writes it: its unmarked versions are musicvid's own (module doc)


def check_name_length(path: Path, advice: str = "give -o a shorter one") -> None:
    """Refuse a name too long to write through a temporary beside it (the file system's limit, less
    what a temporary's name adds), saying what to do (`advice`)."""
    try:
        most = os.pathconf(next(p for p in (path.parent, *path.parents) if p.exists()), "PC_NAME_MAX")
    except (OSError, ValueError, StopIteration):
        most = 255
    if len(os.fsencode(path.name)) > most - TEMPORARY_EXTRA_BYTES:
        raise UserError(
            f"the file name {path.name[:40]}… is too long ({len(os.fsencode(path.name))} bytes; musicvid writes "
            f"names of at most {most - TEMPORARY_EXTRA_BYTES}): {advice}"
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
    for n, path in enumerate(outputs):
        check_name_length(path)
        if n and is_folder(path, "output"):  # (not -o's name: its .srt's, its .ass')
            raise UserError(
                f"{path}, where the video's {path.suffix} goes beside it, is a folder: give -o another name"
            )
        check_output(path)
    check_not_inputs(outputs, inputs)
    if outputs:
        check_video_name(outputs[0])


# --- what a work directory's runs wrote ---------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """A version of a file: its SHA-256, and whether it holds a person's edits."""

    sha256: str
    edits: bool


def _record(workdir: Workdir) -> dict[str, list]:
    """outputs.json: resolved output path -> [[size, sha256], ...], the newest last; a sidecar's versions also
    name the resolved video each was written beside, [size, sha256, video], and one holding a person's edits ends in
    EDITS, [size, sha256, EDITS]; the folder of its own files recorded (_own_root), else "root", the work directory's
    resolved path (an edited one is not trusted), is where the keys were written, so that a copy (`cp -r`) reads its
    own files' versions at its own paths (a
    broken record is an empty one: then nothing is ours, and nothing is replaced without --overwrite). A record
    without this version's format mark (module doc) has its storyboard.json's versions read marked as holding
    edits."""
    try:
        data = parse_json(workdir.outputs.read_text(encoding="utf-8"), str(workdir.outputs))
    except (OSError, UnicodeDecodeError, UserError):
        return {}
    written = data.get("written") if isinstance(data, dict) else None
    if not isinstance(written, dict):
        return {}
    here, root = str(resolved(workdir.root)), data.get("root")
    root = _own_root(written, workdir) or (os.path.normpath(root) if isinstance(root, str) and root else None)
    if root is not None and root != here:  # a copied or moved work directory: its own files' keys move with it
        written = {here + key[len(root) :] if key.startswith(root + os.sep) else key: v for key, v in written.items()}
    board = str(resolved(workdir.storyboard))
    if data.get("format") != FORMAT and isinstance(written.get(board), list):
        marked = [v if not isinstance(v, list) or EDITS in v[2:] else [*v, EDITS] for v in written[board]]
        written = {**written, board: marked}
    return written


def _own_root(written: dict, workdir: Workdir) -> str | None:
    """Where a record was written: the folder of the storyboard.json or transcript.json it records, the work
    directory's own files (its outputs are videos and their sidecars); None where it records neither."""
    own = {workdir.storyboard.name, workdir.transcript.name}
    return next((os.path.dirname(key) for key in written if os.path.basename(key) in own), None)


def _versions(path: Path, workdir: Workdir) -> list[list]:
    """The versions `workdir` records at `path`, the newest last (those of a record from before sidecars named
    their video, or before edits were marked, too)."""
    versions = _record(workdir).get(str(resolved(path)), [])
    return [v for v in versions if _well_formed(v)]


def _version(path: Path, workdir: Workdir) -> list | None:
    """The newest version `workdir` records of the file at `path` that its contents match (its size, then its
    hash); None where a run of `workdir` did not write them there."""
    size = path.stat().st_size
    sized = [v for v in _versions(path, workdir) if v[0] == size]
    digest = file_sha256(path) if sized else None
    return next((v for v in reversed(sized) if v[1] == digest), None)


def written_here(path: Path, workdir: Workdir) -> bool:
    """Whether the file at `path` is musicvid's own: one that a run of `workdir` wrote there holding no person's
    edits (so replaced without a copy set aside)."""
    version = _version(path, workdir)
    return version is not None and EDITS not in version[2:]


def written_before(path: Path, workdir: Workdir) -> bool:
    """Whether a run for an earlier version of this song wrote the file at `path` as it is, holding no person's edits:
    a default work directory beside `workdir` of the song's name and another audio's hash (`<stem>-<10 hex>`; the song
    retagged or replaced since) records exactly its bytes there."""
    stem = workdir.root.name.rpartition("-")[0]
    others = workdir.root.parent.glob(glob.escape(stem) + "-" + "[0-9a-f]" * 10)
    return _is_file(path) and any(written_here(path, Workdir(root)) for root in others if root != workdir.root)


def made_by_a_run(path: Path, folders: list[Path], at_its_name: bool = False) -> Workdir | None:
    """The work directory, among those in `folders` (each a folder of work directories: musicvid-work/), one of whose
    runs wrote the file at `path` as it is (no person's edits), under any name: a copy, a hard link or a file moved
    since is found by its bytes (recorded_anywhere); with `at_its_name`, there alone (written_here: a person's lyrics
    .srt has the bytes of the captions a run made of them). None where none did: a song, a person's file."""
    if not _is_file(path):
        return None
    made = written_here if at_its_name else recorded_anywhere
    for folder in folders:
        try:
            roots = sorted(root for root in folder.iterdir() if root.is_dir() and not root.is_symlink())
        except OSError:
            continue
        found = next((Workdir(root) for root in roots if made(path, Workdir(root))), None)
        if found is not None:
            return found
    return None


def check_made_by_no_run(song: Path, workdir: Path | None) -> None:
    """Refuse a song that is one of musicvid's own files (no output is ever an input): one in a work directory, or a
    video a run wrote (video_made_by_a_run: among the work directories of musicvid-work/, and --workdir's beside
    it), under any name."""
    folder = next((f for f in resolved(song).parents if is_work_directory(f)), None)
    if folder is not None:
        raise UserError(f"{song} lies in the work directory {folder}, which holds musicvid's own files, not a song")
    folders = [WORK_ROOT, *([workdir.parent] if workdir else [])]
    if may_be_a_video(song) and (made := video_made_by_a_run(song, folders)) is not None:
        raise UserError(made)


def video_made_by_a_run(song: Path, folders: list[Path]) -> str | None:
    """The sentence a song that `may_be_a_video` is refused with where one of musicvid's runs wrote it (made_by_a_run,
    among the work directories in `folders`): no output is ever an input; None for any other file."""
    workdir = made_by_a_run(song, folders)
    if workdir is None:
        return None
    recorded = workdir.song()
    return not_a_song(song, recorded[0] if recorded and recorded[0] else f"the song of {workdir.root}")


def not_a_song(song: Path, made_for: str) -> str:
    return f"{printable(str(song))} is a video musicvid made for {printable(made_for)}, not a song"


def may_be_a_video(path: Path) -> bool:
    """Whether the file is named as a video, or held in a container musicvid writes its videos in, whatever its name
    ("a.mp4" copied as "a.mp3"): MP4 and QuickTime open with an 'ftyp' box (as do .m4a songs, then looked up as a
    video would be), Matroska with its EBML mark."""
    if path.suffix.lower() in VIDEO_SUFFIXES:
        return True
    try:
        if not path.is_file():  # (a pipe would wait for a writer; it fails as a song at its turn)
            return False
        with path.open("rb") as file:
            head = file.read(8)
    except OSError:  # (a song that cannot be read fails as one)
        return False
    return head[4:8] == b"ftyp" or head[:4] == b"\x1a\x45\xdf\xa3"


def recorded_anywhere(path: Path, workdir: Workdir) -> bool:
    """Whether `workdir` records, at any output's name, a version (no person's edits) with the bytes of the file at
    `path`: sizes compared first, so a file is hashed only where one matches (and once a process: file_sha256)."""
    size = path.stat().st_size
    sized = [v for vs in _record(workdir).values() if isinstance(vs, list) for v in vs if _plain(v) and v[0] == size]
    return bool(sized) and file_sha256(path) in (v[1] for v in sized)


def _well_formed(version) -> bool:
    """Whether a recorded version is one this module writes: [size, sha256], then a video's path, EDITS, or both."""
    return isinstance(version, list) and 2 <= len(version) <= 4


def _plain(version) -> bool:
    """Whether a recorded version is well formed and holds no person's edits."""
    return _well_formed(version) and EDITS not in version[2:]


def take_over(paths: list[Path], workdir: Workdir, owner: Workdir | None = None) -> None:
    """Record in `workdir` the files at `paths` (a video, then its sidecars) that a run for an earlier version of this
    song wrote (written_before), or that a run of `owner` (this song's work directory in another folder) wrote, as
    this song's own, so that its render replaces them (write_output): still only where their bytes are the ones
    recorded when it does, so a file changed since (a person's edit) is never replaced."""
    for path in paths:
        if written_here(path, owner) if owner is not None else written_before(path, workdir):
            remember(workdir, path, path, beside=paths[0] if path != paths[0] else None)


def last_written(path: Path, workdir: Workdir) -> Version | None:
    """The version a run of `workdir` last wrote at `path` (recorded last), whether or not it is still there; None
    where none is recorded."""
    versions = _versions(path, workdir)
    return Version(versions[-1][1], EDITS in versions[-1][2:]) if versions else None


def changed_since_written(path: Path, workdir: Workdir) -> bool:
    """Whether the file at `path` is not the version a run of `workdir` last wrote there, where one is recorded (an
    older musicvid's work directory records none: its file is taken as written): a person's edit."""
    last = last_written(path, workdir)
    return path.is_file() and last is not None and file_sha256(path) != last.sha256


def beside_another(path: Path, video: Path, workdir: Workdir) -> Path | None:
    """The video that the sidecar at `path`, as a run of `workdir` wrote it, was written beside, where that is
    not `video` and is still there; None otherwise. A version from before sidecars named their video is taken as
    written beside any video of its name stem that the record holds (the older run recorded that too): claimed for
    another, it would no longer fit that one."""
    version = _version(path, workdir)
    if version is None:
        return None
    stem = resolved(path).with_suffix("")
    videos = [Path(v) for v in version[2:] if isinstance(v, str)] or [
        Path(k)
        for k in _record(workdir)
        if Path(k).with_suffix("") == stem and Path(k).suffix.lower() in VIDEO_SUFFIXES
    ]
    return next((v for v in videos if v != resolved(video) and (v.exists() or v.is_symlink())), None)


def check_replaceable(paths: list[Path], workdir: Workdir, overwrite: bool) -> None:
    """Refuse, before any work, to replace a file at one of `paths` (a video, then its sidecars) that musicvid did
    not write there for this song, or wrote beside another video (as `workdir` records), unless `overwrite`."""
    if overwrite:
        return
    for path in paths:
        _check_replaceable(path, paths[0], workdir)


def _check_replaceable(path: Path, video: Path, workdir: Workdir) -> None:
    """Refuse to replace the file at `path`, written beside `video` (itself, for the video), unless ours for it."""
    if not (path.exists() or path.is_symlink()):
        return
    if not _ours(path, workdir):
        raise UserError(
            f"{path} exists and no run in {workdir.root} wrote it for this song (the work directory's record): give "
            "--overwrite to replace it, or -o another name"
        )
    other = beside_another(path, video, workdir) if path != video else None  # (a video is no sidecar: not hashed twice)
    if other is not None:
        raise UserError(
            f"{path} was written for {other}, another video, and would no longer fit it: give -o another name, or "
            "--overwrite to replace it"
        )


def remember(workdir: Workdir, output: Path, content: Path, beside: Path | None = None, edits: bool = False) -> None:
    """Record in `workdir` that `content` is about to be renamed onto `output` (a sidecar, `beside` that video),
    marked where it holds a person's `edits`."""
    record = _record(workdir)
    versions = [v for v in record.get(str(resolved(output)), []) if isinstance(v, list)]
    version = [content.stat().st_size, file_sha256(content)]
    version += [*([str(resolved(beside))] if beside else []), *([EDITS] if edits else [])]
    record[str(resolved(output))] = [*versions, version][-KEPT_VERSIONS:]
    write_json(workdir.outputs, {"format": FORMAT, "root": str(resolved(workdir.root)), "written": record})


def copy_video(video: Path, target: Path, suffix: str) -> None:
    """The mux's MP4 `video` at `target`, in the container a name ending in `suffix` says: Matroska (.mkv)
    remuxed; the ISO family's (.mp4, .m4v, .mov) copied as it is, since they are one format (ffmpeg reads each
    as "mov,mp4,m4a,3gp,3g2,mj2", and so do players and editors)."""
    if suffix.lower() == ".mkv":
        ffmpeg.remux(video, target, "matroska")
    else:
        shutil.copyfile(video, target)


def write_output(
    workdir: Workdir,
    output: Path,
    overwrite: bool,
    text: str | None = None,
    copy_of: Path | None = None,
    beside: Path | None = None,
) -> None:
    """`output` written with `text`, or as a copy of the video `copy_of` (copy_video), recorded as ours (a
    sidecar's with the video it is written `beside`) before it is placed. Unless `overwrite`, it is placed only
    where the name is still free or ours: another run may have written there since the check before any work (a
    hard link never replaces; a file system without them is checked again just before the rename)."""
    check_outside_work_directories(output, workdir.root)  # again: another run may have taken -o's folder since
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_temporary(output)
    try:
        if copy_of is not None:
            copy_video(copy_of, tmp, output.suffix)
        else:
            tmp.write_text(text or "", encoding="utf-8")
        remember(workdir, output, tmp, beside)
        if overwrite or _ours(output, workdir):
            os.replace(tmp, output)
            return
        try:
            os.link(tmp, output)
        except FileExistsError:
            raise UserError(
                f"{output} was written by something else while this render ran, and is left as it is: render with "
                "-o another name (the work directory holds the drawn pictures: only the video is made again)"
            ) from None
        except OSError:
            check_replaceable([output], workdir, overwrite)
            os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)


def _ours(output: Path, workdir: Workdir) -> bool:
    """Whether a file of this song's, which a run of `workdir` wrote, is at `output`."""
    return _is_file(output) and written_here(output, workdir)


def _is_file(path: Path) -> bool:
    """Whether `path` is a plain file, no link: what a run of musicvid writes."""
    return path.is_file() and not path.is_symlink()
