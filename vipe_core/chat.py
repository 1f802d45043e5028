"""The teacher's chat endpoint: its settings, a client with backoff, and the token tally.

The teacher is any OpenAI-compatible chat-completions endpoint; ChatClient posts one system role
and one user message to it and hands back the answer (its text, whether it was refused, and the
tokens it cost, which it adds to `usage` for all workers together).

    429 / 5xx / network error   -> backoff (Retry-After when given), shared by all workers
    401 / 403 / 404             -> the whole run stops: the URL, model or key is wrong
    400 and the like            -> TeacherError: asking again would not help

TeacherConfig holds every setting of a `vipe label` run: the endpoint's and those of the labelling
(vipe_core.teacher) that uses it.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import httpx

from vipe_core.errors import VipeError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-3.5-turbo"  # the paper's teacher
# An elaboration is a sentence: the answer for n lines is asked to stay under n times this many tokens.
TOKENS_PER_LINE = 96
# No answer for a chunk of lyrics comes near this; a broken or hostile endpoint could send gigabytes.
MAX_ANSWER_BYTES = 4 << 20
# What looks like a credential in a text an endpoint sent back: it is not kept in failed.jsonl.
SECRET = re.compile(r"\b(?:sk|pk|rk|key|api|token|bearer)[-_ ]?[A-Za-z0-9_\-]{12,}|\b[A-Za-z0-9_\-]{32,}\b", re.I)


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


@dataclass
class TeacherConfig:
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = None
    temperature: float = 0.7
    timeout: float = 120.0  # seconds for a whole request, answer included
    max_retries: int = 6  # per request, on 429, 5xx and network errors
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    chunk_lines: int = 50
    mismatch_retries: int = 1  # asks again with the same lines before splitting them
    concurrency: int = 4  # songs in flight at once
    price_input: float = 0.0  # USD per million prompt tokens (0: report tokens only)
    price_output: float = 0.0  # USD per million completion tokens

    @classmethod
    def from_env(cls, **overrides) -> "TeacherConfig":
        """Flags win over VIPE_TEACHER_URL/_MODEL/_KEY, which win over OPENAI_BASE_URL/_MODEL/OPENAI_API_KEY."""
        config = cls(
            base_url=_env("VIPE_TEACHER_URL", "OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            model=_env("VIPE_TEACHER_MODEL", "OPENAI_MODEL") or DEFAULT_MODEL,
            api_key=_env("VIPE_TEACHER_KEY", "OPENAI_API_KEY"),
        )
        for key, value in overrides.items():
            if value is not None:
                setattr(config, key, value)
        if config.api_key is None and config.base_url.rstrip("/") == DEFAULT_BASE_URL:
            raise VipeError("label needs an API key for the teacher: set OPENAI_API_KEY (or VIPE_TEACHER_KEY).")
        if config.chunk_lines < 1 or config.concurrency < 1:
            raise VipeError("--chunk-lines and --concurrency must be at least 1.")
        if not web_address(config.base_url):  # every request would fail, each after its retries
            raise VipeError(
                f"the teacher's URL {config.base_url!r} (--base-url, else $VIPE_TEACHER_URL or $OPENAI_BASE_URL) is "
                "not an http:// or https:// address of a host, as https://api.openai.com/v1 is."
            )
        return config


def web_address(text: str) -> bool:
    """Whether `text` is an http:// or https:// URL naming a host."""
    try:
        url = urlsplit(text)
    except ValueError:  # (an unclosed IPv6 bracket)
        return False
    return url.scheme in ("http", "https") and bool(url.hostname)


# ---------------------------------------------------------------------------------------------
# Talking to the teacher


class TeacherError(Exception):
    """One request failed for good (after retries, or a 4xx that retrying cannot fix)."""


@dataclass
class Answer:
    text: str
    refused: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatClient:
    """The smallest OpenAI-compatible chat client this needs: POST /chat/completions, with backoff."""

    def __init__(
        self,
        config: TeacherConfig,
        system_role: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        counted: Callable[[dict], object] = lambda usage: None,
    ):
        """`counted` is told the usage tally after each change, under the lock: an answer is counted before its
        caller saves it."""
        self.config = config
        self.system_role = system_role
        self.sleep = sleep
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self.http = httpx.Client(timeout=config.timeout, headers=headers)
        self.lock = threading.Lock()
        self.pause_until = 0.0  # after a 429 every worker waits, not only the one that got it
        self.usage = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.counted = counted

    def close(self) -> None:
        self.http.close()

    def _wait_turn(self) -> None:
        while (wait := self.pause_until - time.monotonic()) > 0:
            self.sleep(wait)

    def _back_off(self, attempt: int, retry_after: str | None) -> None:
        try:
            delay = float(retry_after) if retry_after is not None else None
        except ValueError:
            delay = None
        if delay is None:
            delay = self.config.backoff * 2**attempt * (1 + random.random() / 4)
        with self.lock:
            self.usage["retries"] += 1
            self.counted(dict(self.usage))
            self.pause_until = max(self.pause_until, time.monotonic() + delay)

    def redact(self, text: str) -> str:
        """A text from the endpoint without the key or anything shaped like one."""
        if self.config.api_key:
            text = text.replace(self.config.api_key, "[key]")
        return SECRET.sub("[redacted]", text)

    def _post(self, body: dict) -> httpx.Response:
        """The response, read whole within config.timeout (httpx's own timeout bounds each read, so a
        server sending a byte a second would never trip it) and refused past MAX_ANSWER_BYTES."""
        deadline = time.monotonic() + self.config.timeout
        with self.http.stream("POST", self.url, json=body) as response:
            content = bytearray()
            for chunk in response.iter_bytes():
                content += chunk
                if len(content) > MAX_ANSWER_BYTES:
                    raise TeacherError(f"{self.url} sent more than {MAX_ANSWER_BYTES >> 20} MB for one answer")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(f"no whole answer within {self.config.timeout:g} s")
        return httpx.Response(response.status_code, headers=response.headers, content=bytes(content))

    def complete(self, user_message: str, lines: int = 1) -> Answer:
        """The teacher's answer to a message asking for `lines` elaborations."""
        body = {
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": self.system_role},
                {"role": "user", "content": user_message},
            ],
            "temperature": self.config.temperature,
            "max_tokens": TOKENS_PER_LINE * lines,
        }
        problem = ""
        for attempt in range(self.config.max_retries + 1):
            self._wait_turn()
            try:
                response = self._post(body)
            except httpx.TransportError as error:
                problem = f"no answer from {self.url} ({type(error).__name__}{f': {error}' if str(error) else ''})"
                self._back_off(attempt, None)
                continue
            if response.status_code == 200:
                return self._answer(response)
            problem = f"{self.url} answered {response.status_code}: {self.redact(_error_message(response))}"
            if response.status_code in (401, 403, 404):
                raise VipeError(f"the teacher endpoint refused the request ({problem}); check the URL, model and key.")
            if response.status_code == 429 or response.status_code >= 500:
                self._back_off(attempt, response.headers.get("retry-after"))
                continue
            raise TeacherError(problem)  # 400 and the like: asking again would not help
        raise TeacherError(f"gave up after {self.config.max_retries + 1} tries: {problem}")

    def _answer(self, response: httpx.Response) -> Answer:
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError):
            raise TeacherError(f"{self.url} did not answer in the chat-completions format") from None
        usage = data.get("usage") or {}
        answer = Answer(
            text=message.get("content") or "",
            refused=bool(message.get("refusal")) or choice.get("finish_reason") == "content_filter",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        with self.lock:
            self.usage["requests"] += 1
            self.usage["prompt_tokens"] += answer.prompt_tokens
            self.usage["completion_tokens"] += answer.completion_tokens
            self.counted(dict(self.usage))
        return answer


def _error_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = None
    return str(message or response.reason_phrase or "no reason given")[:200]
