"""LLM backends behind one interface (`games.llm.base.LLMBackend`).

Backends are imported lazily: importing this package never imports torch, transformers,
vllm or an HTTP client.

    build_backend("transformers:/models/tiny")            # local folder (or hub id, allow_hub=True)
    build_backend("vllm:/models/qwen3-1.7b", adapter=...)  # GPU nodes
    build_backend("openai:http://127.0.0.1:8000/v1#qwen")  # any OpenAI-compatible server
    build_backend("vllm-server:http://gen:8000")           # vLLM serve, token ids and adapters
"""

from __future__ import annotations

from typing import Any

from games.llm.base import BackendError, Chat, Generation, LLMBackend, SamplingParams

BACKEND_KINDS = ("transformers", "vllm", "openai", "vllm-server")


def build_backend(spec: str, **options: Any) -> LLMBackend:
    """A backend from `KIND:TARGET` (see the module docstring); `options` go to its constructor.
    A spec without a known kind prefix is a transformers model folder or hub id."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in BACKEND_KINDS:
        kind, target = "transformers", spec
    if not target:
        raise ValueError(f"backend spec {spec!r} names no model")
    if kind == "transformers":
        from games.llm.transformers_backend import TransformersBackend

        return TransformersBackend(target, **options)
    if kind == "vllm":
        from games.llm.vllm_backend import VLLMBackend

        return VLLMBackend(target, **options)
    if kind == "vllm-server":
        from games.llm.vllm_server import VLLMServerBackend

        return VLLMServerBackend.from_spec(target, **options)
    from games.llm.openai_backend import OpenAIBackend

    return OpenAIBackend.from_spec(target, **options)


__all__ = [
    "BACKEND_KINDS",
    "BackendError",
    "Chat",
    "Generation",
    "LLMBackend",
    "SamplingParams",
    "build_backend",
]
