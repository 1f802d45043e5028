"""Stage 3, label: a teacher LLM writes one visual elaboration for every lyric line.

The teacher (vipe_core.chat) gets the system role (an editable text file, system_role.txt beside
this module by default) and one song's lines, numbered, at most `chunk_lines` at a time, and
answers one numbered elaboration per line. This module holds the prompts, the parsing of numbered
answers, the chunking and splitting of songs, the failed songs and the resumable run.

    answer parsed, count right  -> kept (cached per chunk, so no chunk is ever paid for twice)
    count wrong                 -> asked again, then the chunk is split in halves, down to single lines
    refusal                     -> the song is recorded in failed.jsonl and skipped
    endpoint errors             -> see vipe_core.chat: backoff, or the whole run stops

canvas/<song id>.json is written when a song is complete; a rerun skips those songs, and songs in
failed.jsonl unless asked to retry them. canvas/usage.json keeps the token and cost tally.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

from vipe_core.atomic import name_of, records_in, remove_temporaries
from vipe_core.bars import progress_bar
from vipe_core.chat import ChatClient, TeacherConfig, TeacherError
from vipe_core.errors import VipeError
from vipe_core.guards import check_output_kind, hold_folder, refuse_foreign, refuse_overlap
from vipe_core.records import (
    USAGE_FILE,
    CleanSong,
    LabelledSong,
    append_jsonl,
    labelled_song,
    read_clean_songs,
    read_json,
    read_jsonl,
    read_text,
    write_json,
)

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_ROLE = Path(__file__).with_name("system_role.txt")


# ---------------------------------------------------------------------------------------------
# Prompts and answers


REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry,|i can(?:no|')t|i won'?t|i am unable|i'm unable|as an ai)", re.I
)


def user_message(song: CleanSong, start: int, end: int) -> str:
    """The lines song.lines[start:end], numbered from 1, under the song's title and artist."""
    part = f" (lines {start + 1} to {end} of {len(song.lines)})" if (start, end) != (0, len(song.lines)) else ""
    numbered = "\n".join(f"{i}. {line}" for i, line in enumerate(song.lines[start:end], 1))
    return f'"{song.title}" by {song.artist}{part}, {end - start} lines:\n{numbered}'


def _markers(text: str, at_line_start: bool) -> list[re.Match]:
    """The markers "1." "2." ... found one after the other (a number may also end in ')' or ':')."""
    found: list[re.Match] = []
    position, number = 0, 1
    while True:
        prefix = r"^[ \t>*\"'-]*" if at_line_start else r"(?<![\w.,])"
        match = re.compile(prefix + rf"{number}\s*[.):]\s*", re.M).search(text, position)
        if match is None:
            return found
        found.append(match)
        position, number = match.end(), number + 1


DECORATION = " \t\"'*“”`"  # quotes and markdown around an item


def parse_numbered(text: str, expected: int) -> list[str]:
    """The numbered items of an answer, in order. Works for one item a line and for all on one line.

    Each item is the first line of the text between its number and the next one, without quotes
    or markdown around it. An unnumbered answer counts as one item.
    """
    markers = _markers(text, at_line_start=True)
    if len(markers) < expected:
        inline = _markers(text, at_line_start=False)
        markers = inline if len(inline) > len(markers) else markers
    if not markers:
        single = text.strip().splitlines()
        return [single[0].strip(DECORATION)] if single and single[0].strip(DECORATION) else []
    items = []
    for marker, following in zip(markers, [*markers[1:], None]):
        segment = text[marker.end() : following.start() if following else len(text)]
        first_line = next((line for line in segment.splitlines() if line.strip()), "")
        items.append(first_line.strip(DECORATION))
    return items


# ---------------------------------------------------------------------------------------------
# Labelling songs


class SongFailed(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


OWN_NAMES = {Path(USAGE_FILE).stem}  # the stems of the label folder's own .json files


def song_file(folder: Path, song_id: str) -> Path:
    """The file a song's labels are kept in: <song_id>.json, where the id is a plain name of its own; else the id
    made one, with its hash: a character no file name holds, a hidden name (build reads none, and `.musicvid-…` is a
    temporary's, swept), or the folder's own bookkeeping's (usage.json: a song `usage` was written over by the tally)."""
    safe = re.sub(r"[^\w.-]", "_", song_id)
    if safe != song_id or safe.startswith(".") or safe.lower() in OWN_NAMES:
        safe = safe.lstrip(".") + "-" + hashlib.sha1(song_id.encode()).hexdigest()[:8]
    return folder / f"{name_of(safe, song_id)}.json"  # (a long id: its start, and its hash)


class Labeller:
    def __init__(self, client: ChatClient, out_dir: Path):
        self.client = client
        self.config = client.config
        self.out_dir = out_dir
        self.partial_dir = out_dir / "partial"

    def label_song(self, song: CleanSong) -> LabelledSong:
        """Label every line, chunk by chunk; chunks answered earlier come from the partial cache."""
        partial_path = song_file(self.partial_dir, song.song_id)
        partial = read_json(partial_path) if partial_path.exists() else {}
        elaborations: list[str] = []
        for start in range(0, len(song.lines), self.config.chunk_lines):
            end = min(len(song.lines), start + self.config.chunk_lines)
            elaborations += self._label_span(song, start, end, partial, partial_path)
        labelled = LabelledSong(
            song_id=song.song_id,
            title=song.title,
            artist=song.artist,
            lines=song.lines,
            elaborations=elaborations,
            teacher=self.config.model,
        )
        write_json(song_file(self.out_dir, song.song_id), asdict(labelled))
        partial_path.unlink(missing_ok=True)
        return labelled

    def _label_span(self, song: CleanSong, start: int, end: int, partial: dict, partial_path: Path) -> list[str]:
        key = f"{start}-{end}"
        if key in partial:
            return partial[key]
        expected = end - start
        got = 0
        for _ in range(self.config.mismatch_retries + 1):
            try:
                answer = self.client.complete(user_message(song, start, end), expected)
            except TeacherError as error:
                raise SongFailed("error", f"lines {start + 1}-{end}: {error}") from None
            items = parse_numbered(answer.text, expected)
            if answer.refused or REFUSAL.match(answer.text.strip()):
                raise SongFailed("refusal", f"lines {start + 1}-{end}: {self.client.redact(answer.text.strip()[:300])}")
            if len(items) == expected and all(items):
                partial[key] = items
                write_json(partial_path, partial)
                return items
            got = len(items)
        if expected == 1:
            raise SongFailed("mismatch", f"line {start + 1}: no usable elaboration in the answer")
        log.info("%s: %d answers for %d lines %d-%d; splitting", song.song_id, got, expected, start + 1, end)
        middle = (start + end) // 2
        return self._label_span(song, start, middle, partial, partial_path) + self._label_span(
            song, middle, end, partial, partial_path
        )


def read_system_role(path: str | os.PathLike | None) -> str:
    path = Path(path) if path else DEFAULT_SYSTEM_ROLE
    text = read_text(path, "the system role file").strip()
    if not text:
        raise VipeError(f"the system role file {path} is empty.")
    return text


COUNTED = ("requests", "retries", "prompt_tokens", "completion_tokens", "cost_usd")  # (ChatClient's, and the cost)


def check_label_folder(out_dir: Path) -> None:
    """Refuse (VipeError) a `vipe label` folder holding what it did not write, before it is held or a request is
    paid for: a run reads its usage tally, failures journal, unfinished songs (partial/) and labelled songs, and
    replaces the tally. Each labelled song is read as `build` reads it (labelled_song)."""
    if not out_dir.is_dir():
        return
    refuse_foreign(out_dir / USAGE_FILE, _usage_ours, "a usage tally")
    refuse_foreign(out_dir / "failed.jsonl", _failures_ours, "a failures journal")
    for file in records_in(out_dir / "partial", "*.json") if (out_dir / "partial").is_dir() else ():
        refuse_foreign(file, _partial_ours, "an unfinished song")
    for file in records_in(out_dir, "*.json"):
        if file.name != USAGE_FILE:
            labelled_song(file)


def _usage_ours(path: Path) -> bool:
    usage = read_json(path, "the usage tally")
    counts = usage.values() if isinstance(usage, dict) and set(usage) <= set(COUNTED) else [None]
    return all(isinstance(n, (int, float)) and not isinstance(n, bool) and 0 <= n < math.inf for n in counts)


def _failures_ours(path: Path) -> bool:
    return all(isinstance(r, dict) and isinstance(r.get("song_id"), str) for r in read_jsonl(path, journal=True))


def _partial_ours(path: Path) -> bool:
    """A song's chunks answered so far: "<start>-<end>" -> that many elaborations (Labeller._label_span)."""
    spans = read_json(path, "the unfinished song")
    if not isinstance(spans, dict):
        return False
    for key, items in spans.items():
        bounds = re.fullmatch(r"(\d+)-(\d+)", key)
        size = int(bounds[2]) - int(bounds[1]) if bounds else 0
        if size <= 0 or not isinstance(items, list) or len(items) != size:
            return False
        if not all(isinstance(item, str) and item for item in items):
            return False
    return True


def _merge_usage(path: Path, before: dict, run: dict, config: TeacherConfig) -> dict:
    total = {k: before.get(k, 0) + run.get(k, 0) for k in run}
    total["cost_usd"] = round(
        (total["prompt_tokens"] * config.price_input + total["completion_tokens"] * config.price_output) / 1e6, 6
    )
    write_json(path, total)
    return total


def run_label(
    clean_jsonl: str | os.PathLike,
    out_dir: str | os.PathLike,
    config: TeacherConfig,
    *,
    system_role: str | os.PathLike | None = None,
    retry_failed: bool = False,
    limit: int | None = None,
    progress: bool = True,
) -> dict:
    """Label every song of lyrics.clean.jsonl that has no canvas/<song id>.json yet. Its inputs are checked
    before the output folder is made; the folder is held for the run (a second run on it is refused)."""
    out_dir = Path(out_dir)
    check_output_kind(out_dir, folder=True)
    refuse_overlap(
        [("--out", out_dir)], inputs=[("the lyrics file", clean_jsonl), ("the system role file", system_role)]
    )
    songs = read_clean_songs(clean_jsonl)
    if not songs:  # (a run would make its folder and label nothing)
        raise VipeError(
            f"{clean_jsonl} holds no songs to label: `vipe filter` kept none there, or it is not its output."
        )
    role = read_system_role(system_role)
    check_label_folder(out_dir)
    with hold_folder(out_dir):
        for folder in (out_dir, out_dir / "partial"):
            remove_temporaries(folder)  # a killed run's: `build` reads this folder
        failed_path = out_dir / "failed.jsonl"
        failed_before = set() if retry_failed else {r.get("song_id") for r in read_jsonl(failed_path, journal=True)}
        todo = [
            s
            for s in songs
            if s.lines and not song_file(out_dir, s.song_id).exists() and s.song_id not in failed_before
        ]
        todo = todo[:limit] if limit is not None else todo
        summary = {"songs": len(songs), "already_labelled": 0, "skipped_failed": 0, "labelled": 0, "failed": 0}
        summary["already_labelled"] = sum(song_file(out_dir, s.song_id).exists() for s in songs)
        summary["skipped_failed"] = sum(
            s.song_id in failed_before and not song_file(out_dir, s.song_id).exists() for s in songs
        )
        _label_todo(config, role, out_dir, todo, summary, progress)
    return summary


def _label_todo(
    config: TeacherConfig, role: str, out_dir: Path, todo: list[CleanSong], summary: dict, progress: bool
) -> None:
    """Label `todo` in parallel, counting into `summary` and keeping the usage tally after every answer."""
    failed_path, usage_path = out_dir / "failed.jsonl", out_dir / USAGE_FILE
    usage_before = read_json(usage_path, "the usage tally") if usage_path.exists() else {}
    # the tally kept at every answer: a run killed between an answer saved and its song done still counts it
    client = ChatClient(config, role, counted=lambda usage: _merge_usage(usage_path, usage_before, usage, config))
    labeller = Labeller(client, out_dir)
    try:
        with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
            futures = {pool.submit(labeller.label_song, song): song for song in todo}
            bar = progress_bar(total=len(futures), desc="label", unit="song", disable=not progress)
            for future in as_completed(futures):
                song = futures[future]
                try:
                    future.result()
                    summary["labelled"] += 1
                except SongFailed as failure:
                    summary["failed"] += 1
                    record = {"song_id": song.song_id, "title": song.title, "artist": song.artist}
                    append_jsonl(failed_path, {**record, "kind": failure.kind, "detail": failure.detail})
                except BaseException:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
                # (the tally file is written at every answer: `counted`)
                tokens = sum(usage_before.get(k, 0) + client.usage[k] for k in ("prompt_tokens", "completion_tokens"))
                # drawn with the update, as often as it is (set on its own, a log would get a line every song)
                bar.set_postfix(failed=summary["failed"], tokens=tokens, refresh=False)
                bar.update(1)
            bar.close()
    finally:
        client.close()
    summary["usage"] = _merge_usage(usage_path, usage_before, client.usage, config)
