"""The vLLM backend's glue, on a stand-in engine, and against transformers where vLLM is installed
(a GPU worker's image)."""

from __future__ import annotations

import sys

import pytest

from games.llm import build_backend
from games.llm.base import BackendError, SamplingParams, encode_prompt
from games.llm.chat import guesser_messages
from games.types import Turn, Verdict

HISTORY = [
    Turn(0, "Is it an animal?", Verdict.YES, "Yes."),
    Turn(1, "Is it a pet?", Verdict.NO, "No."),
]
CHATS = [guesser_messages([]), guesser_messages(HISTORY[:1]), guesser_messages(HISTORY)]


class _Logprob:
    def __init__(self, logprob: float):
        self.logprob = logprob


class _FakeVLLM:
    """Just enough of vllm's module surface: LLM, SamplingParams, LoRARequest, TokensPrompt."""

    def __init__(self, tokenizer):
        import types

        fake = self
        self.engines, self.calls = [], []

        class LLM:
            def __init__(self, model, **options):
                self.model, self.options = model, options
                fake.engines.append(self)

            def get_tokenizer(self):
                return tokenizer

            def chat(
                self, messages, sampling_params, use_tqdm, lora_request, add_generation_prompt
            ):
                fake.calls.append(("chat", messages, sampling_params, lora_request))
                completion = types.SimpleNamespace(
                    text="Is it red? more",
                    token_ids=[5, 6],
                    finish_reason="length",
                    logprobs=[{5: _Logprob(-0.5), 9: _Logprob(-1)}, {6: _Logprob(-0.25)}],
                )
                return [
                    types.SimpleNamespace(outputs=[completion], prompt_token_ids=[1, 2])
                    for _ in messages
                ]

            def generate(self, prompts, sampling_params, use_tqdm, lora_request):
                fake.calls.append(("generate", prompts, sampling_params, lora_request))
                return [
                    types.SimpleNamespace(
                        prompt_logprobs=[None]
                        + [
                            {t: _Logprob(-p)}
                            for p, t in enumerate(prompt["prompt_token_ids"][1:], 1)
                        ]
                    )
                    for prompt in prompts
                ]

        self.modules = {
            "vllm": types.SimpleNamespace(LLM=LLM, SamplingParams=lambda **kw: kw),
            "vllm.lora": types.SimpleNamespace(),
            "vllm.lora.request": types.SimpleNamespace(
                LoRARequest=lambda name, lora_id, path: (name, lora_id, path)
            ),
            "vllm.inputs": types.SimpleNamespace(
                TokensPrompt=lambda prompt_token_ids: {"prompt_token_ids": prompt_token_ids}
            ),
        }


def test_vllm_glue_on_a_stand_in_engine(tiny_backend, monkeypatch):
    from games.llm.base import encode_reply_span
    from games.llm.chat import belief_reply

    fake = _FakeVLLM(tiny_backend.tokenizer)
    for name, module in fake.modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    base = build_backend("vllm:/models/m", gpu_memory_utilization=0.5)
    gens = base.generate(
        CHATS[:2], SamplingParams(max_new_tokens=7, temperature=0.5, stop=("?",)), seeds=[3, 4]
    )
    kind, messages, params, lora = fake.calls[-1]
    assert (
        messages == CHATS[:2]
        and lora is None
        and fake.engines[0].options == {"gpu_memory_utilization": 0.5}
    )
    assert [(p["seed"], p["max_tokens"], p["top_k"], p["stop"], p["logprobs"]) for p in params] == [
        (3, 7, -1, ["?"], 0),
        (4, 7, -1, ["?"], 0),
    ]
    assert (gens[0].text, gens[0].token_ids, gens[0].logprobs) == (
        "Is it red",
        [5, 6],
        [-0.5, -0.25],
    )
    assert gens[0].prompt_token_ids == [1, 2] and gens[0].finish_reason == "length"

    tuned = base.with_adapter("/ckpt/lora-1")
    assert (
        tuned.engine is base.engine
        and len(fake.engines) == 1
        and tuned.name.endswith("+/ckpt/lora-1")
    )
    reply, span = belief_reply("snake")
    scores = tuned.score_spans(CHATS[:1], [reply], [span])
    kind, prompts, params, lora = fake.calls[-1]
    ids, first, end = encode_reply_span(tiny_backend.tokenizer, CHATS[0], reply, span)
    assert (
        kind == "generate"
        and prompts[0]["prompt_token_ids"] == ids
        and params["prompt_logprobs"] == 0
    )
    assert lora[2] == "/ckpt/lora-1" and lora == tuned.with_adapter("/ckpt/lora-1")._lora()
    assert scores == [pytest.approx(-sum(range(first, end)))]


def test_vllm_precision_becomes_the_engine_dtype(tiny_backend, monkeypatch):
    fake = _FakeVLLM(tiny_backend.tokenizer)
    for name, module in fake.modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    build_backend("vllm:/models/m", precision="bfloat16")
    build_backend("vllm:/models/m", precision="auto")  # no bf16 GPU here: float32
    build_backend("vllm:/models/m", precision="bf16", dtype="bfloat16")
    assert [e.options for e in fake.engines] == [
        {"dtype": "bfloat16"},
        {"dtype": "float32" if not _cuda_bf16() else "bfloat16"},
        {"dtype": "bfloat16"},
    ]
    with pytest.raises(BackendError, match="precision 'float32' means dtype 'float32'"):
        build_backend("vllm:/models/m", precision="float32", dtype="bfloat16")


def _cuda_bf16() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def test_vllm_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import fails
    with pytest.raises(BackendError, match="needs the `vllm` package"):
        build_backend("vllm:/models/m")


@pytest.mark.gpu
def test_vllm_engine_agrees_with_transformers(tiny_model_dir, tiny_backend):
    pytest.importorskip("vllm")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    backend = build_backend(
        f"vllm:{tiny_model_dir}", gpu_memory_utilization=0.2, enforce_eager=True, dtype="float32"
    )
    gens = backend.generate(
        CHATS, SamplingParams(max_new_tokens=6, temperature=1.0), seeds=[1, 2, 3]
    )
    for gen, chat in zip(gens, CHATS):
        assert gen.prompt_token_ids == encode_prompt(tiny_backend.tokenizer, chat)
        assert len(gen.token_ids) == len(gen.logprobs) and all(lp <= 0 for lp in gen.logprobs)
    replies = ["Is it a dog?"] * 3
    assert backend.score(CHATS, replies) == pytest.approx(
        tiny_backend.score(CHATS, replies), abs=1e-2
    )
