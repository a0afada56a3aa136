"""vLLM on GPU nodes: the same interface as the transformers backend, LoRA adapters per request.

`vllm` is imported inside the class only, so this module imports on any machine. One engine can
serve many adapters: `backend.with_adapter(path)` returns a backend sharing the engine whose
requests carry that adapter's `LoRARequest`.

Logprobs are what the engine reports for the sampled tokens. vLLM's default is the raw model
distribution (temperature 1); the transformers backend reports log-softmax at the sampling
temperature. Start the engine with `logprobs_mode="processed_logprobs"` (vLLM >= 0.10.2) to get
logprobs after temperature (and top-k/top-p) for importance ratios in training.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from games.llm.base import (
    BackendError,
    Chat,
    Generation,
    LLMBackend,
    SamplingParams,
    cut_at_stop,
    encode_reply_spans,
    row_seeds,
)


def vllm_dtype(precision: str, engine_options: dict[str, Any]) -> str:
    """vLLM's `dtype` for a precision (resolved for a GPU); a `dtype` option that disagrees is
    an error rather than silently one or the other."""
    from games.precision import resolve

    dtype = resolve(precision, "cuda")
    given = engine_options.get("dtype")
    if given is not None and given != dtype:
        raise BackendError(f"precision {precision!r} means dtype {dtype!r}, not {given!r}")
    return dtype


class VLLMBackend(LLMBackend):
    """Offline `vllm.LLM` engine; `engine_options` go to `vllm.LLM(...)`. `precision`
    (games.precision, on the GPU) becomes vLLM's `dtype`."""

    def __init__(
        self,
        model: str,
        *,
        adapter: str | None = None,
        max_lora_rank: int = 64,
        engine: Any = None,
        precision: str | None = None,
        **engine_options: Any,
    ):
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(
                "the vllm backend needs the `vllm` package (GPU workers only)"
            ) from exc
        self._vllm = vllm
        self.model = model
        if precision is not None:
            engine_options = {**engine_options, "dtype": vllm_dtype(precision, engine_options)}
        if engine is None:
            from games.base_models import BaseModelError, resolve_model

            try:
                model = resolve_model(model)  # a base model's name: its folder
            except BaseModelError as exc:
                raise BackendError(str(exc)) from exc
            if adapter is not None:
                engine_options.setdefault("enable_lora", True)
                engine_options.setdefault("max_lora_rank", max_lora_rank)
            engine = vllm.LLM(model=model, **engine_options)
        self.engine = engine
        self.adapter = adapter
        self.name = f"vllm:{model}" + (f"+{adapter}" if adapter else "")

    def with_adapter(self, adapter: str | None) -> VLLMBackend:
        """A backend on the same engine whose requests use `adapter` (None: the base model).
        The engine must have been started with `enable_lora=True`."""
        return VLLMBackend(self.model, adapter=adapter, engine=self.engine)

    def _lora(self) -> Any:
        if self.adapter is None:
            return None
        from vllm.lora.request import LoRARequest

        lora_id = 1 + zlib.crc32(self.adapter.encode()) % 1_000_000  # stable id per adapter path
        return LoRARequest(f"adapter-{lora_id}", lora_id, self.adapter)

    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        if not chats:
            return []
        params = [
            self._vllm.SamplingParams(
                max_tokens=sampling.max_new_tokens,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k if sampling.top_k else -1,
                seed=seed,
                stop=list(sampling.stop) or None,
                logprobs=0,  # the sampled token's logprob only
            )
            for seed in row_seeds(sampling, len(chats), seeds)
        ]
        outputs = self.engine.chat(
            [list(c) for c in chats],
            params,
            use_tqdm=False,
            lora_request=self._lora(),
            add_generation_prompt=True,
        )
        results = []
        for out in outputs:
            completion = out.outputs[0]
            token_ids = [int(t) for t in completion.token_ids]
            logprobs = [
                float(step[t].logprob) for t, step in zip(token_ids, completion.logprobs or [])
            ]
            text, _ = cut_at_stop(completion.text, sampling.stop)
            finish = "length" if completion.finish_reason == "length" else "stop"
            results.append(
                Generation(text, token_ids, logprobs, list(out.prompt_token_ids or []), finish)
            )
        return results

    def score_spans(
        self, chats: Sequence[Chat], replies: Sequence[str], spans: Sequence[tuple[int, int]]
    ) -> list[float]:
        if not len(chats) == len(replies) == len(spans):
            raise ValueError("chats, replies and spans must have the same length")
        if not chats:
            return []
        from vllm.inputs import TokensPrompt

        encoded = encode_reply_spans(self.engine.get_tokenizer(), chats, replies, spans)
        params = self._vllm.SamplingParams(max_tokens=1, temperature=1.0, prompt_logprobs=0)
        outputs = self.engine.generate(
            [TokensPrompt(prompt_token_ids=ids) for ids, _, _ in encoded],
            params,
            use_tqdm=False,
            lora_request=self._lora(),
        )
        scores = []
        for (ids, first, end), out in zip(encoded, outputs):
            # prompt_logprobs[p] holds log p(ids[p] | ids[:p]) (None at p = 0)
            scores.append(
                sum(float(out.prompt_logprobs[p][ids[p]].logprob) for p in range(first, end))
            )
        return scores
