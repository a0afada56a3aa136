"""A vLLM OpenAI-compatible server as a training policy: token ids in, token ids out, LoRA
adapters loaded at run time.

Spec: `vllm-server:URL` (the server's root or its `/v1`), e.g. `vllm-server:http://gen:8000`.

What training needs from a rollout, and how this backend gets it from `vllm serve`:
- the prompt is tokenised here, with the policy's own tokenizer and chat template
  (games.llm.base.PromptEncoder, as the transformers backend does), and sent to
  `/v1/completions` as token ids, so the prompt the trainer builds its rows from is the prompt
  the server sampled from (a `prompt_token_ids` echoed back that differs is an error);
- `return_token_ids` (vLLM >= 0.10.2) gives the sampled token ids; `logprobs: 0` with
  `return_tokens_as_token_ids` gives each sampled token's log-prob and, on older servers, its id
  (`token_id:N`); the log-probs only feed a diagnostic, the trainer recomputes its own. Start
  the server with `--logprobs-mode processed_logprobs` for log-probs after temperature, as the
  other backends report them;
- each request carries its own `seed`, so a game's questions do not depend on its batch;
- `load_adapter` / `unload_adapter` call `/v1/load_lora_adapter` / `/v1/unload_lora_adapter`
  (`VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`, `--enable-lora`): the server reads the adapter's
  folder itself, so trainer and server share a filesystem. `with_model(name)` sends later
  requests to that adapter (vLLM's `model` field names a served model or a loaded adapter).

Nothing here imports torch; the tokenizer is any HF tokenizer the caller passes (or loads).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from games.llm.base import (
    BackendError,
    Chat,
    Generation,
    LLMBackend,
    PromptEncoder,
    SamplingParams,
    cut_at_stop,
    row_seeds,
)
from games.llm.openai_backend import http_request, post_json


def server_root(url: str) -> str:
    """The server's root URL: `url` without a trailing `/` or `/v1`."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"a generation server URL must be http(s)://host:port, got {url!r}")
    root = url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


@dataclass(frozen=True)
class ServerOptions:
    """How patiently to talk to the server."""

    timeout: float = 300.0  # seconds per request (a long batch queues behind others)
    max_retries: int = 3  # after the first attempt: connection errors, 429, 5xx
    backoff: float = 0.5  # seconds before the first retry, doubled each time
    max_concurrency: int = 256  # requests in flight per generate call (the server batches them)

    def http(self) -> dict[str, Any]:
        return {"timeout": self.timeout, "max_retries": self.max_retries, "backoff": self.backoff}


class VLLMServerBackend(LLMBackend):
    """Generation on a vLLM OpenAI-compatible server (or anything speaking the same subset, such
    as training.grpo.standin_server). `model`: the served model or loaded adapter requests go to
    (default: the first model the server lists, its base). Scoring is not offered (ΔBelief is
    scored by the trainer's own policy)."""

    def __init__(
        self,
        url: str,
        tokenizer: Any,
        *,
        model: str | None = None,
        options: ServerOptions = ServerOptions(),
        encoder: PromptEncoder | None = None,
    ):
        self.url = server_root(url)
        self.tokenizer = tokenizer
        self.options = options
        self._encode = encoder or PromptEncoder(tokenizer)
        self.model = model
        self.name = f"vllm-server:{self.url}" + (f"#{model}" if model else "")

    @classmethod
    def from_spec(cls, target: str, *, tokenizer: Any = None, **options: Any):
        """From `URL[#MODEL]`; the tokenizer is loaded from the served base model's folder when
        not given (it must be readable here: a shared model folder)."""
        url, _, model = target.partition("#")
        backend = cls(url, None, model=model or None, options=ServerOptions(**options))
        if tokenizer is None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(backend.base()["root"], local_files_only=True)
        backend.tokenizer, backend._encode = tokenizer, PromptEncoder(tokenizer)
        return backend

    def with_model(self, model: str | None) -> VLLMServerBackend:
        """A backend on the same server (and prompt cache) whose requests go to `model`."""
        return VLLMServerBackend(
            self.url, self.tokenizer, model=model, options=self.options, encoder=self._encode
        )

    # -- the server's state -----------------------------------------------------------------
    def models(self) -> list[dict[str, Any]]:
        """`/v1/models`: the base model first, then loaded adapters (their `parent` set)."""
        data = post_json(f"{self.url}/v1/models", None, **self.options.http())
        return list(data.get("data") or [])

    def base(self) -> dict[str, Any]:
        """The served base model's entry (`id`, `root`: its path on the server)."""
        listed = [m for m in self.models() if not m.get("parent")]
        if not listed:
            raise BackendError(f"{self.url}/v1/models lists no base model")
        entry = dict(listed[0])
        entry.setdefault("root", entry.get("id"))
        return entry

    def health(self) -> None:
        """Raises a BackendError naming the server unless `/health` answers."""
        http_request(f"{self.url}/health", None, **self.options.http())

    def load_adapter(self, name: str, path: str) -> None:
        """Load the LoRA adapter folder `path` (as the server sees it) under `name`."""
        http_request(
            f"{self.url}/v1/load_lora_adapter",
            {"lora_name": name, "lora_path": str(path)},
            **self.options.http(),
        )

    def unload_adapter(self, name: str) -> None:
        http_request(
            f"{self.url}/v1/unload_lora_adapter", {"lora_name": name}, **self.options.http()
        )

    # -- generation -------------------------------------------------------------------------
    def _model(self) -> str:
        if self.model is None:
            self.model = str(self.base()["id"])
        return self.model

    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        if not chats:
            return []
        if self.tokenizer is None:
            raise BackendError(f"{self.name}: no tokenizer to encode the prompts with")
        prompts = self._encode(chats)
        seeds_ = row_seeds(sampling, len(chats), seeds)
        model = self._model()
        bodies = [self._body(model, p, sampling, s) for p, s in zip(prompts, seeds_)]
        workers = min(self.options.max_concurrency, len(bodies))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            answers = list(pool.map(self._complete, bodies))
        return [
            self._generation(answer, prompt, sampling) for answer, prompt in zip(answers, prompts)
        ]

    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        return post_json(f"{self.url}/v1/completions", body, **self.options.http())

    @staticmethod
    def _body(
        model: str, prompt: list[int], sampling: SamplingParams, seed: int | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "prompt": prompt,
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "logprobs": 0,  # the sampled token's own log-prob
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "add_special_tokens": False,  # the prompt is the chat template's tokens already
            "skip_special_tokens": True,
        }
        if sampling.top_k:
            body["top_k"] = sampling.top_k
        if seed is not None:
            body["seed"] = seed
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        return body

    def _generation(
        self, data: dict[str, Any], prompt: list[int], sampling: SamplingParams
    ) -> Generation:
        try:
            choice = data["choices"][0]
            text = choice.get("text") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendError(
                f"{self.url}/v1/completions sent an unexpected response: {str(data)[:300]}"
            ) from exc
        logprobs = choice.get("logprobs") or {}
        tokens = [str(t) for t in logprobs.get("tokens") or []]
        if choice.get("token_ids") is not None:
            token_ids = [int(t) for t in choice["token_ids"]]
        elif tokens and all(t.startswith("token_id:") for t in tokens):
            token_ids = [int(t.split(":", 1)[1]) for t in tokens]
        else:
            raise BackendError(
                f"{self.url} returned no generated token ids (training needs them: vLLM answers "
                "them with return_token_ids or return_tokens_as_token_ids)"
            )
        echoed = choice.get("prompt_token_ids")
        if echoed is not None and [int(t) for t in echoed] != list(prompt):
            raise BackendError(
                f"{self.url} sampled from other prompt token ids than it was sent "
                "(it must not add special tokens to a token-id prompt)"
            )
        lps = [float(p) if p is not None else 0.0 for p in logprobs.get("token_logprobs") or []]
        if len(lps) != len(token_ids):
            lps = []
        text, cut = cut_at_stop(text, sampling.stop)
        finish = "length" if choice.get("finish_reason") == "length" and not cut else "stop"
        return Generation(text, token_ids, lps, list(prompt), finish)

    def score_spans(self, chats, replies, spans) -> list[float]:
        raise NotImplementedError(
            f"{self.name}: scoring runs on the trainer's own policy, not on the generation server"
        )
