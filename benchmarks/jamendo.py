"""Lyrics against the truth: songs of JamendoLyrics MultiLang (Durand, Stoller and Ewert, ICASSP 2023: released
songs, voice and band mixed, every line's and word's start annotated by hand), timed with the real Whisper base
on both backends, by musicvid and, side by side with the same checkpoint, text and audio, by stable-ts (the
aligner other music-video tools use for pasted lyrics).

- Known lyrics (the song's text given): the share of lines starting within 0.5 s and 1 s of their annotated
  start, the share of word starts within 0.3 s and their mean absolute error, and the seconds each aligner took.
  Gated (exit status 1) by docs/lyrics.md's thresholds: every word timed; over all songs at least 90% of lines
  within 0.5 s and 95% within 1 s; every song at least 70%, and at least the peer's share of lines (0.5 s) and of
  words (0.3 s).
- Recognized lyrics (--modes recognized; no text given): for each annotated line, whether a lyric scene starts within
  1 s of it holding at least half its words; musicvid's storyboard beside stable-ts's and faster-whisper's own
  transcriptions with word times. Reported, not gated.

    python -m benchmarks.jamendo [--songs ../shared/songs/jamendolyrics] [--backends ...] [--modes known recognized]
        [--out benchmarks/results/jamendo.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.jamendo_peer import peer_aligned, peer_heard, whisper_heard
from benchmarks.what_ran import machine
from musicvid.core.audio import load_audio
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import transcribe
from musicvid.storyboard.scenes import scenes_from_lines
from tests.fixtures.jamendo import SONGS, Song, found_lines, read_songs, scored
from tests.fixtures.whisper_ct2 import load_whisper_base
from vipe_core.atomic import write_text

BACKENDS = ("faster-whisper", "openai-whisper")
LINES_WITHIN = (0.9, 0.95)  # of all songs' lines: within 0.5 s, within 1 s
SONG_SHARE = 0.7  # of each song's lines within 0.5 s


def known(asr, song: Song) -> list[dict]:
    """One song's known-lyrics rows: musicvid's and the peer's, each timed."""
    audio = load_audio(song.path)
    started = time.perf_counter()
    transcript = align_lyrics(asr, audio.samples, song.texts, audio.info.sha256, quiet=True)
    seconds = time.perf_counter() - started
    words = [w.start for line in transcript.lines for w in line.words]
    ours = {"aligner": "musicvid", **scored(song, words), "seconds": round(seconds, 1)}
    started = time.perf_counter()
    theirs = [start for line in peer_aligned(asr, audio.samples, song.texts, song.language) for start in line]
    peer = {"aligner": "stable-ts", **scored(song, theirs), "seconds": round(time.perf_counter() - started, 1)}
    return [{"song": song.name, "mode": "known", **row} for row in (ours, peer)]


def recognized(asr, song: Song) -> list[dict]:
    """One song's recognized-lyrics rows: musicvid's lyric scenes, as a user gets them and with the song's language
    given (--language), as the peers are given it; stable-ts's and Whisper's own segments."""
    audio = load_audio(song.path)
    rows = []
    for who, hear in (
        ("musicvid", lambda: storyboard_lines(asr, audio)),
        ("musicvid --language", lambda: storyboard_lines(asr, audio, song.language)),
        ("stable-ts", lambda: peer_heard(asr, audio.samples, song.language)),
        (asr.backend, lambda: whisper_heard(asr, audio.samples, song.language)),
    ):
        started = time.perf_counter()
        heard = hear()
        row = {"song": song.name, "mode": "recognized", "aligner": who, "lines": len(song.lines)}
        row.update(found=found_lines(song.lines, heard), seconds=round(time.perf_counter() - started, 1))
        rows.append(row)
    return rows


def storyboard_lines(asr, audio, language: str | None = None) -> list[tuple[float, str]]:
    """musicvid's lyric scenes (start, text) for the song, as its storyboard makes them (in `language` where given)."""
    transcript = transcribe(asr, audio.samples, audio.info.sha256, quiet=True, language=language)
    scenes = scenes_from_lines(transcript.lines, audio.info.duration)
    return [(scene.start, scene.text) for scene in scenes if scene.kind == "lyric"]


MODES = {"known": known, "recognized": recognized}


def failures(rows: list[dict]) -> list[str]:
    """Each threshold a backend's known rows miss, in a sentence."""
    missed = []
    for backend in sorted({row["backend"] for row in rows if row["mode"] == "known"}):
        ours = {r["song"]: r for r in rows if (r["backend"], r["mode"], r["aligner"]) == (backend, "known", "musicvid")}
        peer = {
            r["song"]: r for r in rows if (r["backend"], r["mode"], r["aligner"]) == (backend, "known", "stable-ts")
        }
        lines = sum(r["lines"] for r in ours.values())
        for key, share, within in zip(("l05", "l1"), LINES_WITHIN, ("0.5 s", "1 s")):
            if sum(r[key] for r in ours.values()) < share * lines:
                missed.append(f"{backend}: fewer than {share:.0%} of all lines start within {within}")
        for name, row in ours.items():
            if row["timed"] < row["words"]:
                missed.append(f"{backend}, {name}: {row['words'] - row['timed']} words not timed")
            if row["l05"] < SONG_SHARE * row["lines"] or row["l05"] < peer[name]["l05"]:
                missed.append(f"{backend}, {name}: {row['l05']} of {row['lines']} lines within 0.5 s")
            if row["w03"] < peer[name]["w03"]:
                missed.append(
                    f"{backend}, {name}: {row['w03']} word starts within 0.3 s, stable-ts {peer[name]['w03']}"
                )
    return missed


def save(rows: list[dict], out: Path) -> None:
    """The rows into `out`, beside the rows of other backends and modes it holds from earlier runs."""
    ran = {(row["backend"], row["mode"]) for row in rows}
    kept = json.loads(out.read_text())["rows"] if out.exists() else []
    rows = [row for row in kept if (row["backend"], row["mode"]) not in ran] + rows
    record = {"machine": machine(torch.device("cpu")), "rows": rows}
    write_text(out, json.dumps(record, indent=1, allow_nan=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.jamendo", description=__doc__.splitlines()[0])
    parser.add_argument("--songs", type=Path, default=SONGS, help="a folder of JamendoLyrics songs (its songs.csv)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument(
        "--modes", nargs="+", choices=MODES, default=["known"], help="recognized: slow on openai-whisper"
    )
    parser.add_argument("--out", type=Path, help="write the rows here, as JSON")
    args = parser.parse_args(argv)
    if not (args.songs / "songs.csv").is_file():
        print(f"no JamendoLyrics songs in {args.songs} (its songs.csv is missing)", file=sys.stderr)
        return 2
    if not (songs := read_songs(args.songs)):
        print(f"no JamendoLyrics songs in {args.songs} (its songs.csv lists none)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for backend in args.backends:
            asr = load_whisper_base(backend, Path(folder))
            for song in songs:
                made = (MODES[mode](asr, song) for mode in args.modes)
                for row in itertools.chain.from_iterable(made):
                    rows.append({"backend": backend, **row})
                    print(json.dumps(rows[-1]), flush=True)
    if args.out:
        save(rows, args.out)
    for sentence in failures(rows):
        print(f"missed: {sentence}")
    return 1 if failures(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
