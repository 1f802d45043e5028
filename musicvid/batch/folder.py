"""What a folder holds directly in it, by what a batch of it makes of each name: its songs (musicvid.batch.playlist
reads them), and what it skips, each kind said in a line; its subfolders' audio files counted, not read. Beside a
song, its timed lyrics (beside_lyrics)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import VIDEO_SUFFIXES, same_file
from musicvid.core.outputs import made_by_a_run
from musicvid.core.paths import shown
from musicvid.core.workdir import WORK_ROOT, is_work_directory

# What ffmpeg reads as audio, by the suffixes music is kept under (`ffmpeg -demuxers`): a folder's songs.
AUDIO_SUFFIXES = frozenset(
    ".mp3 .mp2 .mpa .m2a .mpga .wav .w64 .flac .m4a .m4b .aac .ogg .oga .opus .spx .wma .aiff .aif .aifc .webm .weba "
    ".mka .ape .wv .tta .tak .dsf .dff .mpc .caf .amr .ac3 .eac3 .dts .au .shn .ra".split()
)
# What a music folder holds beside its songs that is plainly no song (covers, notes, playlists, lyrics, a batch's own
# videos and report): skipped without a word. A file of any other suffix is named as skipped (folder_notes).
OTHER_SUFFIXES = frozenset(
    ".jpg .jpeg .png .gif .bmp .webp .tif .tiff .heic .txt .nfo .log .cue .pdf .md .htm .html .url .ini .db .sfv "
    ".md5 .ffp .accurip .json .xml .csv .m3u .m3u8 .pls .xspf .wpl .lrc .srt .ass .vtt .zip .rar .7z".split()
).union(VIDEO_SUFFIXES)
NAMES_SHOWN = 5  # a note names this many files, then says how many more
LYRICS_SUFFIXES = (".lrc", ".srt")  # beside a song, the first there is its lyrics (beside_lyrics)
COUNTED_AT_MOST = 1000  # a count of the songs in subfolders stops past this: "more than 1000" says it


@dataclass(frozen=True)
class Listing:
    """What a folder holds directly in it, by what a batch makes of it."""

    songs: list[Path]  # an audio suffix, no folder: a link to nowhere or into a loop, a pipe too (fail at their turn)
    hidden: list[str]  # songs but for their name's leading "." (macOS's `._` files, hidden files): skipped
    folders: list[str]  # folders with an audio suffix: no songs
    other: list[str]  # files of a suffix neither audio nor plainly another kind: skipped
    below: int  # audio files in its subfolders (to COUNTED_AT_MOST + 1): not read


def listing_of(folder: Path, output: Path | None) -> Listing:
    """`folder`'s names, sorted, as a batch takes them; its subfolders' audio files counted (audio_below)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as e:
        raise UserError(f"cannot read the folder {shown(folder)}: {e.strerror}") from None
    songs, hidden, folders, other, subfolders = [], [], [], [], []
    for entry in entries:
        suffix = Path(entry.name).suffix.lower()
        is_folder = entry.is_dir(follow_symlinks=False)  # (a link to a folder: not followed)
        if is_folder:
            subfolders.append(Path(entry.path))
            if suffix in AUDIO_SUFFIXES and not entry.name.startswith("."):
                folders.append(entry.name)
        elif suffix in AUDIO_SUFFIXES:
            (hidden if entry.name.startswith(".") else songs).append(entry.name)
        elif not (entry.name.startswith(".") or suffix in OTHER_SUFFIXES or entry.is_dir()):
            other.append(entry.name)
    return Listing([folder / name for name in songs], hidden, folders, other, audio_below(subfolders, output))


def audio_below(folders: list[Path], output: Path | None) -> int:
    """How many audio files lie in `folders` and below them, counted to COUNTED_AT_MOST + 1 (enough to say it): not
    in a hidden folder, a folder linked to, a work directory or -o (`output`): none is a folder of songs."""
    count = 0
    for top in (f for f in folders if not walled_off(f, output)):
        for root, subfolders, files in os.walk(top):  # (links to folders: not followed)
            subfolders[:] = [name for name in subfolders if not walled_off(Path(root, name), output)]
            count += sum(not f.startswith(".") and Path(f).suffix.lower() in AUDIO_SUFFIXES for f in files)
            if count > COUNTED_AT_MOST:
                return count
    return count


def walled_off(folder: Path, output: Path | None) -> bool:
    hidden = folder.name.startswith(".") or folder.name == WORK_ROOT.name
    return hidden or is_work_directory(folder) or (output is not None and same_file(folder, output))


def some_names(names: list[str]) -> str:
    """File names as a note lists them: the first NAMES_SHOWN, shown, then how many more."""
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return ", ".join(shown(name) for name in names[:NAMES_SHOWN]) + more


def counted(count: int, what: str = "file") -> str:
    """`count` `what`s, said: "1 file", "3 files", "more than 1000 files" (audio_below stops there)."""
    number = f"more than {COUNTED_AT_MOST}" if count > COUNTED_AT_MOST else str(count)
    return f"{number} {what}{'' if count == 1 else 's'}"


def folder_notes(listing: Listing, folder: Path) -> list[str]:
    """One line for each kind of name in `folder` that is no song of its batch: every file is a song or said why."""
    hidden, other = counted(len(listing.hidden), "hidden file"), counted(len(listing.other))
    notes = {
        f"{hidden} skipped (names starting with '.', as macOS's ._ are): {some_names(listing.hidden)}": listing.hidden,
        f"{some_names(listing.folders)}: a folder, not a song: skipped": listing.folders,
        f"{other} skipped, not audio by their suffix: {some_names(listing.other)}": listing.other,
        f"{counted(listing.below, 'audio file')} in its subfolders not read (a batch reads one folder's files: give "
        "a playlist for those)": listing.below and listing.songs,
    }
    return [f"{shown(folder)}: {note}" for note, said in notes.items() if said]


# --- beside a song ----------------------------------------------------------------------------------


def beside_lyrics(song: Path, base: Path) -> str | None:
    """The timed lyrics beside `song`, `<stem>.lrc`, else `<stem>.srt`, as a CSV's `lyrics` cell names them (relative
    to `base`, the playlist's folder); None where there are none. Not a `.srt` beside a video of its stem, nor one whose
    bytes a work directory records as its run wrote them there (its video deleted since): that is a video's, as a batch or a
    render writes it (a rerun with -o the songs' folder: no output is ever an input)."""
    if not song.name:  # (`.` or `/`: a folder, which fails at its turn as one)
        return None
    for suffix in LYRICS_SUFFIXES:
        named = song.with_name(song.stem + suffix)
        found = [
            lyrics
            for lyrics in named_alike(named)
            # (an entry that is itself lyrics, `s.lrc`, is no song: it fails at its turn as one)
            if lyrics.name.casefold() != song.name.casefold() and not (suffix == ".srt" and captions(lyrics))
        ]
        # the name itself first; else the one name in another case (two, `S.LRC` and `s.Lrc`: which is not guessed)
        if not found or (len(found) > 1 and found[0] != named):
            continue
        lyrics = found[0]
        cell = str(lyrics.relative_to(base)) if lyrics.is_relative_to(base) else ""
        return cell if cell and cell == cell.strip() else str(lyrics.absolute())  # (a cell is read stripped)
    return None


def named_alike(path: Path) -> list[Path]:
    """What is at `path`, else the names in its folder that are `path`'s but for letter case (`song.lrc` beside
    `Song.mp3`, `Song.LRC`: as a player finds it, on a file system that tells cases apart); no folder. Where what is
    at `path` is a video's captions, the others are the lyrics (beside_lyrics). A pipe or a link to nothing is found:
    it is then refused as the file it stands for (not left out unsaid)."""
    exact = [path] if os.path.lexists(path) and not os.path.isdir(path) else []
    try:
        names = sorted(n for n in os.listdir(path.parent) if n.casefold() == path.name.casefold() and n != path.name)
    except OSError:
        names = []
    return exact + [path.parent / n for n in names if not os.path.isdir(path.parent / n)]


def captions(srt: Path) -> bool:
    """Whether the `.srt` at `srt` is a video's captions, as musicvid wrote them: a video of its stem is beside it, or a
    work directory in WORK_ROOT records its bytes at its name (made_by_a_run: the captions a run made of a person's
    .srt lyrics have their bytes, elsewhere)."""
    videos = (srt.with_suffix(s) for v in VIDEO_SUFFIXES for s in (v, v.upper()))
    return any(map(os.path.lexists, videos)) or made_by_a_run(srt, [WORK_ROOT], at_its_name=True) is not None
