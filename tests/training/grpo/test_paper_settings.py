"""The GRPO job's defaults are the ΔBelief-RL reference's where a researcher meets them (issue 48):
StarPO's λ, the end-of-turn token's mask, the question budget, validation, the log-ratio clamp,
the mini-batch order and the win rule's help."""

from __future__ import annotations

import math

import pytest
import torch

from games import rules
from games.types import Verdict
from tests.training.grpo.conftest import make_trajectory, make_turn
from training.common.config import field_metadata
from training.grpo import rollouts as grpo_rollouts
from training.grpo import update as grpo_update
from training.grpo.batch import build_rows, collate
from training.grpo.config import GRPOConfig
from training.grpo.loss import per_token_loss


def test_starpo_means_no_belief_bonus_unless_lambda_is_set():
    """The paper's StarPO runs have λ 0, its CIA runs 0.1; an explicit λ always wins."""
    assert GRPOConfig().belief_coef == 0.1
    starpo = GRPOConfig(advantage="trajectory")
    assert starpo.belief_coef == 0.0
    assert starpo.resolved()["belief_coef"] == 0.0 and starpo.to_dict()["belief_coef"] == 0.0
    assert GRPOConfig(advantage="trajectory", belief_coef=0.1).belief_coef == 0.1
    assert GRPOConfig(advantage="turn", belief_coef=0.0).belief_coef == 0.0
    assert GRPOConfig(advantage="trajectory", belief_coef=None).belief_coef == 0.0
    assert field_metadata(GRPOConfig, "belief_coef")["paper"] == {"CIA": 0.1, "StarPO": 0.0}


def test_the_cli_takes_lambda_and_presets(tmp_path):
    from training.common.cli import config_parser, take_preset
    from training.grpo.config import GRPO_PRESETS

    parser = config_parser(GRPOConfig, "grpo", "")
    args = parser.parse_args(["--belief-coef", "0.3", "--out", str(tmp_path)])
    assert args.belief_coef == 0.3
    argv, preset = take_preset(["--preset", "cpu", "--steps", "2"], GRPOConfig.PRESETS)
    assert argv == ["--steps", "2"] and preset == GRPO_PRESETS["cpu"]


def test_the_end_of_turn_token_is_context_not_trained(grpo_tiny):
    from training.grpo.batch import end_of_turn_ids

    model, tokenizer = grpo_tiny
    end = end_of_turn_ids(tokenizer, model)
    assert tokenizer.eos_token_id in end
    prompt = tokenizer("Is it a dog?", add_special_tokens=False)["input_ids"]
    question = tokenizer("Is it alive?", add_special_tokens=False)["input_ids"]
    actions = [*question, tokenizer.eos_token_id]
    extra = {"prompt_token_ids": prompt, "token_ids": actions, "logprobs": [-1.0] * len(actions)}
    game = make_trajectory("dog", [make_turn(0, Verdict.YES, extra=extra)])
    (masked,) = build_rows([game], [[1.0]], end)
    (trained,) = build_rows([game], [[1.0]])
    assert masked.input_ids == trained.input_ids == [*prompt, *actions]  # still in the sequence
    assert masked.action_mask == [0] * len(prompt) + [1] * len(question) + [0]
    assert trained.action_mask[-1] == 1
    batch = collate([masked], tokenizer.pad_token_id)
    assert int(batch["mask"].sum()) == len(question)
    assert GRPOConfig().mask_end_of_turn is True


def test_rollouts_mask_the_end_of_turn_token_by_default(grpo_tiny, tmp_path):
    from games.llm.chat import GuesserFormat

    model, tokenizer = grpo_tiny
    values = dict(base_model="unused", max_turns=2, secrets_per_step=1, num_generations=2)
    for mask, expected in ((True, {tokenizer.eos_token_id}), (False, set())):
        config = GRPOConfig(mask_end_of_turn=mask, val_secrets=0, **values)
        rollouts = grpo_rollouts.Rollouts(
            config, model, tokenizer, "unused", tmp_path, GuesserFormat(max_turns=2)
        )
        assert set(rollouts.end_of_turn) == expected


def test_a_question_has_the_papers_fifty_tokens_and_the_cpu_preset_keeps_32():
    assert GRPOConfig().max_completion_length == 50
    assert field_metadata(GRPOConfig, "max_completion_length")["paper"] == 50
    assert GRPOConfig.from_preset("cpu").max_completion_length == 32


def test_validation_defaults_to_the_papers_val_words_four_games_every_four_steps():
    c = GRPOConfig()
    assert (c.val_word_list, c.val_secrets, c.val_games, c.val_steps) == (
        "dbrl/paper_val",
        -1,
        4,
        4,
    )
    assert GRPOConfig.from_preset("cpu").val_secrets == 0  # a CPU run: no validation games


def test_every_validation_word_is_played_val_games_times(monkeypatch):
    from games.judges.kb import KBJudge

    config = GRPOConfig(val_secrets=-1, val_word_list="x", allow_val_overlap=True)
    words = ["dog", "apple", "car"]
    assert grpo_rollouts.validation_secrets(config, KBJudge(), ["cat"], words) == words
    played = []

    class Recorder:
        def play(self, step, secrets, seeds, judge, *, validation=False):
            played.extend(zip(secrets, seeds))
            return [make_trajectory(s, [make_turn(0, Verdict.FINISHED)]) for s in secrets]

    metrics = grpo_rollouts.validate(Recorder(), words, None, 0, games_per_secret=4)
    assert [s for s, _ in played] == [w for w in words for _ in range(4)]
    assert len({seed for _, seed in played}) == 12 and metrics["val/success_rate"] == 1.0


def test_a_job_that_validates_on_its_training_words_is_refused_unless_told():
    with pytest.raises(ValueError, match="allow_val_overlap"):
        GRPOConfig(word_list="dbrl/paper_val")  # trains on the validation words
    with pytest.raises(ValueError, match="val_word_list is empty"):
        GRPOConfig(val_word_list="")  # would validate on the training secrets
    assert GRPOConfig(word_list="dbrl/paper_val", allow_val_overlap=True).allow_val_overlap
    assert GRPOConfig(word_list="dbrl/paper_val", val_secrets=0).val_secrets == 0  # no validation
    assert GRPOConfig(val_word_list="", allow_val_overlap=True).val_word_list == ""


def test_the_log_ratio_is_clamped_at_twenty_before_exp():
    assert GRPOConfig().log_ratio_clamp == 20.0
    logps, old = torch.tensor([[60.0, -60.0]]), torch.zeros(1, 2)
    parts = per_token_loss(logps, old, torch.tensor([-1.0]), torch.ones(1, 2))
    assert parts.ratio[0].tolist() == pytest.approx([math.exp(20), math.exp(-20)], rel=1e-5)
    assert torch.isfinite(parts.per_token_loss).all()
    wide = per_token_loss(logps, old, torch.tensor([-1.0]), torch.ones(1, 2), log_ratio_clamp=None)
    assert wide.ratio[0, 0] > math.exp(50)


def test_mini_batches_are_runs_of_whole_groups_in_order_unless_shuffled(grpo_tiny, monkeypatch):
    from types import SimpleNamespace

    from training.grpo.batch import Row

    assert grpo_update.contiguous_parts(list(range(10)), 3) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert GRPOConfig().shuffle_mini_batches is False
    model, _ = grpo_tiny
    dealt = []
    monkeypatch.setattr(
        grpo_update.Updater,
        "_chunks",
        lambda self, rows, own=None: [sorted({r.game for r in rows})],
    )
    monkeypatch.setattr(grpo_update.Updater, "_steps", lambda self, mbs, rows, n: dealt.append(mbs))
    rows = [Row(game=g, input_ids=[1]) for g in range(16)]
    accelerator = SimpleNamespace(mixed_precision="no")
    for shuffle in (False, True):
        config = GRPOConfig(mini_batches=2, num_generations=4, shuffle_mini_batches=shuffle)
        grpo_update.Updater(config, model, None, accelerator, 0).update(rows, list(range(16)), 1)
    in_order, shuffled = ([chunks[0] for chunks in mbs] for mbs in dealt)
    assert in_order == [list(range(8)), list(range(8, 16))]  # groups of 4 stay whole
    assert shuffled != in_order and sorted(sum(shuffled, [])) == list(range(16))


def test_the_win_rule_help_says_what_the_reference_rule_does():
    help_text = field_metadata(GRPOConfig, "win_rule")["help"]
    reference = help_text.split("lemma (")[0]
    assert "no lemma or stem match" in reference and "by token, lemma or stem" not in help_text
    # as games.rules runs it: a whole-word match wins, a lemma or stem match does not
    assert rules.wins("Is it related to jacket?", "jacket", "reference")
    assert not rules.wins("Is it made of wood?", "woods", "reference")
    assert rules.wins("Is it made of wood?", "woods", "lemma")
