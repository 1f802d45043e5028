"""label: against a local server that speaks the chat-completions protocol."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from vipe_core.chat import TeacherConfig
from vipe_core.cli import main
from vipe_core.records import read_json, read_jsonl, write_jsonl
from vipe_core.teacher import DEFAULT_SYSTEM_ROLE, parse_numbered, run_label, user_message

from .helpers import (
    ChatServer,
    chat_reply,
    make_songs,
    numbered_lines,
    standin_answer,
    subprocess_env,
    teacher_elaboration,
)


def config(server: ChatServer, **overrides) -> TeacherConfig:
    values = dict(base_url=server.url, model="stand-in", api_key="test-key", backoff=0.01, concurrency=2)
    return TeacherConfig(**{**values, **overrides})


@pytest.fixture
def lyrics(tmp_path):
    path = tmp_path / "lyrics.clean.jsonl"
    write_jsonl(path, make_songs(3, lines_per_song=16))
    return path


def labelled(folder, song_id):
    return read_json(folder / f"{song_id}.json")


# ---------------------------------------------------------------------------------------------
# Parsing


@pytest.mark.parametrize(
    "answer",
    [
        "1. a red fox\n2. a blue moon\n3. a green tree",
        "Here are your prompts:\n\n1. a red fox\n2. a blue moon\n3. a green tree\n\nEnjoy!",
        "1. a red fox 2. a blue moon 3. a green tree",
        "1) a red fox\n2) a blue moon\n3) a green tree",
        '**1.** "a red fox"\n**2.** "a blue moon"\n**3.** "a green tree"',
        "1. a red fox\n\n2. a blue moon\n\n3. a green tree",
    ],
)
def test_numbered_answers_are_parsed_line_by_line(answer):
    assert parse_numbered(answer, 3) == ["a red fox", "a blue moon", "a green tree"]


def test_parsing_finds_too_few_or_too_many_items():
    assert len(parse_numbered("1. a red fox\n2. a blue moon", 3)) == 2
    assert len(parse_numbered("1. a\n2. b\n3. c\n4. d", 3)) == 4
    assert parse_numbered("a lonely red fox", 1) == ["a lonely red fox"]


def test_user_message_numbers_the_lines_of_one_chunk_from_one():
    song = make_songs(1, lines_per_song=5)[0]
    message = user_message(song, 3, 5)
    assert numbered_lines(message) == song.lines[3:5]
    assert "(lines 4 to 5 of 5)" in message and "2 lines" in message


# ---------------------------------------------------------------------------------------------
# Requests


def test_request_shape_chunks_and_numbered_parsing(tmp_path, lyrics):
    with ChatServer() as server:
        summary = run_label(
            lyrics, tmp_path / "canvas", config(server, chunk_lines=10, temperature=0.5), progress=False
        )
    assert summary["labelled"] == 3 and summary["failed"] == 0
    assert len(server.hits) == 6  # 16 lines = 10 + 6, three songs
    for hit in server.hits:
        assert hit["path"] == "/v1/chat/completions"
        assert hit["headers"]["Authorization"] == "Bearer test-key"
        body = hit["body"]
        assert body["model"] == "stand-in" and body["temperature"] == 0.5
        assert body["max_tokens"] == 96 * len(numbered_lines(body["messages"][1]["content"]))  # the answer is bounded
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["messages"][0]["content"] == DEFAULT_SYSTEM_ROLE.read_text().strip()
        assert len(numbered_lines(body["messages"][1]["content"])) in (10, 6)
    for song in make_songs(3, lines_per_song=16):
        result = labelled(tmp_path / "canvas", song.song_id)
        assert result["lines"] == song.lines
        assert result["elaborations"] == [teacher_elaboration(line) for line in song.lines]
        assert result["teacher"] == "stand-in"
    usage = read_json(tmp_path / "canvas" / "usage.json")
    assert usage["requests"] == 6 and usage["prompt_tokens"] == 60 and usage["completion_tokens"] == 120


def test_the_system_role_comes_from_the_file_given(tmp_path, lyrics):
    role = tmp_path / "role.txt"
    role.write_text("Describe each line as a picture.\n")
    with ChatServer() as server:
        run_label(lyrics, tmp_path / "canvas", config(server), system_role=role, limit=1, progress=False)
    assert server.hits[0]["body"]["messages"][0]["content"] == "Describe each line as a picture."


def test_progress_in_a_log_is_its_first_and_last_lines(tmp_path, lyrics, capsys):
    """Where stderr is no terminal (a log file), the bar is written as plain lines (vipe_core.bars): its start and
    its end with the tally of tokens, not a redraw for each song."""
    with ChatServer() as server:
        run_label(lyrics, tmp_path / "canvas", config(server), progress=True)
    lines = capsys.readouterr().err.split("\n")
    assert [line.split("|")[0] for line in lines] == ["label:   0%", "label: 100%", ""]
    assert "3/3" in lines[1] and "failed=0, tokens=90" in lines[1] and "\r" not in "".join(lines)


def test_a_count_mismatch_is_asked_again_then_the_chunk_is_split(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=8))

    def drops_a_line_when_long(body, hit):
        lines = standin_answer(body).splitlines()
        return chat_reply("\n".join(lines[:-1] if len(lines) > 4 else lines))

    with ChatServer(drops_a_line_when_long) as server:
        summary = run_label(tmp_path / "songs.jsonl", tmp_path / "canvas", config(server), progress=False)
    sizes = [len(numbered_lines(h["body"]["messages"][1]["content"])) for h in server.hits]
    assert sizes == [8, 8, 4, 4]  # asked, asked again, then two halves
    assert summary["labelled"] == 1
    song = make_songs(1, lines_per_song=8)[0]
    assert labelled(tmp_path / "canvas", song.song_id)["elaborations"] == [
        teacher_elaboration(line) for line in song.lines
    ]


def test_a_mismatch_that_the_second_ask_fixes_is_not_split(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=6))

    def wrong_once(body, hit):
        return chat_reply("1. only one" if hit == 0 else standin_answer(body))

    with ChatServer(wrong_once) as server:
        run_label(tmp_path / "songs.jsonl", tmp_path / "canvas", config(server), progress=False)
    assert len(server.hits) == 2


def test_a_refusal_is_recorded_and_skipped_and_not_asked_again(tmp_path, lyrics):
    refused_song = make_songs(3, lines_per_song=16)[1]

    def refuses_one_song(body, hit):
        if refused_song.lines[0] in body["messages"][1]["content"]:
            return chat_reply("I'm sorry, but I can't help with these lyrics.")
        return chat_reply(standin_answer(body))

    with ChatServer(refuses_one_song) as server:
        summary = run_label(lyrics, tmp_path / "canvas", config(server), progress=False)
        assert summary["labelled"] == 2 and summary["failed"] == 1
        failed = list(read_jsonl(tmp_path / "canvas" / "failed.jsonl"))
        assert [(f["song_id"], f["kind"]) for f in failed] == [(refused_song.song_id, "refusal")]
        assert "I'm sorry" in failed[0]["detail"]
        assert not (tmp_path / "canvas" / f"{refused_song.song_id}.json").exists()
        hits = len(server.hits)
        summary = run_label(lyrics, tmp_path / "canvas", config(server), progress=False)
        assert len(server.hits) == hits and summary["skipped_failed"] == 1 and summary["already_labelled"] == 2
        run_label(lyrics, tmp_path / "canvas", config(server), retry_failed=True, progress=False)
        assert len(server.hits) == hits + 1


def test_a_structured_refusal_field_counts_as_a_refusal(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=4))
    with ChatServer(lambda body, hit: chat_reply(None, refusal="I can't do that.")) as server:
        summary = run_label(tmp_path / "songs.jsonl", tmp_path / "canvas", config(server), progress=False)
    assert summary["failed"] == 1 and len(server.hits) == 1
    assert next(read_jsonl(tmp_path / "canvas" / "failed.jsonl"))["kind"] == "refusal"


@pytest.mark.parametrize("status", [429, 503])
def test_rate_limit_or_server_error_then_success(tmp_path, status):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=4))

    def busy_once(body, hit):
        if hit == 0:
            return status, {"error": {"message": "slow down"}}, {"Retry-After": "0.05"}
        return chat_reply(standin_answer(body))

    with ChatServer(busy_once) as server:
        summary = run_label(tmp_path / "songs.jsonl", tmp_path / "canvas", config(server), progress=False)
    assert summary["labelled"] == 1 and len(server.hits) == 2
    assert summary["usage"]["retries"] == 1 and summary["usage"]["requests"] == 1


def test_an_endpoint_that_keeps_failing_records_the_song_as_failed(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=4))
    with ChatServer(lambda body, hit: (500, {"error": "down"}, {})) as server:
        summary = run_label(
            tmp_path / "songs.jsonl", tmp_path / "canvas", config(server, max_retries=2), progress=False
        )
    assert summary["failed"] == 1 and len(server.hits) == 3
    assert next(read_jsonl(tmp_path / "canvas" / "failed.jsonl"))["kind"] == "error"


def test_a_run_whose_every_song_failed_exits_1_in_one_line(tmp_path, capsys):  # (an unreachable teacher: exit 0)
    write_jsonl(tmp_path / "songs.jsonl", make_songs(2, lines_per_song=4))
    with ChatServer(lambda body, hit: (500, {"error": "down"}, {})) as server:
        argv = ["label", str(tmp_path / "songs.jsonl"), "--out", str(tmp_path / "cv"), "--base-url", server.url]
        assert main([*argv, "--api-key", "k", "--max-retries", "0", "--backoff", "0.01", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == "vipe label: every song it asked for failed (2): none was labelled\n"


def test_a_wrong_key_stops_the_run_with_one_line_and_exit_code_2(tmp_path, lyrics, capsys):
    with ChatServer(lambda body, hit: (401, {"error": {"message": "Incorrect API key"}}, {})) as server:
        code = main(["label", str(lyrics), "--out", str(tmp_path / "canvas"), "--base-url", server.url, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "401" in err and "Incorrect API key" in err


@pytest.mark.parametrize("url", ["file:///etc/passwd", "not a url", "http://", "http://[::1", "ftp://example.com"])
def test_a_teacher_url_that_is_no_web_address_is_refused_before_any_request(tmp_path, lyrics, capsys, url):
    argv = ["label", str(lyrics), "--out", str(tmp_path / "canvas"), "--api-key", "k", "--base-url", url]
    assert main([*argv, "--max-retries", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the teacher's URL {url!r}" in err and not (tmp_path / "canvas").exists()


def test_no_key_for_openai_is_refused(tmp_path, lyrics, monkeypatch, capsys):
    for name in ("OPENAI_API_KEY", "VIPE_TEACHER_KEY", "OPENAI_BASE_URL", "VIPE_TEACHER_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["label", str(lyrics), "--out", str(tmp_path / "canvas")]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_a_killed_run_resumes_without_repeating_any_request(tmp_path):
    """Kill the CLI mid-song (after 3 of 6 answers: one song done, half of the next), then rerun."""
    write_jsonl(tmp_path / "songs.jsonl", make_songs(3, lines_per_song=16))
    songs = make_songs(3, lines_per_song=16)
    release = threading.Event()

    def stalls_after_three(body, hit):
        if hit >= 3 and not release.is_set():
            release.wait(30)  # hold the 4th request until the client has been killed
        return chat_reply(standin_answer(body))

    command = [
        sys.executable,
        "-m",
        "vipe_core",
        "label",
        str(tmp_path / "songs.jsonl"),
        "--out",
        str(tmp_path / "canvas"),
        "--chunk-lines",
        "8",
        "--concurrency",
        "1",
        "--quiet",
    ]
    env = subprocess_env(VIPE_TEACHER_KEY="k", VIPE_TEACHER_MODEL="stand-in")
    with ChatServer(stalls_after_three) as server:
        process = subprocess.Popen(
            [*command, "--base-url", server.url],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        partial = tmp_path / "canvas" / "partial" / f"{songs[1].song_id}.json"
        deadline = time.monotonic() + 60
        while not (len(server.hits) >= 4 and partial.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.hits) == 4 and partial.exists(), process.stderr.read() if process.poll() is not None else ""
        process.send_signal(signal.SIGKILL)
        process.wait()
        release.set()
        assert (tmp_path / "canvas" / f"{songs[0].song_id}.json").exists()
        assert len(server.answered) == 3

        subprocess.run(
            [*command, "--base-url", server.url],
            cwd=tmp_path,
            env=env,
            check=True,
            timeout=120,
            stdout=subprocess.DEVNULL,
        )
    assert len(server.answered) == 6  # 3 songs x 2 chunks, each answered once
    assert len(set(server.answered)) == 6
    # each answer counted, the one kept for the killed song's first half too
    assert json.loads((tmp_path / "canvas" / "usage.json").read_text())["requests"] == 6
    for song in songs:
        assert labelled(tmp_path / "canvas", song.song_id)["elaborations"] == [
            teacher_elaboration(line) for line in song.lines
        ]
    assert not any((tmp_path / "canvas" / "partial").iterdir())


def test_an_answer_that_trickles_in_is_cut_off_at_the_timeout_of_the_whole_request(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(1, lines_per_song=2))
    with ChatServer(seconds_per_byte=0.02) as server:  # the answer (about 300 bytes) would take 6 s
        started = time.monotonic()
        summary = run_label(
            tmp_path / "songs.jsonl", tmp_path / "canvas", config(server, timeout=1.0, max_retries=0), progress=False
        )
        seconds = time.monotonic() - started
    assert summary["failed"] == 1 and seconds < 3.0
    assert "within 1 s" in next(read_jsonl(tmp_path / "canvas" / "failed.jsonl"))["detail"]


def test_an_answer_too_large_is_refused_and_an_echoed_key_is_not_kept(tmp_path):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(2, lines_per_song=2))

    def huge_or_echoing(body, hit):
        if "1." in body["messages"][1]["content"] and hit == 0:
            return 200, chat_reply("x" * (5 << 20)), {}
        return 400, {"error": {"message": "bad request from test-key, also sk-proj-A1b2C3d4E5f6G7h8I9j0"}}, {}

    with ChatServer(huge_or_echoing) as server:
        summary = run_label(
            tmp_path / "songs.jsonl", tmp_path / "canvas", config(server, concurrency=1), progress=False
        )
    assert summary["failed"] == 2
    details = [record["detail"] for record in read_jsonl(tmp_path / "canvas" / "failed.jsonl")]
    assert any("more than 4 MB" in detail for detail in details)
    echoed = next(detail for detail in details if "more than 4 MB" not in detail)  # (a port may hold "400")
    assert "test-key" not in echoed and "A1b2C3d4E5f6G7h8I9j0" not in echoed and "bad request from [key]" in echoed


def test_a_song_named_as_the_folders_bookkeeping_or_hidden_is_labelled_and_built(tmp_path):
    """Round 11: a song `usage` was written over by the tally (usage.json), and songs `.x` and `.musicvid-1.y` were
    kept in hidden files that build reads none of; each run said they were labelled."""
    from dataclasses import replace

    from vipe_core.canvas import rows_from_canvas

    ids = ["usage", "Usage", ".x", ".musicvid-1.y", "plain"]
    write_jsonl(lyrics := tmp_path / "odd.jsonl", [replace(s, song_id=i) for s, i in zip(make_songs(5), ids)])
    with ChatServer() as server:
        assert run_label(lyrics, canvas := tmp_path / "canvas", config(server), progress=False)["labelled"] == 5
        asked = len(server.hits)
        assert run_label(lyrics, canvas, config(server), progress=False)["already_labelled"] == 5
        assert len(server.hits) == asked  # (nothing asked again)
    assert sorted({row.song_id for row in rows_from_canvas(canvas)}) == sorted(ids)
    assert not [path.name for path in canvas.glob(".*.json")] and labelled(canvas, "plain")["song_id"] == "plain"
    assert read_json(canvas / "usage.json")["requests"] == asked
