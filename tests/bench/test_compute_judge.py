"""bench.compute's judge part: every variant measured on the same pairs, bf16 variants reading
differently from float32 but answering the same."""

from __future__ import annotations

from bench.compute_parts.judge import judge_variants

PAIRS = [
    ("dog", "Is it an animal?"),
    ("dog", "Is it a plant?"),
    ("apple", "Can you eat it?"),
    ("hammer", "Is it a tool?"),
    ("hammer", "Is it alive?"),
    ("pebble", "Can you hold it in your hand?"),
    ("ocean", "Is it bigger than a house?"),
    ("violin", "Does it make sound?"),
]


def test_judge_variants_reports_each_variant_against_float32():
    out = judge_variants(PAIRS, repeats=1, threads=1)
    variants = {"float32", "no_grad", "eager_attention", "token_sort", "autocast"}
    variants |= {"bf16_weights", "bf16_eager", "shipped"}
    assert set(out["answers_per_s"]) == variants and out["pairs"] == len(PAIRS)
    assert all(rate > 0 for rate in out["answers_per_s"].values())
    assert out["speedup"]["float32"] == 1.0 and out["threads"] == 1
    deltas = out["max_abs_logit_delta"]
    assert deltas["float32"] == 0 and deltas["token_sort"] < 1e-3  # the same numbers, reordered
    assert 0 < deltas["shipped"] < 0.2 and 0 < deltas["autocast"] < 0.2  # bf16: a little apart
    assert out["answer_flips"]["flipped"] == 0 and out["answer_flips"]["pairs"] == len(PAIRS)
    assert set(out["one_answer_ms"]) == {"float32", "shipped"}
