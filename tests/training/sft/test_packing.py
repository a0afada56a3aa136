"""Teacher games packed one sequence per game (training.sft.data.pack_games, training.sft.packing):
which rows join, the packed loss against the per-turn rows' on the tiny model, the token check,
max_tokens, and a job with pack_games."""

from __future__ import annotations

import copy
import io

import pytest
import torch

from games.llm.chat import GuesserFormat
from games.types import Verdict
from tests.training.sft.helpers import trajectory
from training.common.chat import IGNORE, encode_prompt_completion
from training.common.models import load_model
from training.sft.data import pack_games, turn_examples, unpack_game
from training.sft.packing import encode_packed, fit_rows

Y, N, F, INV = Verdict.YES, Verdict.NO, Verdict.FINISHED, Verdict.INVALID


def _games():
    return [
        trajectory(
            "dog",
            [("Is it an animal?", Y), ("Hmm", INV), ("Is it a pet?", Y), ("Is it a dog?", F)],
        ),
        trajectory("apple", [("Is it an animal?", N), ("Is it a fruit?", Y), ("Is it red?", Y)]),
        trajectory("car", [("Is it big?", Y)]),
    ]


@pytest.fixture(scope="module")
def model_and_tokenizer(tiny_dir):
    return load_model(str(tiny_dir))


def test_rows_of_a_game_pack_into_one_and_unpack_back():
    rows = turn_examples(_games(), GuesserFormat())
    recovery = {**rows[0], "turn": 9, "recovery": True}
    packed = pack_games([*rows, recovery])
    dog, apple, car, kept_recovery = packed
    assert [r.get("game") for r in packed] == [0, 1, 2, 0] and kept_recovery is recovery
    # the invalid turn stays in the chat, untrained: questions 1, 3, 4 of the dog game
    assert dog["turns"] == [0, 2, 3] and apple["turns"] == [0, 1, 2]
    assert [dog["messages"][i]["content"] for i in dog["trained"]] == [
        "Is it an animal?",
        "Is it a pet?",
        "Is it a dog?",
    ]
    assert dog["messages"][-1]["content"] == "Is it a dog?"  # the chat ends at its last question
    assert car == rows[-1]  # one row: nothing to pack
    assert unpack_game(dog) + unpack_game(apple) == rows[:-1]
    # a repeated row stays a row of its own (packing would train its question once)
    assert pack_games([rows[0], rows[0], rows[1]])[1] == rows[0]


def _summed_nll(model, ids, labels):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, :-1]
    targets = torch.tensor(labels[1:])
    trained = targets != IGNORE
    log_probs = torch.log_softmax(logits[trained].double(), -1)
    return -log_probs.gather(1, targets[trained][:, None]).sum().item(), int(trained.sum())


def test_the_packed_loss_is_the_sum_of_the_per_turn_losses(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    model.eval()
    rows = turn_examples(_games()[:2], GuesserFormat())
    for game in pack_games(rows):
        encoded = encode_packed(tokenizer, game)
        assert encoded is not None and len(encoded.spans) == len(game["trained"])
        packed_loss, packed_tokens = _summed_nll(model, encoded.input_ids, encoded.labels)
        per_turn = [
            _summed_nll(model, e.input_ids, e.labels)
            for e in (
                encode_prompt_completion(tokenizer, r["prompt"], r["completion"])
                for r in unpack_game(game)
            )
        ]
        assert packed_tokens == sum(n for _, n in per_turn)
        assert packed_loss == pytest.approx(sum(loss for loss, _ in per_turn), rel=1e-5)


def test_a_template_that_rewrites_earlier_turns_is_not_packed(model_and_tokenizer):
    _, tokenizer = model_and_tokenizer
    rewriting = copy.deepcopy(tokenizer)
    # earlier questions shown without their text, as templates that strip reasoning do
    rewriting.chat_template = (
        "{% for m in messages %}<|{{ m.role }}|>\n{% if m.role == 'assistant' %}{% generation %}"
        "{% if loop.last %}{{ m.content }}{% else %}...{% endif %}<|end|>{% endgeneration %}\n"
        "{% else %}{{ m.content }}<|end|>\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    rows = turn_examples(_games()[:1], GuesserFormat())
    (game,) = pack_games(rows)
    assert encode_packed(rewriting, game) is None
    kept, dropped = fit_rows(rewriting, [game], max_tokens=10_000)
    assert kept == rows and dropped == 0  # trained per turn instead
    assert encode_packed(tokenizer, game) is not None


def test_max_tokens_keeps_the_questions_whose_own_rows_fit(model_and_tokenizer):
    _, tokenizer = model_and_tokenizer
    rows = turn_examples(_games()[:1], GuesserFormat())
    lengths = [len(encode_prompt_completion(tokenizer, r["prompt"], r["completion"])) for r in rows]
    limit = lengths[1]  # the first two questions fit, the third does not
    assert lengths[2] > limit
    kept, dropped = fit_rows(tokenizer, pack_games(rows), max_tokens=limit)
    per_turn, per_turn_dropped = fit_rows(tokenizer, rows, max_tokens=limit)
    (cut,) = kept
    assert dropped == per_turn_dropped == 1 and unpack_game(cut) == per_turn
    assert len(encode_packed(tokenizer, cut).input_ids) == limit
    assert fit_rows(tokenizer, pack_games(rows), max_tokens=lengths[0] - 1) == ([], 3)


def test_an_sft_job_with_pack_games_trains_one_row_per_game(tiny_dir, tmp_path):
    from training.reporting import ConsoleReporter
    from training.sft.config import SFTJobConfig
    from training.sft.trainer import run

    config = SFTJobConfig(
        base_model="x", global_batch_size=4, per_device_batch_size=4, max_steps=1, pack_games=True
    )
    stream = io.StringIO()
    reporter = ConsoleReporter(tmp_path, stream=stream)
    pool = ["dog", "cat", "apple", "pear", "car", "bus", "chair", "table"]
    result = run(
        config, reporter, model_path=str(tiny_dir), words=["dog", "apple", "car"], pool=pool
    )
    assert result["global_step"] == 1 and result["examples"] <= result["games"] == 3
    assert "packed into" in stream.getvalue()
