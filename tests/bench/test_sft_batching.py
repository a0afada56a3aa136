"""bench.compute_parts.sft_batching on the tiny model: every variant measured, and the shared
prompt and packed games giving the plain path's loss."""

from __future__ import annotations

import pytest

from tests.training.sft.helpers import tiny_model


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return tiny_model(tmp_path_factory)


def test_every_variant_is_measured_with_the_plain_paths_loss(tiny_dir):
    from bench.compute_parts.sft_batching import PAPER_VARIANTS, sft_batching

    out = sft_batching(
        rows=4, batch_size=4, teacher_words=1, threads=1, lora_rank=4, model=str(tiny_dir)
    )
    paper, teacher = out["paper_rows"], out["teacher_games"]
    assert set(paper["variants"]) == set(PAPER_VARIANTS) and paper["rows"] == 4
    assert paper["variants"]["float32_shared"]["loss_rel_diff"] < 1e-5
    assert teacher["packed_rows"] == 1 < teacher["turn_rows"]
    assert teacher["trained_tokens"] == teacher["trained_tokens_packed"]
    variants = teacher["variants"]
    assert teacher["precision"] == "bfloat16" and variants["packed_plain"]["loss_rel_diff"] < 0.02
    assert all(v["seconds"] > 0 and v["speedup"] > 0 for v in variants.values())
    assert len(out["load_average_before"]) == 3
