"""Any OpenAI-compatible chat-completions server (vLLM serve, llama.cpp server, hosted APIs).

Spec: `openai:URL#MODEL`, e.g. `openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-1.7B`. Uses the
standard library only (urllib); requests of one batch run concurrently in threads. Connection
errors, timeouts, HTTP 429 and 5xx are retried with exponential backoff.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from games.llm.base import (
    BackendError,
    Chat,
    Generation,
    LLMBackend,
    SamplingParams,
    cut_at_stop,
    row_seeds,
)


@dataclass(frozen=True)
class OpenAIConfig:
    """Where the server is and how patiently to talk to it."""

    base_url: str  # the API root, e.g. http://127.0.0.1:8000/v1
    model: str
    api_key: str | None = None  # default: $OPENAI_API_KEY when set
    timeout: float = 60.0  # seconds per request
    max_retries: int = 3  # retries after the first attempt
    backoff: float = 0.5  # seconds before the first retry, doubled each time
    max_concurrency: int = 8  # requests in flight per generate call
    logprobs: bool = True  # ask for the sampled tokens' logprobs
    extra_body: dict[str, Any] = field(
        default_factory=dict
    )  # merged into every request (e.g. top_k)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise ValueError("model is required (spec: openai:URL#MODEL)")
        if (
            self.timeout <= 0
            or self.max_retries < 0
            or self.backoff < 0
            or self.max_concurrency < 1
        ):
            raise ValueError(
                "timeout and max_concurrency must be positive, max_retries and backoff >= 0"
            )

    @property
    def endpoint(self) -> str:
        root = self.base_url.rstrip("/")
        return root if root.endswith("/chat/completions") else root + "/chat/completions"


class OpenAIBackend(LLMBackend):
    """Generation over HTTP. Scoring is not part of the chat-completions protocol, so
    `score`/`score_spans` raise NotImplementedError (use a transformers or vLLM backend)."""

    def __init__(self, config: OpenAIConfig):
        self.config = config
        self.name = f"openai:{config.model}"
        self._api_key = config.api_key or os.environ.get("OPENAI_API_KEY")

    @classmethod
    def from_spec(cls, target: str, **options: Any) -> OpenAIBackend:
        """From `URL#MODEL` (the part after `openai:`); `model=` may be given instead of
        `#MODEL`."""
        url, _, model = target.partition("#")
        return cls(OpenAIConfig(base_url=url, model=model or options.pop("model", ""), **options))

    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        seeds_ = row_seeds(sampling, len(chats), seeds)
        bodies = [self._body(chat, sampling, seed) for chat, seed in zip(chats, seeds_)]
        if len(bodies) <= 1:
            return [self._complete(body, sampling) for body in bodies]
        with ThreadPoolExecutor(max_workers=min(self.config.max_concurrency, len(bodies))) as pool:
            return list(pool.map(lambda body: self._complete(body, sampling), bodies))

    def score_spans(self, chats, replies, spans) -> list[float]:
        raise NotImplementedError(
            f"{self.name}: the chat-completions protocol cannot score given replies; "
            "use a transformers or vllm backend for scoring and ΔBelief"
        )

    # -- one request --------------------------------------------------------------------------
    def _body(self, chat: Chat, sampling: SamplingParams, seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(chat),
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
        }
        if seed is not None:
            body["seed"] = seed
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if sampling.top_k:
            body["top_k"] = sampling.top_k  # not OpenAI's API; vLLM and llama.cpp accept it
        if self.config.logprobs:
            body["logprobs"] = True
        body.update(self.config.extra_body)
        return body

    def _complete(self, body: dict[str, Any], sampling: SamplingParams) -> Generation:
        data = self._post(body)
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendError(
                f"{self.config.endpoint} sent an unexpected response: {str(data)[:300]}"
            ) from exc
        text, cut = cut_at_stop(text, sampling.stop)
        entries = ((choice.get("logprobs") or {}).get("content")) or []
        logprobs = [float(e.get("logprob", 0.0)) for e in entries]
        token_ids = _token_ids(choice, entries)
        prompt_ids = data.get("prompt_token_ids") or choice.get("prompt_token_ids")
        finish = "length" if choice.get("finish_reason") == "length" and not cut else "stop"
        return Generation(
            text, token_ids, logprobs, list(prompt_ids) if prompt_ids else None, finish
        )

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        return post_json(
            self.config.endpoint,
            body,
            api_key=self._api_key,
            timeout=self.config.timeout,
            max_retries=self.config.max_retries,
            backoff=self.config.backoff,
        )


def http_request(
    url: str,
    body: dict[str, Any] | None = None,
    *,
    api_key: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 3,
    backoff: float = 0.5,
) -> bytes:
    """The raw answer to a POST of `body` as JSON (a GET when `body` is None). Connection errors,
    timeouts, HTTP 429 and 5xx are retried with exponential backoff; then, and on any other HTTP
    error, a BackendError naming `url`."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    payload = None if body is None else json.dumps(body).encode()
    attempts = max_retries + 1
    for attempt in range(attempts):
        request = urllib.request.Request(
            url, data=payload, headers=headers, method="GET" if body is None else "POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode(errors="replace")
            if exc.code != 429 and exc.code < 500:
                raise BackendError(f"{url} answered HTTP {exc.code}: {detail}") from exc
            reason = f"HTTP {exc.code}: {detail}"
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = str(getattr(exc, "reason", exc))
        if attempt + 1 < attempts:
            time.sleep(backoff * 2**attempt)
    raise BackendError(
        f"cannot reach the OpenAI-compatible server at {url} after {attempts} attempts: {reason}"
    )


def post_json(url: str, body: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """`http_request`'s answer parsed as JSON (a BackendError when it is not)."""
    raw = http_request(url, body, **options)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BackendError(f"{url} did not answer with JSON: {raw[:200]!r}") from exc


def _token_ids(choice: dict[str, Any], entries: list[dict[str, Any]]) -> list[int]:
    """Generated token ids when the server shares them: vLLM's `token_ids`, or logprob tokens
    rendered as `token_id:N` (vLLM's `return_tokens_as_token_ids`). Else empty."""
    if choice.get("token_ids"):
        return [int(t) for t in choice["token_ids"]]
    tokens = [str(e.get("token", "")) for e in entries]
    if tokens and all(t.startswith("token_id:") for t in tokens):
        return [int(t.split(":", 1)[1]) for t in tokens]
    return []
