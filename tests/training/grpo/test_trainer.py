"""End to end on the CPU: a tiny model, two GRPO steps, every diagnostic, checkpoints, stop and
resume."""

from __future__ import annotations

import io
import json

import pytest
import torch

from training.grpo import rollouts as grpo_rollouts
from training.grpo import session as grpo_session
from training.grpo import trainer as grpo_trainer
from training.grpo import update as grpo_update
from training.grpo.config import GRPOConfig
from training.reporting import ConsoleReporter, StopRequested

WORDS = ["dog", "cat", "apple", "table"]
DIAGNOSTICS = (
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "rollout/in_group_std",
    "success_rate",
    "mean_turns",
    "invalid_rate",
    "repeated_rate",
    "entropy",
    "kl",
    "clip_ratio/low_mean",
    "clip_ratio/high_mean",
    "grad_norm",
    "completions/mean_length",
    "tokens_per_second",
    "logprob_diff/rollout_abs_mean",
    "loss",
    "warning/reward_std_drop",
    "warning/entropy_drop",
    "warning/grad_norm_spike",
    "belief/delta_mean",
    # the belief diagnostic (belief_coef 0.1 and belief_diagnostic by default)
    "belief/grounded_turns",
    "belief/relu_per_game",
    "belief/net_per_game",
)


def _config(**overrides) -> GRPOConfig:
    values = dict(
        base_model="unused",
        steps=2,
        secrets_per_step=2,
        num_generations=2,
        max_turns=2,
        max_completion_length=6,
        temperature=1.0,
        learning_rate=3e-3,
        save_steps=1,
        rollout_filter_ratio=1.0,
        num_iterations=2,
        mini_batches=2,
        beta=0.04,
        cpu_threads=2,
        precision="float32",  # exactness checks below (sampler vs trainer log-probs)
        forward_batch_size=2,
        val_secrets=0,  # validation, where a test turns it on: one game on training secrets
        val_games=1,
        val_word_list="",
        allow_val_overlap=True,
        seed=3,
    )
    values.update(overrides)
    return GRPOConfig(**values)


def _metrics(reporter: ConsoleReporter) -> list[dict]:
    return [r for r in reporter.records if r["event"] == "metrics"]


def test_two_steps_log_every_diagnostic_save_checkpoints_and_start_each_update_at_ratio_one(
    grpo_tiny_dir, tmp_path, monkeypatch
):
    calls = []
    real_loss = grpo_update.grpo_loss

    def recording_loss(logps, old, advantages, mask, **kwargs):
        loss, parts = real_loss(logps, old, advantages, mask, **kwargs)
        calls.append(parts.ratio.detach()[mask.bool()])
        return loss, parts

    monkeypatch.setattr(grpo_update, "grpo_loss", recording_loss)
    reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
    result = grpo_trainer.run(_config(), reporter, model_path=str(grpo_tiny_dir), words=WORDS)

    steps = _metrics(reporter)
    assert [m["step"] for m in steps] == [1, 2]
    for m in steps:
        missing = [name for name in DIAGNOSTICS if name not in m]
        assert not missing, f"step {m['step']} lacks {missing}"
        assert m["train/optimizer_steps"] == 4.0  # 2 iterations × 2 mini-batches
        # the trainer's log-probs of the sampled tokens are the sampler's (masks and shifts line up)
        assert m["logprob_diff/rollout_abs_mean"] < 1e-4
        assert m["kl"] >= 0 and m["entropy"] > 0
    # The first inner step of every update has ratio exactly 1; later ones compare with the
    # pre-update log-probs, which the earlier optimizer steps have moved away from.
    per_step = len(calls) // 2
    for first in (calls[0], calls[per_step]):
        assert first.numel() > 0 and bool((first == 1.0).all())
    assert any(bool((c != 1.0).any()) for c in calls[1:per_step])

    folder = tmp_path / "run" / "checkpoint-2"
    assert (
        result["final_checkpoint"] == str(folder)
        and result["global_step"] == 2
        and result["is_adapter"]
    )
    assert (folder / "adapter_config.json").is_file() and (
        folder / "adapter_model.safetensors"
    ).is_file()
    assert (folder / "optimizer.pt").is_file() and (folder / "tokenizer.json").is_file()
    saved = json.loads((folder / "training_config.json").read_text())
    assert saved["kind"] == "grpo" and saved["step"] == 2 and saved["config"]["beta"] == 0.04
    assert saved["resolved"]["base_model_path"] == str(grpo_tiny_dir)
    events = [r for r in reporter.records if r["event"] == "checkpoint"]
    assert [e["step"] for e in events] == [1, 2] and all(e["is_adapter"] for e in events)
    state = json.loads((folder / "trainer_state.json").read_text())
    assert state["global_step"] == 2 and len(state["monitor"]["entropy"]) == 2


def test_stop_then_resume_continues_exactly_where_it_left_off(grpo_tiny_dir, tmp_path):
    config = _config(
        beta=0.0,
        num_iterations=1,
        mini_batches=1,
        advantage="trajectory",
        belief_coef=0.0,
        loss_agg_mode="seq-mean-token-mean",
    )
    straight = ConsoleReporter(tmp_path / "straight", stream=io.StringIO())
    grpo_trainer.run(config, straight, model_path=str(grpo_tiny_dir), words=WORDS)

    stopping = ConsoleReporter(tmp_path / "resumed", stream=io.StringIO(), stop_after_progress=0.5)
    with pytest.raises(StopRequested):
        grpo_trainer.run(config, stopping, model_path=str(grpo_tiny_dir), words=WORDS)
    assert [m["step"] for m in _metrics(stopping)] == [1]
    again = ConsoleReporter(
        tmp_path / "resumed", stream=io.StringIO()
    )  # a new process: finds checkpoint-1
    result = grpo_trainer.run(config, again, model_path=str(grpo_tiny_dir), words=WORDS)
    assert result["resumed_from"] == 1 and [m["step"] for m in _metrics(again)] == [2]
    # Same secrets, same seeds, same weights and optimizer state: step 2 is the uninterrupted
    # run's step 2.
    want, got = _metrics(straight)[1], _metrics(again)[0]
    for key in ("reward", "mean_turns", "completions/mean_length", "loss", "grad_norm"):
        assert got[key] == pytest.approx(want[key], rel=1e-5, abs=1e-7), key
    a = torch.load(tmp_path / "straight" / "checkpoint-2" / "optimizer.pt", weights_only=True)
    b = torch.load(tmp_path / "resumed" / "checkpoint-2" / "optimizer.pt", weights_only=True)
    assert a["state"][0]["step"] == b["state"][0]["step"] == 2


def test_validation_plays_fixed_secrets_as_the_paper_samples_and_warns_when_success_falls(
    grpo_tiny_dir, tmp_path, monkeypatch
):
    plays, samplings = [], []
    real_play, real_validate = grpo_trainer.Rollouts.play, grpo_trainer.validate
    real_guesser = grpo_rollouts.LLMGuesser

    def recording_play(self, step, secrets, seeds, judge, *, validation=False):
        plays.append((step, list(secrets), validation, list(seeds)))
        return real_play(self, step, secrets, seeds, judge, validation=validation)

    def recording_guesser(backend, *, sampling, **kwargs):
        samplings.append(sampling)
        return real_guesser(backend, sampling=sampling, **kwargs)

    def forgetting_validate(
        rollouts, words, judge, step, ranks=None, games_per_secret=1
    ):  # real games; success forced to fall after step 0
        return {
            **real_validate(rollouts, words, judge, step, ranks, games_per_secret),
            "val/success_rate": 1.0 if step == 0 else 0.0,
        }

    monkeypatch.setattr(grpo_trainer.Rollouts, "play", recording_play)
    monkeypatch.setattr(grpo_rollouts, "LLMGuesser", recording_guesser)
    monkeypatch.setattr(grpo_trainer, "validate", forgetting_validate)
    config = _config(
        steps=3, val_secrets=2, val_steps=2, beta=0.0, num_iterations=1, mini_batches=1
    )
    reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
    result = grpo_trainer.run(
        config,
        reporter,
        model_path=str(grpo_tiny_dir),
        words=WORDS,
        val_words=["cat", "table", "apple"],
    )

    validations = [p for p in plays if p[2]]
    assert [p[0] for p in validations] == [
        0,
        2,
        3,
    ]  # before training, every val_steps, after the last step
    chosen = validations[0][1]
    assert len(chosen) == 2 and set(chosen) <= {"cat", "table", "apple"}
    assert all(p[1] == chosen for p in validations)  # the same fixed secrets every time
    assert all(p[3] == validations[0][3] for p in validations)  # and the same seeds: reproducible
    # the reference's validation sampling (val_kwargs); training samples at the temperature
    assert len(samplings) == len(plays)
    for (_, _, validation, _), sampling in zip(plays, samplings):
        want = (0.7, 0.8, 20) if validation else (1.0, 1.0, 0)
        assert (sampling.temperature, sampling.top_p, sampling.top_k) == want
    assert all(
        not p[2] and len(p[1]) == 4 for p in plays if p not in validations
    )  # training: sampled, 2×2 games
    logged = {m["step"]: m for m in _metrics(reporter) if "val/valid_rate" in m}
    assert (
        sorted(logged) == [0, 2, 3]
        and 0 <= logged[0]["val/valid_rate"] <= 1
        and logged[0]["val/mean_turns"] >= 1
    )
    assert "val/success_rate" not in next(m for m in _metrics(reporter) if m["step"] == 1)
    assert logged[2]["warning/val_success_drop"] == 1.0
    warnings = [
        r["message"] for r in reporter.records if r["event"] == "log" and r["level"] == "warning"
    ]
    assert any(w.startswith("step 2: Validation success fell to 0% from 100%") for w in warnings)
    assert result["validation"] == {
        "secrets": 2,
        "games_per_secret": 1,
        "sampling": "paper",
        "before": 1.0,
        "last": 0.0,
    }
    logs = [r["message"] for r in reporter.records if r["event"] == "log"]
    assert any(
        m.startswith(
            "validation on 2 secrets before training "
            "(paper sampling: T 0.7, top-p 0.8, top-k 20): success"
        )
        for m in logs
    )
    saved = json.loads((tmp_path / "run" / "checkpoint-3" / "training_config.json").read_text())
    assert saved["resolved"]["val_sampling"] == {
        "name": "paper",
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
    }


@pytest.mark.parametrize(
    "val_sampling, want", [("paper", (0.7, 0.8, 20)), ("greedy", (0.0, 1.0, 0))]
)
def test_validation_games_sample_as_val_sampling_says_and_replay_the_same(
    grpo_tiny, tmp_path, monkeypatch, val_sampling, want
):
    from games.judges.kb import KBJudge
    from games.llm.chat import GuesserFormat

    samplings = []
    real_guesser = grpo_rollouts.LLMGuesser

    def recording_guesser(backend, *, sampling, **kwargs):
        samplings.append(sampling)
        return real_guesser(backend, sampling=sampling, **kwargs)

    monkeypatch.setattr(grpo_rollouts, "LLMGuesser", recording_guesser)
    model, tokenizer = grpo_tiny
    config = _config(val_secrets=2, val_sampling=val_sampling, belief_coef=0.0)
    rollouts = grpo_rollouts.Rollouts(
        config, model, tokenizer, "unused", tmp_path, GuesserFormat(max_turns=2)
    )
    first, again = (
        rollouts.play(0, ["dog", "cat"], [5, 6], KBJudge(), validation=True) for _ in range(2)
    )
    assert [(s.temperature, s.top_p, s.top_k) for s in samplings] == [want, want]
    questions = [[t.question for t in g.turns] for g in first]
    assert questions == [[t.question for t in g.turns] for g in again]  # seeded: reproducible


def test_validation_secrets_default_to_a_seeded_sample_of_the_training_secrets():
    from games.judges.kb import KBJudge

    judge = KBJudge()
    sample = grpo_trainer.validation_secrets(_config(val_secrets=3), judge, WORDS, None)
    assert len(sample) == 3 and set(sample) <= set(WORDS)
    assert sample == grpo_trainer.validation_secrets(_config(val_secrets=3), judge, WORDS, None)
    assert grpo_trainer.validation_secrets(_config(val_secrets=0), judge, WORDS, None) == []
    assert grpo_trainer.validation_secrets(
        _config(val_secrets=9), judge, WORDS, ["dog", "qwxzv"]
    ) == ["dog"]
    with pytest.raises(ValueError, match="no validation secret"):
        grpo_trainer.validation_secrets(_config(val_secrets=1), judge, WORDS, ["qwxzv"])


def test_step_secrets_cover_every_word_once_per_pass():
    words = [f"w{i}" for i in range(5)]
    first_pass = [w for s in (1, 2) for w in grpo_trainer.step_secrets(words, s, 2, seed=0)][:5]
    assert sorted(first_pass[:4] + grpo_trainer.step_secrets(words, 3, 2, seed=0)[:1]) == sorted(
        words
    )
    assert grpo_trainer.step_secrets(words, 2, 2, seed=0) == grpo_trainer.step_secrets(
        words, 2, 2, seed=0
    )
    assert grpo_trainer.step_secrets(words, 1, 5, seed=0) != grpo_trainer.step_secrets(
        words, 1, 5, seed=1
    )


def test_information_gain_shaping_reaches_every_rollout_turn(grpo_tiny_dir, tmp_path, monkeypatch):
    pool_file = tmp_path / "pool.txt"
    pool_file.write_text("car\nbird\ndog\n")
    seen = []
    real = grpo_trainer.add_info_gain

    def recording(trajectories, model, coef):
        totals = real(trajectories, model, coef)
        seen.append((model.words, coef, trajectories, totals))
        return totals

    monkeypatch.setattr(grpo_trainer, "add_info_gain", recording)
    reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
    config = _config(
        steps=1,
        beta=0.0,
        num_iterations=1,
        mini_batches=1,
        belief_coef=0.0,
        infogain_coef=0.7,
        pool_word_list=str(pool_file),
    )
    grpo_trainer.run(config, reporter, model_path=str(grpo_tiny_dir), words=WORDS)

    ((words, coef, trajectories, totals),) = seen
    assert words == [
        "car",
        "bird",
        "dog",
        "cat",
        "apple",
        "table",
    ]  # the pool, then the secrets it lacks
    assert coef == 0.7 and len(trajectories) == 4
    assert all(
        "info_gain" in t.reward and t.candidates_left is not None
        for g in trajectories
        for t in g.turns
    )
    (m,) = _metrics(reporter)
    assert m["rollout/info_gain_bits"] == pytest.approx(sum(totals) / 4)
    assert m["reward"] == pytest.approx(
        sum(sum(t.total_reward for t in g.turns) for g in trajectories) / 4
    )


def test_a_pool_without_the_information_gain_reward_or_the_belief_diagnostic_is_refused():
    with pytest.raises(ValueError, match="infogain_coef"):
        _config(pool_word_list="dbrl/solved", belief_diagnostic=False)
    with pytest.raises(ValueError, match="infogain_coef"):
        _config(pool_word_list="dbrl/solved", belief_coef=0.0)
    assert _config(pool_word_list="dbrl/solved").belief_diagnostic  # the diagnostic's candidates
    with pytest.raises(ValueError, match="infogain_coef"):
        _config(infogain_coef=-1.0)


def test_the_win_rule_and_the_rewards_reach_the_games(grpo_tiny_dir, tmp_path, monkeypatch):
    """Training can play under either win rule: the games it rolls out carry the config's."""
    seen = []
    real_rollout = grpo_rollouts.rollout

    def recording_rollout(*args, **kwargs):
        seen.append(kwargs["config"])
        return real_rollout(*args, **kwargs)

    monkeypatch.setattr(grpo_rollouts, "rollout", recording_rollout)
    config = _config(steps=1, win_rule="strict", invalid_penalty=-3.0, num_iterations=1, beta=0.0)
    grpo_trainer.run(
        config,
        ConsoleReporter(tmp_path / "run", stream=io.StringIO()),
        model_path=str(grpo_tiny_dir),
        words=WORDS,
    )
    assert seen and all(c.win_rule == "strict" and c.invalid_penalty == -3.0 for c in seen)
    with pytest.raises(ValueError, match="win_rule"):
        _config(win_rule="lenient")


def test_the_papers_defaults_run_on_a_step_with_fewer_games_than_mini_batches(
    grpo_tiny_dir, tmp_path, monkeypatch
):
    """mini_batches 3 (the paper's), the paper's learning rate for CIA (3e-5, learning_rate 0),
    weight decay 0.01 and the dual clip on 1 secret × 2 games: two mini-batches of one game each,
    never an empty one; the resolved config and the metrics say what was in force."""
    optimizers = []
    real_trainee = grpo_session.trainee

    def recording_trainee(*args):
        policy, tokenizer, optimizer = real_trainee(*args)
        optimizers.append(optimizer)
        return policy, tokenizer, optimizer

    monkeypatch.setattr(grpo_session, "trainee", recording_trainee)
    defaults = GRPOConfig()
    config = _config(
        steps=1,
        secrets_per_step=1,
        num_iterations=1,
        beta=0.0,
        **{
            k: getattr(defaults, k)
            for k in ("mini_batches", "learning_rate", "weight_decay", "clip_ratio_c")
        },
    )
    assert (config.mini_batches, config.learning_rate, config.clip_ratio_c) == (3, 0.0, 3.0)
    reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
    grpo_trainer.run(config, reporter, model_path=str(grpo_tiny_dir), words=WORDS)

    (m,) = _metrics(reporter)
    assert m["train/optimizer_steps"] == 2.0 and m["learning_rate"] == 3e-5
    assert 0 <= m["clip_ratio/dual_mean"] <= 1
    (group,) = optimizers[0].param_groups
    assert (group["lr"], group["weight_decay"]) == (3e-5, 0.01)
    saved = json.loads((tmp_path / "run" / "checkpoint-1" / "training_config.json").read_text())
    assert saved["config"]["learning_rate"] == 0.0
    assert (saved["resolved"]["learning_rate"], saved["resolved"]["loss_agg_mode"]) == (
        3e-5,
        "token-mean",
    )
    logs = [r["message"] for r in reporter.records if r["event"] == "log"]
    assert any("lr=3e-05, loss_agg_mode=token-mean" in line for line in logs)
