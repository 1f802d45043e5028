"""The names a batch gives its rows' videos in -o: an `output` cell's as given, else one made from the row's title or
its song's file name; where those clash, each automatic one gets its row's hash (musicvid.batch.command names the
jobs with them)."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from musicvid.batch.playlist import Entry, Job, files_read
from musicvid.core.errors import UserError
from musicvid.core.files import VIDEO_SUFFIXES, file_identity
from musicvid.core.workdir import video_name

# A file name is at most 255 bytes on common file systems: room is left for "-<hash>.preview.mkv".
MAX_NAME_BYTES = 200
MAX_TITLE_BYTES = 100
TAIL_BYTES = 35  # of a longer name cut in its middle: its end, where a work's movements and parts differ (cut_middle)
# Song stems that name no folder of their own (`...mp3` has the stem `..`): with --workdir a row's work directory is
# --workdir/<name>, which would be --workdir's parent, a person's folder, or --workdir itself. Such a row gets its
# hash, as clashing names do (`..-1f3a9c2e`): refusing it would stop a folder's batch over a file's name.
NO_FOLDER_NAMES = {"", ".", ".."}
# In a file's name but not in a made one: control characters (a newline would split every line that names the video)
# and the surrogates that stand for bytes that are not UTF-8 (no record in JSON could hold them).
UNRECORDABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]+")


def output_file_name(text: str) -> tuple[str, str]:
    """The stem and suffix of an `output` cell: a plain file name inside -o, with a video suffix or
    none (then .mp4)."""
    if not text.isprintable() or len(text.encode()) > MAX_NAME_BYTES:
        why = "holds a control character" if not text.isprintable() else "is longer than a file system takes"
        raise UserError(f"output {text!r} {why}")
    name = Path(text)
    if name.name != text or text in (".", ".."):
        raise UserError(f"output {text!r} must be a plain file name inside -o (no folders), e.g. video.mp4")
    if text.startswith("."):  # (hidden, and where the batch's lock and temporaries are named)
        raise UserError(f"output {text!r} must not start with a dot (a hidden file's name), e.g. video.mp4")
    if not name.suffix:
        return text, ".mp4"
    if name.suffix.lower() not in VIDEO_SUFFIXES:
        raise UserError(f"output {text!r} must end in {', '.join(VIDEO_SUFFIXES)} or have no suffix (then .mp4)")
    return name.stem, name.suffix


def title_slug(title: str) -> str:
    """A title as a file name: its letters and digits, anything else as single dashes ('' if none). Composed first
    (NFC): a decomposed accent (as macOS and many tags write it) is no letter to \\W, and would become a dash."""
    slug = re.sub(r"\W+", "-", unicodedata.normalize("NFC", title)).strip("-")
    return re.sub(r"-{2,}", "-", cut_middle(slug, "-"))


def cut_middle(name: str, joint: str) -> str:
    """A name of more than MAX_TITLE_BYTES cut to them in its middle, on characters' boundaries: its head and its last
    TAIL_BYTES joined by `joint`. Not from its end: "… part 1" and "… part 2" stay apart (without hashes), and are
    told apart in a file browser."""
    data = name.encode()
    if len(data) <= MAX_TITLE_BYTES:
        return name
    head = data[: MAX_TITLE_BYTES - TAIL_BYTES - len(joint.encode())].decode(errors="ignore")
    return head + joint + data[-TAIL_BYTES:].decode(errors="ignore")


def row_hash(entry: Entry) -> str:
    """What tells a row from another of the same name: the song's full path and the row's own cells, as
    written (so a rerun of the same playlist gives the same names; the command line's options, which
    every row shares, change none). Not its preview cell: a preview is named as its video, with .preview."""
    cells = {"title": entry.title, "artist": entry.artist, **entry.overrides, "preview": None}
    if entry.lyrics_beside:  # (no cell of the playlist: a .lrc put beside a song renames no video)
        cells["lyrics"] = None
    # (realpath: a song in a loop of links is hashed as named, and fails at its turn; resolve() raised)
    text = "\n".join([os.path.realpath(entry.path), *(f"{k}={v}" for k, v in sorted(cells.items()) if v is not None)])
    return hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()[:8]  # (a name's bytes not UTF-8 too)


def stem_name(stem: str) -> str:
    """A song's file stem as its video's name: what no record or line could hold as one dash each, and cut in its
    middle as a title is, joined by `…` (a long file name is legal, and the video's name takes a hash and suffixes
    more)."""
    return cut_middle(UNRECORDABLE.sub("-", stem), "…")


def automatic_name(entry: Entry) -> str:
    """The name of a row's video where the row names none: its title's, else its song's file stem's; with its hash
    where that names no folder (NO_FOLDER_NAMES)."""
    name = title_slug(entry.title or "") or stem_name(entry.path.stem)
    return name + "-" + row_hash(entry) if name in NO_FOLDER_NAMES else name


@dataclass
class Naming:
    """A job's output name while names are decided: its stem and whether the row named it."""

    job: Job
    stem: str
    suffix: str
    named: bool  # from the row's output cell: never changed, and refused when it clashes

    def file_name(self) -> str:
        return video_name(self.stem, self.job.settings.preview, self.suffix)

    def outputs(self, folder: Path) -> list[Path]:
        """What the job writes under its name now, in `folder`."""
        return self.job.settings.outputs(folder / self.file_name())

    def files(self) -> set[str]:
        """What the job writes in -o, as a file system that ignores case and Unicode's forms tells names apart."""
        return {folded(path.name) for path in self.outputs(Path())}


def folded(name: str) -> str:
    """A name as file systems that ignore case (Windows, macOS) and the forms of an accented letter (macOS: "é" as one
    character or as "e" and its accent) tell it apart."""
    return unicodedata.normalize("NFC", name).casefold()


def clash(namings: list[Naming]) -> bool:
    """Whether jobs that share a stem or a file cannot have their names: jobs of one stem are of different songs
    (with --workdir they would share a work directory), or two would write one file."""
    songs: dict[str, set[Path]] = {}
    for naming in namings:
        songs.setdefault(folded(naming.stem), set()).add(os.path.realpath(naming.job.request.song))  # (a loop too)
    files = [name for naming in namings for name in naming.files()]
    return any(len(same) > 1 for same in songs.values()) or len(files) != len(set(files))


def by_name(namings: list[Naming]) -> list[list[Naming]]:
    """The jobs in groups that share a stem or a file in -o (a preview of `x` and the video of `x.preview` both write
    x.preview.mp4), so that clashes are told by the files written."""
    groups: list[tuple[set[str], list[Naming]]] = []
    for naming in namings:
        keys = {"stem:" + folded(naming.stem), *naming.files()}
        meeting = [group for group in groups if group[0] & keys]
        merged = (keys.union(*(group[0] for group in meeting)), [n for group in meeting for n in group[1]] + [naming])
        groups = [group for group in groups if all(group is not m for m in meeting)] + [merged]
    return [group[1] for group in groups]


def clear_of_inputs(namings: list[Naming], out_dir: Path) -> None:
    """An automatic name whose files in -o would be an input of a row, its own (an audio-only `s.mp4` in -o, its
    lyrics `s.srt`) or another's (its song `s.mp4`, there or not yet; a picture its storyboard pins), takes `.video`
    (`s.video.mp4`), as a render's default name beside its song does; a row's own name is refused all the same."""
    storyboards: dict = {}  # (each storyboard file read once)
    inputs = {file_identity(path) for naming in namings for path in files_read(naming.job, storyboards).values()}
    for naming in (naming for naming in namings if not naming.named):
        while any(file_identity(output) in inputs for output in naming.outputs(out_dir)):
            naming.stem += ".video"


def name_outputs(namings: list[Naming], playlist: Path) -> None:
    """Every job's own stem: where automatic names clash, each gets its row's hash; names the rows gave
    that still clash are refused, naming both rows."""
    for group in by_name(namings):
        if clash(group):
            for naming in group:
                if not naming.named:
                    naming.stem += "-" + row_hash(naming.job.entry)
    for group in by_name(namings):
        if clash(group):
            first, second = sorted(group, key=lambda naming: not naming.named)[:2]
            shared = [p.name for p in first.outputs(Path()) if folded(p.name) in second.files()]  # (else: one stem)
            what = f"would both write {shared[0]}" if shared else f"would both be named {first.stem}"
            raise UserError(
                f"{first.job.where(playlist)} and {second.job.label} {what} in -o: give each row an output of its own"
            )
