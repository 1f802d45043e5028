"""Synthetic songs, a deterministic teacher stand-in and a local chat-completions server.

No test touches the network: the teacher is an HTTP server on 127.0.0.1 started here, Genius is a
fake transport (test_vipe_collect.py), and models are random tiny GPT-2s (conftest.py).
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASSET_TOKENIZER = REPO / "assets" / "tokenizers" / "tiny-gpt2"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a child `python -m ...`: this checkout importable, no hub, one thread."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **extra}


# ---------------------------------------------------------------------------------------------
# Synthetic songs and a deterministic teacher stand-in.
# Lines look like "I saw the river tonight"; the stand-in's elaboration depends on the line's
# words ("a golden river under heavy rain"), so a small model can learn it.

OPENERS = ["I saw the", "you became the", "we followed the", "they burned the", "she remembers the", "he painted the"]
SUBJECTS = [
    "river",
    "moon",
    "city",
    "window",
    "feather",
    "shadow",
    "candle",
    "storm",
    "garden",
    "lighthouse",
    "castle",
    "lantern",
]
ENDINGS = ["tonight", "in the rain", "all alone", "again and again", "before the dawn", "at the end of summer"]
COLOURS = {"I": "golden", "you": "silver", "we": "blue", "they": "red", "she": "green", "he": "white"}
SCENES = {
    "tonight": "under a starry sky",
    "in the rain": "under heavy rain",
    "all alone": "in an empty valley",
    "again and again": "spinning in circles",
    "before the dawn": "in the early light",
    "at the end of summer": "among falling leaves",
}


def lyric_line(rng: random.Random) -> str:
    return f"{rng.choice(OPENERS)} {rng.choice(SUBJECTS)} {rng.choice(ENDINGS)}"


def teacher_elaboration(line: str) -> str:
    """The stand-in teacher: a visual description made from the line's words."""
    first = line.split()[0]
    subject = next((s for s in SUBJECTS if re.search(rf"\b{s}\b", line)), "stone")
    ending = next((e for e in ENDINGS if line.endswith(e)), "tonight")
    return f"a {COLOURS.get(first, 'grey')} {subject} {SCENES[ending]}"


def make_songs(count: int, lines_per_song: int = 16, seed: int = 0):
    from vipe_core.records import CleanSong

    rng = random.Random(seed)
    return [
        CleanSong(
            song_id=str(1000 + i),
            title=f"Song {i}",
            artist=f"Artist {i % 3}",
            lines=[lyric_line(rng) for _ in range(lines_per_song)],
        )
        for i in range(count)
    ]


def write_labelled(canvas_dir: Path, songs) -> None:
    """What `vipe label` writes, made without a teacher."""
    from vipe_core.records import LabelledSong, write_json

    for song in songs:
        labelled = LabelledSong(
            song.song_id,
            song.title,
            song.artist,
            song.lines,
            [teacher_elaboration(line) for line in song.lines],
            teacher="stand-in",
        )
        write_json(canvas_dir / f"{song.song_id}.json", asdict(labelled))


# ---------------------------------------------------------------------------------------------
# A local server that speaks the chat-completions protocol.


def chat_reply(content: str | None, *, refusal: str | None = None, finish_reason: str = "stop", tokens=(10, 20)):
    message = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return (
        200,
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "stand-in",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)},
        },
        {},
    )


def numbered_lines(user_message: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\d+\. (.*)$", user_message, re.M)]


def standin_answer(body: dict) -> str:
    lines = numbered_lines(body["messages"][-1]["content"])
    return "\n".join(f"{i}. {teacher_elaboration(line)}" for i, line in enumerate(lines, 1))


def standin_teacher(body: dict, hit: int):
    return chat_reply(standin_answer(body))


class ChatServer:
    """Serves POST /v1/chat/completions with `respond(body, hit_number) -> (status, json, headers)`.

    `hits` records every request received; `answered` the user messages that got a 200 answer
    that reached the client socket without error.
    """

    def __init__(self, respond=standin_teacher, seconds_per_byte: float = 0.0):
        self.respond = respond
        self.seconds_per_byte = seconds_per_byte  # > 0: the answer trickles out, a byte at a time
        self.hits: list[dict] = []
        self.answered: list[str] = []
        self.lock = threading.Lock()

    def __enter__(self) -> "ChatServer":
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server_self.lock:
                    number = len(server_self.hits)
                    server_self.hits.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, payload, headers = server_self.respond(body, number)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if server_self.seconds_per_byte:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(server_self.seconds_per_byte)
                    else:
                        self.wfile.write(data)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                if status == 200:
                    with server_self.lock:
                        server_self.answered.append(body["messages"][-1]["content"])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------------
# Refusals


def refused(argv: list[str], capsys) -> str:
    """Run `vipe ARGV` in this process; assert it was refused as bad input (exit code 2, no traceback, one
    sentence, argparse's own refusals too) and return that sentence."""
    from vipe_core.cli import main

    try:
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.strip()
