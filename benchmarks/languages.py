"""The song's language where none is given, against the truth: Whisper's guess from the audio (the language every
Whisper-based tool detects, stable-ts included) beside the language of the words it then heard over the whole song
(musicvid.lyrics.written), which musicvid takes where they read surely as another, and the language of the lyrics
themselves (what known lyrics are aligned in). With the real Whisper base (faster-whisper), on the JamendoLyrics
songs (French, Spanish, German) and Muldjord's English recordings.

    python -m benchmarks.languages [--songs ../shared/songs/jamendolyrics] [--out benchmarks/results/languages-base.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from benchmarks.what_ran import machine
from musicvid.core.audio import load_audio
from musicvid.lyrics.transcribe import hear, sung_lines
from musicvid.lyrics.written import written_language
from tests.fixtures.jamendo import SONGS, read_songs
from tests.fixtures.recordings import SUNG, installed, mix
from tests.fixtures.whisper_ct2 import load_whisper_base
from vipe_core.atomic import write_text


def row(asr, name: str, path: Path, truth: str, lyrics: list[str] | None) -> dict:
    audio = load_audio(path)
    guessed, silero, heard = hear(asr, audio.samples, True)
    texts = [line.text for line in sung_lines(heard, silero, audio.info.duration)]
    read = {
        "guessed": guessed,
        "heard_read": written_language(texts),
        "lyrics_read": lyrics and written_language(lyrics),
    }
    return {"song": name, "truth": truth, **read, "letters_heard": sum(c.isalpha() for text in texts for c in text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.languages", description=__doc__.splitlines()[0])
    parser.add_argument("--songs", type=Path, default=SONGS, help="a folder of JamendoLyrics songs (its songs.csv)")
    parser.add_argument("--out", type=Path, help="write the rows here, as JSON")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        asr = load_whisper_base("faster-whisper", Path(folder))
        jamendo = (args.songs / "songs.csv").is_file()
        songs = [(s.name, s.path, s.language, s.texts) for s in read_songs(args.songs)] if jamendo else []
        if installed():
            songs += [(name, mix(home, Path(folder) / f"{name}.wav"), "en", None) for name, home in SUNG.items()]
        for song in songs:
            rows.append(row(asr, *song))
            print(json.dumps(rows[-1]), flush=True)
    guessed, read = (sum(r[key] == r["truth"] for r in rows) for key in ("guessed", "heard_read"))
    print(f"of {len(rows)} songs: Whisper's guess right for {guessed}, the words heard read right for {read}")
    if args.out:
        ran = {"machine": machine(torch.device("cpu")), "asr": "whisper-base (faster-whisper)", "rows": rows}
        write_text(args.out, json.dumps(ran, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
