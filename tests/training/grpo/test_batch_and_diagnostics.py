"""Multi-turn sequences from trajectories, rollout metrics, collapse warnings, config checks."""

from __future__ import annotations

import math

import pytest

from games.types import Verdict
from tests.training.grpo.conftest import make_trajectory, make_turn
from training.grpo.batch import build_rows, collate
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import CollapseMonitor, rollout_metrics

EOT = 99


def _tokens(prompt, actions, logps=None, finish="stop"):
    return {
        "prompt_token_ids": prompt,
        "token_ids": actions,
        "logprobs": logps or [-0.5] * len(actions),
        "finish_reason": finish,
    }


def _game():
    p0 = [1, 2, 3]
    p1 = p0 + [10, 11, EOT] + [50, 51]  # extends prompt 0 + its actions: judge feedback 50, 51
    p2 = p1 + [12, 77] + [52]  # the history shows 12, 77 where the model generated 12, EOT: new row
    p3 = p2 + [13] + [53, 54]  # extends the second row
    turns = [
        make_turn(0, Verdict.YES, extra=_tokens(p0, [10, 11, EOT], [-0.1, -0.2, -0.3])),
        make_turn(1, Verdict.NO, extra=_tokens(p1, [12, EOT], [-0.4, -0.5])),
        make_turn(2, Verdict.INVALID, extra=_tokens(p2, [13], [-0.6], finish="length")),
        make_turn(3, Verdict.NO, extra=_tokens(p3, [14, EOT], [-0.7, -0.8])),
    ]
    return make_trajectory("dog", turns), p2, p3


def test_a_game_becomes_one_row_while_prompts_extend_it_and_a_new_row_where_they_do_not():
    traj, p2, p3 = _game()
    rows = build_rows([traj], [[0.5, -1.0, 2.0, 0.25]])
    assert len(rows) == 2 and {r.game for r in rows} == {0}
    first, second = rows
    assert first.input_ids == [1, 2, 3, 10, 11, EOT, 50, 51, 12, EOT]
    assert first.action_mask == [0, 0, 0, 1, 1, 1, 0, 0, 1, 1]
    assert first.advantages == [0, 0, 0, 0.5, 0.5, 0.5, 0, 0, -1.0, -1.0]
    assert first.turn_index == [-1, -1, -1, 0, 0, 0, -1, -1, 1, 1]
    assert first.rollout_logps == pytest.approx([0, 0, 0, -0.1, -0.2, -0.3, 0, 0, -0.4, -0.5])
    assert (
        second.input_ids == p2 + [13] + [53, 54] + [14, EOT] and second.input_ids[: len(p3)] == p3
    )
    assert second.action_mask == [0] * len(p2) + [1] + [0, 0] + [1, 1]
    assert second.advantages[len(p2)] == 2.0 and second.advantages[-2:] == [0.25, 0.25]
    batch = collate(rows, pad_id=0)
    assert batch["input_ids"].shape == (2, len(second))
    # targets are input_ids[:, 1:]: the mask there marks the generated tokens exactly
    assert batch["input_ids"][0, 1:][batch["mask"][0].bool()].tolist() == [10, 11, EOT, 12, EOT]
    assert batch["advantages"][0][batch["mask"][0].bool()].tolist() == [0.5, 0.5, 0.5, -1.0, -1.0]
    assert batch["attention_mask"][0].tolist() == [1] * 10 + [0] * (len(second) - 10)
    assert batch["games"].tolist() == [0, 0]


def test_rows_refuse_turns_without_tokens_and_mismatched_advantages():
    traj, _, _ = _game()
    with pytest.raises(ValueError, match="advantages"):
        build_rows([traj], [[0.0]])
    bare = make_trajectory("dog", [make_turn(0, Verdict.NO)])
    with pytest.raises(ValueError, match="token ids"):
        build_rows([bare], [[0.0]])


def test_rollout_metrics_on_hand_games():
    traj, _, _ = _game()  # 4 turns, one invalid, lost
    won = make_trajectory(
        "cat",
        [
            make_turn(0, Verdict.REPEATED, extra=_tokens([1], [5, 6, 7, 8])),
            make_turn(1, Verdict.FINISHED, extra=_tokens([1], [5, 6])),
        ],
    )
    metrics = rollout_metrics(
        [traj, won, traj, traj], returns=[1.0, 3.0, 2.0, 2.0], groups=[0, 0, 1, 1]
    )
    assert metrics["reward"] == pytest.approx(2.0)
    assert metrics["reward_std"] == pytest.approx(math.sqrt(2 / 3))
    assert metrics["rollout/in_group_std"] == pytest.approx(
        math.sqrt(2) / 2
    )  # groups: sqrt(2) and 0
    assert metrics["frac_reward_zero_std"] == 0.5  # the two rollouts of group 1
    assert metrics["success_rate"] == 0.25 and metrics["mean_turns"] == pytest.approx(14 / 4)
    assert metrics["invalid_rate"] == pytest.approx(3 / 14) and metrics[
        "repeated_rate"
    ] == pytest.approx(1 / 14)
    assert metrics["completions/mean_length"] == pytest.approx((3 * 8 + 6) / 14)
    assert metrics["completions/clipped_ratio"] == pytest.approx(3 / 14)


def test_collapse_monitor_warns_on_std_and_entropy_drops_and_grad_norm_spikes():
    monitor = CollapseMonitor(window=4, drop_fraction=0.25, spike_factor=5.0, min_history=3)
    history = [(1.0, 2.0, 1.0), (0.01, 0.01, 100.0), (1.1, 2.1, 1.2), (0.9, 2.0, 0.9)]
    for (
        std,
        entropy,
        grad,
    ) in history:  # the 2nd step drops sharply but has too little history to judge
        flags, messages = monitor.check(
            {"rollout/in_group_std": std, "entropy": entropy, "grad_norm": grad}
        )
        assert messages == [] and not any(flags.values())
    # windows: std max 1.1 (0.27 < 0.275), entropy max 2.1 (0.4 < 0.525),
    # grad median of [1, 100, 1.2, 0.9] = 1.1
    flags, messages = monitor.check(
        {"rollout/in_group_std": 0.27, "entropy": 0.4, "grad_norm": 5.6}
    )
    assert flags == {
        "warning/reward_std_drop": 1.0,
        "warning/entropy_drop": 1.0,
        "warning/grad_norm_spike": 1.0,
    }
    assert "Reward std within groups fell to 0.27, below 25% of its maximum 1.1" in messages[0]
    assert "RAGEN" in messages[0] and "Policy entropy fell to 0.4" in messages[1]
    assert "Gradient norm spiked to 5.6, 5.1× its median 1.1" in messages[2]
    # the window slid (1.0 dropped out): std 0.3 ≥ 0.275, entropy 1.0 ≥ 0.525, grad median now 3.4
    flags, messages = monitor.check({"rollout/in_group_std": 0.3, "entropy": 1.0, "grad_norm": 5.4})
    assert messages == [] and not any(flags.values())
    flags, messages = monitor.check({"grad_norm": float("nan")})
    assert flags == {"warning/grad_norm_spike": 1.0} and "inf/NaN" in messages[0]
    restored = CollapseMonitor(window=4)
    restored.load(monitor.state())
    assert restored.state() == monitor.state()


def test_collapse_monitor_warns_when_validation_success_falls_below_its_start():
    monitor = CollapseMonitor(val_drop=0.15)
    flags, messages = monitor.check(
        {"val/success_rate": 0.5}
    )  # before training: the baseline, never a warning
    assert monitor.val_baseline == 0.5 and flags == {} and messages == []
    flags, messages = monitor.check(
        {"val/success_rate": 0.375}
    )  # 12.5 points lower: within the allowance
    assert flags == {"warning/val_success_drop": 0.0} and messages == []
    flags, messages = monitor.check({"entropy": 1.0})  # a step without validation: nothing to judge
    assert "warning/val_success_drop" not in flags
    flags, messages = monitor.check({"val/success_rate": 0.25})
    assert flags["warning/val_success_drop"] == 1.0
    assert (
        "Validation success fell to 25% from 50% before training" in messages[0]
        and "forgetting" in messages[0]
    )
    restored = CollapseMonitor(val_drop=0.15)
    restored.load(monitor.state())  # a resumed run compares with the same baseline
    assert restored.val_baseline == 0.5 and restored.state() == monitor.state()
    assert restored.check({"val/success_rate": 0.3})[0]["warning/val_success_drop"] == 1.0


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"num_generations": 1}, "num_generations"),
        ({"advantage": "token"}, "advantage"),
        ({"rollout_filter_ratio": 0.0}, "rollout_filter_ratio"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"loss_agg_mode": "sum"}, "loss_agg_mode"),
        ({"rollout_backend": "vllm", "lora": False}, "needs lora"),
        ({"mini_batches": 0}, "mini_batches"),
        ({"clip_ratio_c": 1.0}, "clip_ratio_c must be 0 .no dual clip. or in .1, 100."),
        ({"clip_ratio_c": 0.5}, "clip_ratio_c"),
        ({"clip_ratio_c": -1.0}, "clip_ratio_c"),
        ({"clip_ratio_c": float("nan")}, "clip_ratio_c"),
        ({"learning_rate": -1e-5}, "learning_rate must be 0 .the paper's for the advantage."),
        ({"learning_rate": 1.0}, "learning_rate"),
        ({"val_sampling": "beam"}, "val_sampling must be one of paper, greedy"),
        ({"temperature": 0.0}, "temperature"),
        ({"warn_grad_norm_factor": 1.0}, "warn_grad_norm_factor"),
        ({"unknown_penalty": float("nan")}, "finite"),
        ({"val_secrets": -2}, "val_secrets"),
        ({"val_games": 0}, "val_games"),
        ({"log_ratio_clamp": 0.0}, "log_ratio_clamp"),
        ({"val_split": "rl", "val_word_list": ""}, "val_split needs a val_word_list"),
        ({"val_word_list": "x", "val_split": "train"}, "val_split must be"),
        ({"val_steps": 0}, "val_steps"),
        ({"warn_val_drop": 0.0}, "warn_val_drop"),
    ],
)
def test_config_refuses_bad_values(bad, match):
    with pytest.raises(ValueError, match=match):
        GRPOConfig(**bad)


def test_config_defaults_are_the_papers():
    """The ΔBelief-RL reference's values (base_multiturn.yaml and its CIA / StarPO scripts)."""
    c = GRPOConfig()
    assert c.clip_ratio_c == 3.0 and c.weight_decay == 0.01  # verl's actor and optim defaults
    assert (c.lora, c.lora_rank, c.lora_alpha, c.lora_target_modules) == (
        True,
        64,
        64,
        "all-linear",
    )
    assert c.mini_batches == 3  # train_batch_size 240 / ppo_mini_batch_size 80
    assert (c.epsilon, c.epsilon_high, c.beta, c.belief_coef, c.rollout_filter_ratio) == (
        0.2,
        0.28,
        0.0,
        0.1,
        1.0,
    )
    assert (c.win_reward, c.invalid_penalty, c.repeated_penalty, c.turn_penalty) == (
        2.0,
        -5.0,
        -1.0,
        -0.05,
    )
    assert (c.turn_penalty_at, c.belief_on_finishing_turn, c.turn_normalisation) == (
        "end",
        False,
        "padded",
    )
    assert (c.adam_beta1, c.adam_beta2) == (0.9, 0.95)
    assert c.advantage == "turn" and c.aggregation == "token-mean"
    assert c.learning_rate == 0 and c.resolved_learning_rate == 3e-5  # the CIA script's
    starpo = GRPOConfig(advantage="trajectory")  # the paper's StarPO script
    assert starpo.aggregation == "seq-mean-token-mean" and starpo.resolved_learning_rate == 1e-5
    assert GRPOConfig(advantage="trajectory", learning_rate=2e-4).resolved_learning_rate == 2e-4
    assert c.val_sampling == "paper" and c.val_sampling_params == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
    }  # the reference's val_kwargs
    assert GRPOConfig(val_sampling="greedy").val_sampling_params["temperature"] == 0.0
    assert starpo.resolved() == {
        "belief_coef": 0.0,  # the StarPO script's: no ΔBelief
        "loss_agg_mode": "seq-mean-token-mean",
        "learning_rate": 1e-5,
        "val_sampling": {"name": "paper", "temperature": 0.7, "top_p": 0.8, "top_k": 20},
    }
    assert (
        GRPOConfig(advantage="trajectory", loss_agg_mode="token-mean").aggregation == "token-mean"
    )
    # the paper's step: 240 secrets × 16 games (train_batch_size, multi_turn.train.n); the CPU
    # sizing is the named setting `cpu`
    assert (c.secrets_per_step, c.num_generations, c.games_per_step) == (240, 16, 3840)
    cpu = GRPOConfig.from_preset("cpu")
    assert (cpu.secrets_per_step, cpu.num_generations, cpu.games_per_step) == (8, 8, 64)
    assert c.target_modules == "all-linear"
    assert (c.max_completion_length, c.log_ratio_clamp, c.mask_end_of_turn) == (50, 20.0, True)
    assert (c.val_word_list, c.val_games, c.val_steps, c.shuffle_mini_batches) == (
        "dbrl/paper_val",
        4,
        4,
        False,
    )
    # three mini-batches also build when a step has fewer games: the update makes fewer
    assert GRPOConfig(secrets_per_step=1, num_generations=2).mini_batches == 3
    assert GRPOConfig(lora_target_modules="q_proj, v_proj").target_modules == ["q_proj", "v_proj"]
