"""The names a batch gives its rows' videos in -o: an `output` cell's as given, else one made from the row's title or
its song's file name; where those clash, each automatic one gets its row's hash (musicvid.batch.command names the
jobs with them)."""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from musicvid.batch.playlist import Entry, Job, cut_middle, row_hash, title_slug
from musicvid.core.errors import UserError
from musicvid.core.files import file_identity
from musicvid.core.workdir import video_name

# Song stems that name no folder of their own (`...mp3` has the stem `..`): with --workdir a row's work directory is
# --workdir/<name>, which would be --workdir's parent, a person's folder, or --workdir itself. Such a row gets its
# hash, as clashing names do (`..-1f3a9c2e`): refusing it would stop a folder's batch over a file's name.
NO_FOLDER_NAMES = {"", ".", ".."}
# In a file's name but not in a made one: control characters (a newline would split every line that names the video)
# and the surrogates that stand for bytes that are not UTF-8 (no record in JSON could hold them).
UNRECORDABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]+")


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
    lyrics `s.srt`) or another's (its song `s.mp4`, there or not yet), takes `.video` (`s.video.mp4`), as a render's
    default name beside its song does; a row's own name is refused all the same."""
    inputs = {file_identity(path) for naming in namings for path in naming.job.inputs().values()}
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
