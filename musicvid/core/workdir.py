"""A song's work directory: every file a run keeps there, named in one place, held by one run at a time, of one song.

The layout (docs/cli.md): transcript.json, storyboard.json, keyframes/<scene>.png, frames/<frame>.png,
contact_sheet.png, video.mp4 (or preview.mp4), lyrics.srt, lyrics.ass with its fonts/, timings.json,
score.json and score.png (`musicvid score`: musicvid.review.score), outputs.json (what its runs wrote outside it:
musicvid.core.outputs) and the lock file. A rerun reads what an earlier one left, so these names never change.

A run removes the temporaries a killed run left before it resumes (musicvid.core.files); a second run on the same
folder would remove the first's files as it writes them. So each run holds an OS file lock on the folder's lock file
while it works there, which the OS lets go when the run ends, however (a SIGKILL too): a killed run leaves no folder
locked. The sweep takes only our temporaries' names (`.musicvid-<pid>.<name>.<random><suffix>`), never a person's file.

What a work directory caches is of the song whose hash its storyboard and transcript record: another song there is
refused (`check_song`), so it can never reuse that song's storyboard or pictures.

A work directory is musicvid's or empty (`check_ours`): a folder that holds files musicvid did not make is refused
before any work, naming one, --overwrite or not. The lock file marks a folder musicvid works in: one without it holds
a person's files alone, whatever their names (their own video.mp4, keyframes/0000.png). In a folder of its own,
musicvid writes only the names above, so what a person keeps there (notes, an editor's swap file beside
storyboard.json) is never touched. A run takes a folder (makes it, locks it) only once every check has passed
(musicvid.prepare), and gives back one it found new or empty where it leaves nothing but its lock.
Older musicvids made no lock file: a folder of musicvid's names alone, named for the song it records, is taken as its
own (made_before_locks: its storyboard.json, unrecorded, is set aside before a run makes one anew).
"""

from __future__ import annotations

import json
import logging
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from filelock import FileLock

from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256, remove_all_temporaries, remove_temporaries, same_file
from musicvid.core.locks import Busy, os_lock
from musicvid.core.paths import exists, is_folder, kind_of, lies_in, nearest_existing, printable, resolved
from vipe_core.atomic import temporary_of

log = logging.getLogger("musicvid")

WORK_ROOT = Path("musicvid-work")
# A default work directory's name is the song's and a hash: where that is over the 255 bytes a file system takes, the
# song's part is cut to CUT_STEM_BYTES (the hash keeps the folder the song's alone). A name that fits is never cut,
# so the work directory of a song worked on before is found again.
NAME_MAX, CUT_STEM_BYTES = 255, 100
WORKS_ONLY = "musicvid works only in a new or empty folder or one of its own, --overwrite or not"  # (score: its own)
LOCK = ".musicvid-lock"
FONTS = "fonts"  # the folder beside an ASS script that holds its fonts (musicvid.delivery.captions and mux)
PICTURE = re.compile(r"(\d+)\.png")  # a keyframe's or a frame's name (Workdir.keyframe, Workdir.frame), checked whole


def is_work_directory(folder: Path) -> bool:
    """Whether `folder` is one musicvid works in: its lock file is there (a file, not a link to a person's)."""
    lock = folder / LOCK
    try:
        return lock.is_file() and not lock.is_symlink()
    except OSError:
        return False


def check_outside_work_directories(output: Path, root: Path | None = None) -> None:
    """Refuse an output in `root` (a run's work directory, made yet or not) or in any work directory above it: those
    hold musicvid's own files alone, and another song's would be written without the run holding its lock."""
    path = resolved(output)
    own = root is not None and path.is_relative_to(resolved(root))
    folder = root if own else next((f for f in path.parents if is_work_directory(f)), None)
    if folder is not None:
        raise UserError(
            f"{output} lies in the work directory {folder}, which holds musicvid's own files alone: give -o a name "
            "outside it"
        )


def video_name(stem: str, preview: bool, suffix: str = ".mp4") -> str:
    """A video's file name: a preview's is `<stem>.preview.mp4`, never the full video's."""
    return f"{stem}{'.preview' if preview else ''}{suffix}"


def named_path(name: str) -> property:
    """A work directory's path of this name: its property."""
    return property(lambda workdir: workdir.root / name)


@dataclass(frozen=True)
class Workdir:
    """The work directory at `root` and the path of everything a run keeps in it."""

    root: Path

    def __post_init__(self) -> None:
        # Lexically normal (`x/..` is the folder it names, `x/.` is `x`), so that check() judges the folder the run
        # writes in: `wd/..` with no `wd/` yet was taken for a new folder, then written as the one above it. Links
        # stay as given (no resolve()): the run works where the person pointed.
        object.__setattr__(self, "root", Path(os.path.normpath(self.root)))

    transcript = named_path("transcript.json")
    storyboard = named_path("storyboard.json")
    keyframes = named_path("keyframes")
    contact_sheet = named_path("contact_sheet.png")
    subtitles = named_path("lyrics.srt")
    fonts = named_path(FONTS)
    timings = named_path("timings.json")
    score_chart = named_path("score.png")
    lock = named_path(LOCK)

    @classmethod
    def for_song(cls, song: str | Path, sha256: str, named: Path | None = None) -> Workdir:
        """`musicvid-work/<song stem>-<short hash of the audio>/`, unless the user `named` one."""
        if named is not None:
            return cls(named)
        stem = re.sub(r"[^\w.-]+", "_", Path(song).stem).strip("_") or "song"
        if len(f"{stem}-{sha256[:10]}".encode()) > NAME_MAX:  # cut on a character's boundary
            stem = stem.encode()[:CUT_STEM_BYTES].decode("utf-8", "ignore")
        return cls(WORK_ROOT / f"{stem}-{sha256[:10]}")

    @classmethod
    def of_song(cls, song: Path, named: Path | None) -> Workdir:
        """The work directory `song` is worked in (`named`, else for_song's), known before its audio is
        decoded (the song's file is hashed, once per version of it in a process)."""
        return cls(named) if named is not None else cls.for_song(song, file_sha256(song))

    def keyframe(self, scene: int) -> Path:
        return self.keyframes / f"{scene:04d}.png"

    @property
    def frames(self) -> Path:
        """The drawn in-between frames (a keyframe is never among them)."""
        return self.root / "frames"

    def frame(self, frame: int) -> Path:
        return self.frames / f"{frame:06d}.png"

    def video(self, preview: bool) -> Path:
        """The muxed video, before its copy to the output."""
        return self.root / ("preview.mp4" if preview else "video.mp4")

    @property
    def lyrics_script(self) -> Path:
        """The lyrics on screen (ASS), with their fonts in FONTS beside it."""
        return self.root / "lyrics.ass"

    @property
    def score_report(self) -> Path:
        """`musicvid score`'s report of the pictures (musicvid.review.score), and its chart."""
        return self.root / "score.json"

    @property
    def outputs(self) -> Path:
        """The record of what this work directory's runs wrote outside it (musicvid.core.outputs)."""
        return self.root / "outputs.json"

    def files(self) -> dict[Path, str]:
        """What runs write here, by what it is (the folders of pictures and fonts, whole)."""
        named = ("transcript", "storyboard", "contact_sheet", "subtitles", "lyrics_script", "timings", "outputs")
        named += ("score_report", "score_chart")
        files = {getattr(self, name): getattr(self, name).name for name in named}
        files |= {self.video(preview): self.video(preview).name for preview in (False, True)}
        return files | {folder: f"{folder.name}/" for folder in (self.keyframes, self.frames, self.fonts)}

    def holds(self, path: Path) -> str | None:
        """Which of this work directory's files `path` is (a file inside its folders of pictures or fonts
        too); None if it is none of them."""
        for file, name in self.files().items():
            if same_file(path, file) or (name.endswith("/") and lies_in(path, file)):
                return name
        return None

    def is_storyboard(self, path: Path | None) -> bool:
        """Whether `path` is this work directory's storyboard.json (given as --storyboard, it is an input: rendered,
        never rewritten, so a rerun makes the same edits again)."""
        return path is not None and same_file(path, self.storyboard)

    def check_unwritten(self, inputs: dict[str, Path]) -> None:
        """Refuse an input (`inputs`: what each is -> its path) that is one of the files a run writes here (a song
        named video.mp4 here, lyrics in its lyrics.srt): no input is an output. Its storyboard.json may be rendered
        (it is then not written), and its transcript.json read as lyrics (a timed file: nothing is transcribed, so
        it is not written)."""
        for what, path in inputs.items():
            name = self.holds(path)
            read_only = {"storyboard": "storyboard.json", "lyrics file": "transcript.json"}.get(what)
            if name is not None and name != read_only:
                where = (
                    f"lies in the work directory's {name}" if name.endswith("/") else f"is the work directory's {name}"
                )
                raise UserError(
                    f"the {what} {path} {where}, which the run writes: copy it elsewhere first, or give another --workdir"
                )

    def check_apart(self, outputs: list[Path]) -> None:
        """Refuse an output here (the folder is musicvid's alone) or one this folder would lie under (`--workdir
        v.mp4/wd -o v.mp4`): the run writes both."""
        root = resolved(self.root)
        for output in outputs:
            path = resolved(output)
            if root.is_relative_to(path):
                raise UserError(
                    f"the work directory {self.root} lies under {output}, which the run writes as a file: give -o or "
                    "--workdir another name"
                )
            check_outside_work_directories(output, self.root)

    def song(self) -> tuple[str, str] | None:
        """The audio (path, sha256) whose work this folder caches, as its storyboard or transcript records it;
        None where neither records one."""
        for file, key in ((self.storyboard, "audio"), (self.transcript, None)):
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            audio = (data.get(key) if key else data) if isinstance(data, dict) else None
            sha256 = audio.get("sha256" if key else "audio_sha256") if isinstance(audio, dict) else None
            if isinstance(sha256, str) and sha256:
                return str(audio.get("path", "") if key else ""), sha256
        return None

    def check_song(self, song: Path, sha256: str) -> None:
        """Refuse a song other than the one whose work is cached here (it would get that song's
        storyboard and video)."""
        cached = self.song()
        if cached is not None and cached[1] != sha256:
            was = f"another song ({cached[0]}), not {song}" if cached[0] else f"another song, not {song}"
            if cached[0] and Path(cached[0]).resolve() == song.resolve():  # the same name, other bytes
                was = f"{song} as it was before its bytes changed"
            raise UserError(f"work directory {self.root} holds the work of {was}: give another --workdir")

    def remove_leftovers(self, output: Path | None = None) -> None:
        """Temporary files of a run that was killed mid-write (see vipe_core.atomic.atomic_path): here, and of the
        `output` video with its .srt and .ass."""
        for folder in (self.root, self.keyframes, self.frames, self.fonts):
            remove_all_temporaries(folder)
        for path in (output, output.with_suffix(".srt"), output.with_suffix(".ass")) if output else ():
            remove_temporaries(path)

    def check(self, only: str = WORKS_ONLY) -> None:
        """Refuse, before any work, a work directory that cannot be one: a path the system refuses (a name too long,
        a folder without search permission: musicvid.core.paths.probe), a link to nothing (or under one), a file, a
        read-only folder, a folder not musicvid's (check_ours), one whose files are not of their kind (check_kinds), or
        one inside another work directory (a run started from inside one: that one holds musicvid's own files alone)."""
        path = self.root
        existing = next((p for p in (path, *path.parents) if exists(p, "work directory")), None)
        if existing != path and path.is_symlink():  # (mkdir would say "File exists")
            raise UserError(f"work directory {path} is a link to {os.readlink(path)}, where nothing is: give a folder")
        if nearest_existing(path, "work directory") is None:  # (and a link to nowhere above it, refused)
            return
        above = next((p for p in resolved(path).parents if is_work_directory(p)), None)
        if above is not None:
            raise UserError(
                f"work directory {path} lies in the work directory {above}, which holds musicvid's own files alone: run "
                "from another folder, or give --workdir outside it"
            )
        if not is_folder(existing, "work directory"):
            kind = kind_of(existing)  # (/dev/null is no file a person keeps: a special file)
            where = f"is a {kind}" if existing == path else f"lies under {existing}, which is a {kind}"
            raise UserError(f"work directory {path} {where}: move it away, or give --workdir another folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise UserError(f"work directory {path} cannot be written: {existing} is read-only")
        if existing == path:
            self.check_ours(only)
            self.check_kinds()

    def check_ours(self, only: str = WORKS_ONLY) -> None:
        """Refuse a folder that is not musicvid's (module doc): one that holds anything and no lock file of ours (a
        file of that name, not a link to a person's file), unless an older musicvid made it (made_before_locks)."""
        if is_work_directory(self.root):
            return
        try:
            entries = list(self.root.iterdir())
        except OSError as error:
            raise UserError(f"work directory {self.root} cannot be read: {error.strerror}") from None
        sha256 = self.made_before_locks(entries)
        if sha256 and self.root.name.endswith(f"-{sha256[:10]}"):  # the folder musicvid names for that song
            return
        if sha256:
            raise UserError(
                f"work directory {self.root} has no {LOCK} (older musicvids made none): if musicvid made it, `touch "
                f"{self.lock}` and run again (its storyboard.json is kept), else give another --workdir"
            )
        if entries:
            raise UserError(
                f"work directory {self.root} holds {min(e.name for e in entries)}, which musicvid did not make: {only}"
            )

    def made_before_locks(self, entries: list[Path]) -> str | None:
        """The song (its SHA-256) of a folder of `entries` as a musicvid older than lock files left it: each entry
        one of its names (or a run's temporary) and of its kind, a song recorded; None for any other folder."""
        names = {path.name for path in self.files()}
        if not entries or not all(entry.name in names or temporary_of(entry) for entry in entries):
            return None
        self.check_kinds()  # before song() reads a file: never a FIFO's
        song = self.song()
        return song[1] if song else None

    def check_kinds(self) -> None:
        """Refuse a file of this work directory that is not of its kind (outputs.json a folder, keyframes/ a
        file, a picture's name a folder: odd_pictures): the run would fail on it after its work; or a link in place
        of one (a run would write its pictures into the folder keyframes/ leads to, a person's, over its files). Nothing
        there is removed: a folder may hold a person's files."""
        wanted_kinds = {path: "folder" if name.endswith("/") else "file" for path, name in self.files().items()}
        if linked := next((path for path in wanted_kinds if path.is_symlink()), None):
            raise UserError(
                f"{linked} is a link to {printable(os.readlink(linked))}, where musicvid keeps a {wanted_kinds[linked]} "
                "of its own: move it away, or give another --workdir"
            )
        for path, wanted in {**wanted_kinds, self.lock: "file", **dict.fromkeys(self.odd_pictures(), "file")}.items():
            kind = kind_of(path)
            if kind not in (None, wanted):
                raise UserError(
                    f"{path} is a {kind}, where musicvid keeps a {wanted}: move it away, or give another --workdir"
                )

    def check_writable(self) -> None:
        """Refuse, before a render's work, a folder of pictures or fonts here that cannot be written (the top folder
        is `check`'s): its first picture would fail after Whisper and the models."""
        for folder in (self.keyframes, self.frames, self.fonts):
            if is_folder(folder, "work directory") and not os.access(folder, os.W_OK | os.X_OK):
                raise UserError(f"work directory {self.root} cannot be written: {folder} is read-only")

    def odd_pictures(self) -> list[Path]:
        """The names in keyframes/ and frames/ that a picture of a run is written to and that hold no file (a folder,
        a pipe); a link to a file is as good as one (the picture replaces the link)."""
        odd = []
        for folder, named in ((self.keyframes, self.keyframe), (self.frames, self.frame)):
            try:
                with os.scandir(folder) as entries:
                    names = [e.name for e in entries if not e.is_file() and PICTURE.fullmatch(e.name)]
            except OSError:  # no such folder (or a file: refused as such)
                continue
            odd += [folder / name for name in names if named(int(PICTURE.fullmatch(name)[1])).name == name]
        return odd

    @contextmanager
    def held(self, wait: bool = False, sha256: str | None = None, output: Path | None = None) -> Iterator[Workdir]:
        """This work directory, taken for this run once every check has passed (check, check_song): made, with
        the folders above it, locked, and cleared of what a killed run left mid-write (remove_leftovers: here, and
        beside the `output` video this run writes). Another run's lock is waited for with `wait` (a batch's rows of
        one song), else refused in one sentence; so is a folder that took another song's work while this run waited
        for it (`sha256`: this run's song). A folder this run found new or empty and leaves holding nothing but its lock
        (refused, failed or stopped before it wrote a file) is given back as it was: the lock and the folders this
        run made are removed, so it never counts as musicvid's for a file a person keeps there later."""
        while True:
            made = [p for p in (self.root, *self.root.parents) if not p.exists()]
            found_empty = not made and not any(self.root.iterdir())
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                remove_folders(made)
                raise UserError(f"work directory {self.root} cannot be made: {error.strerror}") from None
            try:
                lock = self.locked(wait)
            except FileNotFoundError:  # the run this one waited for gave the folder back: make it anew
                continue
            except BaseException:
                remove_folders(made)
                raise
            if self.lock.exists():
                break
            lock.release()  # a run that gave the folder back removed the file this one waited on: take it anew
        try:
            cached = self.song() if sha256 else None
            if cached is not None and cached[1] != sha256:
                raise Busy(f"work directory {self.root} took the work of another song while this run waited")
            self.remove_leftovers(output)
            yield self
        finally:
            if (made or found_empty) and self.root.is_dir() and [p.name for p in self.root.iterdir()] == [LOCK]:
                self.lock.unlink()
                remove_folders(made)
            lock.release()

    def check_free(self) -> None:
        """Refuse a work directory another run holds now, as `held` would (which takes it for good, later)."""
        if self.lock.is_file() and not self.lock.is_symlink():
            self.locked(False).release()

    def locked(self, wait: bool) -> FileLock:
        """The OS lock on this work directory's lock file, held; another run's waited for with `wait`, else refused."""
        # (no "give another --workdir": `score` takes none, and a render's other folder would do its work again)
        busy = f"work directory {self.root} is in use by another musicvid run; wait for it to finish"
        return os_lock(self.lock, None if wait else busy, f"the work directory {self.root}")


def remove_folders(made: list[Path]) -> None:
    """The folders a run made (`made`: deepest first), where they are empty."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:  # never made (the mkdir failed on it, after the folders above it), or not empty: rmdir
            continue  # removes only an empty folder, so those above are tried still
