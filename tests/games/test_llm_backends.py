"""The backend interface and the transformers backend on the tiny local model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from games.llm import build_backend
from games.llm.base import BackendError, SamplingParams, cut_at_stop, encode_prompt, row_seeds
from games.llm.chat import guesser_messages
from games.types import Turn, Verdict

ROOT = Path(__file__).resolve().parents[2]
GREEDY = SamplingParams(max_new_tokens=6, temperature=0)
HISTORY = [
    Turn(0, "Is it an animal?", Verdict.YES, "Yes."),
    Turn(1, "Is it a pet?", Verdict.NO, "No."),
]
CHATS = [guesser_messages([]), guesser_messages(HISTORY[:1]), guesser_messages(HISTORY)]


def test_light_modules_import_without_torch_or_django():
    modules = [
        "games",
        "games.llm",
        "games.llm.base",
        "games.llm.chat",
        "games.llm.memory",
        "games.llm.openai_backend",
        "games.llm.vllm_backend",
        "games.judges.llm",
        "games.judges.ensemble",
        "games.guessers.llm",
        "games.belief",
        "games.rollout",
    ]
    code = (
        f"import sys; {'; '.join(f'import {m}' for m in modules)}; "
        "print(sorted(m for m in ('torch', 'django', 'transformers', 'vllm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_sampling_params_validate():
    with pytest.raises(ValueError):
        SamplingParams(max_new_tokens=0)
    with pytest.raises(ValueError):
        SamplingParams(top_p=0)
    assert SamplingParams(stop="?").stop == ("?",)
    assert SamplingParams(temperature=0).greedy


def test_row_seeds_and_stop_helpers():
    assert row_seeds(SamplingParams(), 2, None) == [None, None]
    assert row_seeds(SamplingParams(), 2, [5, 6]) == [5, 6]
    derived = row_seeds(SamplingParams(seed=1), 3, None)
    assert len(set(derived)) == 3 and derived == row_seeds(SamplingParams(seed=1), 3, None)
    with pytest.raises(ValueError):
        row_seeds(SamplingParams(), 2, [1])
    assert cut_at_stop("Is it red? No", ("?", "No")) == ("Is it red", True)
    assert cut_at_stop("plain", ("?",)) == ("plain", False)


def test_missing_model_folder_names_the_path(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(BackendError, match=str(missing)):
        build_backend(f"transformers:{missing}")


def test_hub_id_is_not_downloaded_by_default():
    with pytest.raises(BackendError, match="hub downloads are off"):
        build_backend("transformers:some-org/some-model-that-is-not-cached")


def test_batched_greedy_matches_one_by_one(tiny_backend):
    tiny_backend.clear_cache()
    single = [tiny_backend.generate([chat], GREEDY)[0] for chat in CHATS]
    tiny_backend.clear_cache()
    batched = tiny_backend.generate(CHATS, GREEDY)
    for one, many in zip(single, batched):
        assert one.token_ids == many.token_ids
        assert one.logprobs == pytest.approx(many.logprobs, abs=1e-4)
        assert many.prompt_token_ids == encode_prompt(
            tiny_backend.tokenizer, CHATS[batched.index(many)]
        )
        assert len(many.token_ids) == len(many.logprobs) <= GREEDY.max_new_tokens


def test_logprobs_are_log_softmax_at_the_sampling_temperature(tiny_backend):
    import torch

    sampling = SamplingParams(max_new_tokens=3, temperature=0.7, seed=3)
    gen = tiny_backend.generate(CHATS[:1], sampling)[0]
    ids = torch.tensor([gen.prompt_token_ids + gen.token_ids])
    with torch.no_grad():
        logits = tiny_backend.model(input_ids=ids).logits[0].float()
    n = len(gen.prompt_token_ids)
    expected = [
        float(torch.log_softmax(logits[n - 1 + k] / 0.7, -1)[tok])
        for k, tok in enumerate(gen.token_ids)
    ]
    assert gen.logprobs == pytest.approx(expected, abs=1e-4)


def test_seeded_sampling_is_reproducible_and_independent_of_the_batch(tiny_backend):
    sampling = SamplingParams(max_new_tokens=12, temperature=1.0)
    first = tiny_backend.generate(CHATS, sampling, seeds=[1, 2, 3])
    reordered = tiny_backend.generate(CHATS[::-1], sampling, seeds=[3, 2, 1])[::-1]
    alone = tiny_backend.generate(CHATS[1:2], sampling, seeds=[2])
    assert [g.token_ids for g in first] == [g.token_ids for g in reordered]
    assert first[1].token_ids == alone[0].token_ids
    other = tiny_backend.generate(CHATS, sampling, seeds=[4, 5, 6])
    assert [g.token_ids for g in other] != [g.token_ids for g in first]


def test_top_k_one_is_greedy(tiny_backend):
    greedy = tiny_backend.generate(CHATS, GREEDY)
    top1 = tiny_backend.generate(
        CHATS, SamplingParams(max_new_tokens=6, temperature=1.0, top_k=1), seeds=[1, 2, 3]
    )
    nucleus = tiny_backend.generate(
        CHATS, SamplingParams(max_new_tokens=6, temperature=1.0, top_p=1e-6), seeds=[1, 2, 3]
    )
    assert (
        [g.token_ids for g in top1]
        == [g.token_ids for g in greedy]
        == [g.token_ids for g in nucleus]
    )


def test_stop_strings_cut_the_text(tiny_backend):
    sampling = SamplingParams(max_new_tokens=16, temperature=1.0)
    free = tiny_backend.generate(CHATS[:1], sampling, seeds=[11])[0]
    assert len(free.text) > 6 and free.finish_reason == "length"
    stop = free.text[3:6]
    cut = tiny_backend.generate(
        CHATS[:1], SamplingParams(max_new_tokens=16, temperature=1.0, stop=(stop,)), seeds=[11]
    )[0]
    assert cut.text == free.text[: free.text.find(stop)]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == free.token_ids[: len(cut.token_ids)] and len(cut.token_ids) < len(
        free.token_ids
    )


def test_end_of_turn_token_stops_generation(tiny_backend, monkeypatch):
    first = tiny_backend.generate(CHATS[:1], GREEDY)[0].token_ids[0]
    monkeypatch.setattr(tiny_backend, "eos_ids", tiny_backend.eos_ids | {first})
    gen = tiny_backend.generate(CHATS[:1], GREEDY)[0]
    assert gen.token_ids == [first] and gen.finish_reason == "stop" and gen.text == ""


def test_prefix_cache_gives_the_same_results(tiny_model_dir, tiny_backend):
    from games.llm.transformers_backend import TransformersBackend

    plain = TransformersBackend(str(tiny_model_dir), precision="float32", prefix_cache_mb=0)
    sampling = SamplingParams(max_new_tokens=8, temperature=1.0)
    tiny_backend.clear_cache()
    tiny_backend.generate(
        CHATS[:2], sampling, seeds=[1, 2]
    )  # fills the cache with the shorter prompts
    assert tiny_backend._cache.entries
    reused = tiny_backend.stats["reused_tokens"]
    cached = tiny_backend.generate(CHATS, sampling, seeds=[7, 8, 9])
    assert (
        tiny_backend.stats["reused_tokens"] - reused
        >= 2 * len(encode_prompt(tiny_backend.tokenizer, CHATS[0])) - 2
    )
    fresh = plain.generate(CHATS, sampling, seeds=[7, 8, 9])
    assert [g.token_ids for g in cached] == [g.token_ids for g in fresh]
    for a, b in zip(cached, fresh):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    replies = ["Is it a dog?"] * 3
    assert tiny_backend.score(CHATS, replies) == pytest.approx(
        plain.score(CHATS, replies), abs=1e-4
    )


def test_score_is_the_sum_of_continuation_logprobs(tiny_backend):
    import torch

    tok = tiny_backend.tokenizer
    chat, reply = CHATS[1], "Is it a dog?"
    prompt = encode_prompt(tok, chat)
    full = tok(
        tok.apply_chat_template([*chat, {"role": "assistant", "content": reply}], tokenize=False),
        add_special_tokens=False,
    )["input_ids"]
    reply_ids = tok(reply, add_special_tokens=False)["input_ids"]
    assert (
        full[: len(prompt)] == prompt
        and full[len(prompt) : len(prompt) + len(reply_ids)] == reply_ids
    )
    with torch.no_grad():
        logp = torch.log_softmax(
            tiny_backend.model(input_ids=torch.tensor([full])).logits[0].float(), -1
        )
    expected = sum(float(logp[len(prompt) + k - 1, t]) for k, t in enumerate(reply_ids))
    got = tiny_backend.score([chat, CHATS[0]], [reply, "No."])
    assert got[0] == pytest.approx(expected, abs=1e-4)
    assert got[1] < 0
    with pytest.raises(ValueError):
        tiny_backend.score_spans([chat], [reply], [(3, 3)])


def test_max_batch_size_chunks_give_the_same_results(tiny_model_dir, tiny_backend):
    from games.llm.transformers_backend import TransformersBackend

    small = TransformersBackend(
        str(tiny_model_dir), precision="float32", max_batch_size=2, prefix_cache_mb=0
    )
    sampling = SamplingParams(max_new_tokens=5, temperature=1.0)
    assert [g.token_ids for g in small.generate(CHATS, sampling, seeds=[1, 2, 3])] == [
        g.token_ids for g in tiny_backend.generate(CHATS, sampling, seeds=[1, 2, 3])
    ]


# -- vLLM: the glue on a stand-in engine (CPU), the real engine on GPU nodes ------------------
# -- the pieces behind the fast path ------------------------------------------------------------
def test_prefix_store_finds_longest_prefix_drops_extended_entries_and_keeps_its_budget():
    import torch

    from games.llm.prefix_cache import BLOCK, PrefixStore

    def buffers(batch: int, width: int):  # keys == values == position index, to check copies
        grid = torch.arange(width, dtype=torch.float32).repeat(batch, 1, 1)[
            ..., None
        ]  # [b, 1, width, 1]
        return [(grid.clone(), grid.clone())]

    store = PrefixStore(budget_bytes=10_000)
    base = list(range(100, 100 + 3 * BLOCK))
    store.add([base], buffers(1, 3 * BLOCK), [[(0, 3 * BLOCK)]])
    longer = base + [7, 8, 9]
    ((n, entry),) = store.lookup([longer], [len(longer)])
    assert n == 3 * BLOCK and entry is not None
    ((n, _),) = store.lookup([longer], [2 * BLOCK + 5])  # the reuse limit is respected
    assert n == 2 * BLOCK + 5
    forked = base[: BLOCK + 3] + [1] * (2 * BLOCK)
    ((n, _),) = store.lookup([forked], [len(forked)])
    assert n == BLOCK + 3  # whole blocks through hashes, then token by token
    out = [(torch.zeros(1, 1, 40, 1), torch.zeros(1, 1, 40, 1))]
    entry.copy_prefix(BLOCK + 3, out, 0, at=2)
    assert out[0][0][0, 0, 2 : BLOCK + 5, 0].tolist() == list(range(BLOCK + 3))

    # an entry stored at two segments (left padding in between) reads back in order
    split = buffers(1, 5 * BLOCK)
    store.add([longer], split, [[(0, 2 * BLOCK), (3 * BLOCK, 4 * BLOCK + 3)]])
    assert len(store.entries) == 1  # `base` is a prefix of `longer`: dropped
    ((n, entry),) = store.lookup([longer], [len(longer)])
    assert n == len(longer)
    out = [(torch.zeros(1, 1, 60, 1), torch.zeros(1, 1, 60, 1))]
    entry.copy_prefix(n, out, 0, at=0)
    assert out[0][0][0, 0, :n, 0].tolist() == list(range(2 * BLOCK)) + list(
        range(3 * BLOCK, 4 * BLOCK + 3)
    )

    # over budget (4 bytes * 2 tensors per position): the least recently used entries go first
    small = PrefixStore(budget_bytes=8 * 3 * BLOCK)
    a, b = [1] * (2 * BLOCK), [2] * (2 * BLOCK)
    small.add([a], buffers(1, 2 * BLOCK), [[(0, 2 * BLOCK)]])
    small.add([b], buffers(1, 2 * BLOCK), [[(0, 2 * BLOCK)]])
    assert [e.tokens[0] for e in small.entries.values()] == [2]
    assert small.lookup([a], [len(a)]) == [(0, None)]


def test_an_ended_games_entry_cannot_pin_its_batch_buffer_past_the_budget():
    # a batch buffer lives while any of its rows' entries does: counted whole, so a game that
    # ended (its entry never extended) cannot keep every turn's buffer of its batch alive
    import torch

    from games.llm.prefix_cache import BLOCK, PrefixStore

    def buffers(batch: int, width: int):
        return [(torch.zeros(batch, 1, width, 1), torch.zeros(batch, 1, width, 1))]

    one = 2 * 4 * 4 * 3 * BLOCK  # keys and values, 4 rows, 4 bytes, 3 blocks
    store = PrefixStore(budget_bytes=one)
    rows = [[r] * (2 * BLOCK) for r in range(1, 5)]
    store.add(rows, buffers(4, 3 * BLOCK), [[(0, 2 * BLOCK)]] * 4)
    assert store.held_bytes == one
    longer = [row + [9] * 8 for row in rows[:3]]  # the fourth game ended
    store.add(longer, buffers(3, 3 * BLOCK), [[(0, 2 * BLOCK + 8)]] * 3)
    assert store.held_bytes <= store.budget  # the first buffer went with the ended game's entry
    assert [len(e.tokens) for e in store.entries.values()] == [2 * BLOCK + 8] * 3
    assert store.add(rows, buffers(8, 30 * BLOCK), [[(0, 2 * BLOCK)]] * 4) is None
    assert store.held_bytes <= store.budget  # a buffer larger than the budget is not stored


def test_prompt_encoder_matches_plain_tokenisation_and_memoises(tiny_backend):
    from games.llm.base import PromptEncoder, encode_prompts

    encoder = PromptEncoder(tiny_backend.tokenizer)
    chats = CHATS + [guesser_messages([Turn(0, "naïve ünïcödé <|end|> text?", Verdict.NO, "No.")])]
    assert encoder(chats) == encode_prompts(tiny_backend.tokenizer, chats)
    assert encoder._split is not None and "\nNo." in encoder._pieces
    assert encoder(chats[::-1]) == encode_prompts(tiny_backend.tokenizer, chats[::-1])


def test_prompt_encoder_falls_back_when_pieces_do_not_compose(tiny_backend, monkeypatch):
    from games.llm.base import PromptEncoder, encode_prompts

    encoder = PromptEncoder(tiny_backend.tokenizer)
    encoder._ids = {name: 0 for name in encoder._ids}  # a tokenizer whose special tokens differ
    assert encoder(CHATS) == encode_prompts(tiny_backend.tokenizer, CHATS)
    assert encoder._split is None


def test_from_model_and_lora_adapters(tiny_model_dir, tiny_backend, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from games.llm.transformers_backend import TransformersBackend

    wrapped = TransformersBackend.from_model(tiny_backend.model, tiny_backend.tokenizer)
    assert wrapped._cache is None
    assert [g.token_ids for g in wrapped.generate(CHATS, GREEDY)] == [
        g.token_ids for g in tiny_backend.generate(CHATS, GREEDY)
    ]

    torch.manual_seed(0)
    lora = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False),
    )
    lora.save_pretrained(tmp_path / "adapter")
    tuned = TransformersBackend(
        str(tiny_model_dir), precision="float32", adapter=str(tmp_path / "adapter")
    )
    reply = ["Is it a dog?"] * len(CHATS)
    with torch.no_grad():
        expected = TransformersBackend.from_model(lora.eval(), tiny_backend.tokenizer).score(
            CHATS, reply
        )
    assert tuned.score(CHATS, reply) == pytest.approx(expected, abs=1e-4)
    assert tuned.score(CHATS, reply) != pytest.approx(tiny_backend.score(CHATS, reply), abs=1e-3)
    with pytest.raises(BackendError, match="adapter folder not found"):
        TransformersBackend(
            str(tiny_model_dir), precision="float32", adapter=str(tmp_path / "missing")
        )


def test_the_prefix_store_grows_to_hold_a_lock_step_batch(tiny_model_dir):
    # a batch of games whose histories exceed prefix_cache_mb (an evaluation of 64 games at 20
    # turns wants ~1 GB of SmolLM2's keys and values) finds them all on the next turn
    from games.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(str(tiny_model_dir), precision="float32", prefix_cache_mb=0.001)
    budget = backend._cache.budget
    vocab = backend.tokenizer.vocab_size
    prompts = [[(7 * row + i) % (vocab - 10) + 5 for i in range(40)] for row in range(4)]
    sampling = SamplingParams(max_new_tokens=6, temperature=1.0)
    first = backend.generate_ids(prompts, sampling, seeds=[1, 2, 3, 4])
    assert backend._cache.budget > budget
    turn_two = [p + g.token_ids + [9, 10, 11] for p, g in zip(prompts, first)]
    reused = backend.stats["reused_tokens"]
    backend.generate_ids(turn_two, sampling, seeds=[5, 6, 7, 8])
    assert backend.stats["reused_tokens"] - reused >= sum(len(p) for p in prompts)
    capped = TransformersBackend(
        str(tiny_model_dir), precision="float32", prefix_cache_mb=0.001, prefix_cache_grows=False
    )
    capped.generate_ids(prompts, sampling, seeds=[1, 2, 3, 4])
    assert capped._cache.budget == budget  # a hard cap where asked


def test_rows_sharing_a_start_compute_it_once(tiny_model_dir, tiny_backend):
    from games.llm.transformers_backend import TransformersBackend

    tiny_backend.clear_cache()
    before = dict(tiny_backend.stats)
    sampling = SamplingParams(max_new_tokens=4, temperature=1.0)
    shared = tiny_backend.generate(CHATS, sampling, seeds=[1, 2, 3])
    start = (
        len(encode_prompt(tiny_backend.tokenizer, CHATS[0])) - 1
    )  # system + first prompt, less the cue
    assert tiny_backend.stats["reused_tokens"] - before["reused_tokens"] >= 3 * (start - 16)
    plain = TransformersBackend(
        str(tiny_model_dir), precision="float32", prefix_cache_mb=0
    ).generate(CHATS, sampling, seeds=[1, 2, 3])
    assert [g.token_ids for g in shared] == [g.token_ids for g in plain]
