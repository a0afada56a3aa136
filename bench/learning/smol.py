"""The learning benchmark on a pretrained base: `python -m bench.learning --base
smollm2-135m-instruct [--device cuda]` (issue 32).

The paper's pipeline in the paper's world, instead of the knowledge-base miniature: SmolLM2-135M-
Instruct + LoRA SFT on the paper's own SFT turns (training.sft `source=reference`, the
`smol-20q-sft` setting), then StarPO and CIA from that one SFT adapter (training.grpo with the
paper's defaults, as the paper starts every RL seed from one SFT checkpoint) on `dbrl/train_rl`
secrets against the pretrained judge; every arm played on `dbrl/paper_test` (and `paper_val`,
where settings are chosen), success under the reference and strict rules with mean@k intervals,
valid questions, the bits the answers gained (the knowledge base's narrowing over the paper's
words) and whether ΔBelief tracks them (games.belief_progress); a second judge (the KB's) plays
the first `check_words` test words beside. The ordering is the miniature's: paired bootstrap
intervals over test words and seeds (bench.learning.ordering).

`SmolScale()` is the CPU miniature, `CUDA` the full study sized for a GPU; `--set FIELD=VALUE`
changes one setting. Stages are stored in the work folder, so `--resume` continues stage by stage.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bench.learning.ordering import GRPO_ARMS
from bench.learning.stages import reporter_for

BASE = "smollm2-135m-instruct"
# the candidates the bits are counted over: every word of the paper's lists
NARROWING_LISTS = ("dbrl/train_rl", "dbrl/paper_val", "dbrl/paper_test")


@dataclass(frozen=True)
class SmolScale:
    world: str = "smollm2"
    base: str = BASE
    device: str = "cpu"
    seeds: str = "0"  # GRPO seeds (one SFT model, evaluated with each seed's sampling seeds)
    threads: int = 2
    judge: str = "pretrained"  # the environment's judge (training and the test tables)
    check_judge: str = "kb"  # plays the first `check_words` test words beside it
    win_rule: str = "reference"
    max_turns: int = 20
    # -- SFT on the paper's turns (smol-20q-sft) ----------------------------------------------
    sft_rows: int = 768  # a seeded sample of the 48,335 rows (0 = every row)
    sft_epochs: float = 1.0
    sft_lr: float = 2e-4
    sft_global_batch: int = 16
    sft_device_batch: int = 4
    # -- StarPO and CIA (training.grpo, the paper's defaults unless set here) -------------------
    grpo_steps: int = 4
    grpo_secrets: int = 2
    grpo_generations: int = 4
    grpo_forward_batch: int = 8
    # -- evaluation ----------------------------------------------------------------------------
    test_words: int = 100  # the first N of paper_test (0 = all 433)
    val_words: int = 50  # the first N of paper_val (0 = all)
    check_words: int = 50  # test words the check judge plays too (0 = none)
    eval_samples: int = 2  # k
    eval_sampling: str = "paper"  # paper: T 0.7, top-p 0.8, top-k 20; model: T 1
    eval_batch: int = 64
    belief: bool = True  # score ΔBelief in the test games (the diagnostic)
    latency_games: int = 3  # SFT games played one at a time to time each question (0 = none)

    @property
    def seed_list(self) -> list[int]:
        return [int(s) for s in self.seeds.split("+")]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The full study on one GPU, sized by estimate to about 10 minutes of an H100 (not yet measured):
# SFT on every row for one epoch at the paper's global batch, then 3 seeds × 2 arms of GRPO.
CUDA = SmolScale(
    device="cuda",
    seeds="0+1+2",
    threads=8,
    sft_rows=0,
    sft_lr=1e-4,
    sft_global_batch=256,
    sft_device_batch=64,
    grpo_steps=8,
    grpo_secrets=8,
    grpo_generations=8,
    grpo_forward_batch=32,
    test_words=0,
    val_words=0,
    check_words=100,
    eval_samples=8,
    eval_batch=256,
)


def words_of(name: str, limit: int = 0) -> list[str]:
    from games.wordlists import read_words

    words = read_words(name)
    return words[:limit] if limit else words


def smol_sft(scale: SmolScale, work: Path) -> tuple[str, dict]:
    """SFT on the paper's turns: (the adapter folder, what was trained)."""
    from training.sft.config import SFTJobConfig
    from training.sft.trainer import run

    config = SFTJobConfig.from_preset(
        "smol-20q-sft",
        base_model=scale.base,
        max_turn_examples=scale.sft_rows,
        epochs=scale.sft_epochs,
        learning_rate=scale.sft_lr,
        global_batch_size=scale.sft_global_batch,
        per_device_batch_size=scale.sft_device_batch,
        cpu_threads=scale.threads if scale.device == "cpu" else 0,
        seed=0,
    )
    result = run(config, reporter_for(work / "sft", fresh=False))
    keep = ("examples", "games", "words", "global_step", "train_loss", "train_runtime")
    return result["final_checkpoint"], {k: result[k] for k in keep if k in result}


def smol_grpo(scale: SmolScale, work: Path, sft: str, arm: str, seed: int) -> tuple[dict, dict]:
    """One GRPO arm from the SFT adapter: ({"base": merged SFT weights, "adapter": the last
    checkpoint}, the run's summary)."""
    from training.grpo.config import GRPOConfig
    from training.grpo.trainer import run

    advantage, belief = GRPO_ARMS[arm]
    config = GRPOConfig(
        base_model=scale.base,
        judge=scale.judge,
        word_list="dbrl/train_rl",
        steps=scale.grpo_steps,
        secrets_per_step=scale.grpo_secrets,
        num_generations=scale.grpo_generations,
        max_turns=scale.max_turns,
        win_rule=scale.win_rule,
        guesser_prompt="paper",
        advantage=advantage,
        belief_coef=belief,
        forward_batch_size=scale.grpo_forward_batch,
        save_steps=scale.grpo_steps,
        cpu_threads=scale.threads if scale.device == "cpu" else 0,
        val_secrets=0,  # the study evaluates after training (smol_evaluate), no validation games
        seed=seed,
    )
    folder = work / f"{arm}-s{seed}"
    result = run(config, reporter_for(folder, fresh=False), model_path=scale.base, adapter_path=sft)
    model = {"base": str(folder / "base-merged"), "adapter": result["final_checkpoint"]}
    return model, {k: v for k, v in result.items() if k not in ("history",)}


def smol_evaluate(
    scale: SmolScale,
    base: str,
    adapter: str | None,
    words: list[str],
    judge_spec: str,
    *,
    seed: int,
    belief: bool,
    save_as: Path | None = None,
) -> dict[str, Any]:
    """`eval_samples` games per playable word against `judge_spec`, seeded by (seed, word,
    sample); the summary `summarise_smol` gives. `save_as`: the games, one JSON line each (what
    a shipped guesser's seeded evaluation imports)."""
    from games.judges.base import playable_words
    from games.llm.base import PAPER_VAL_SAMPLING
    from games.registry import build_guesser, build_judge
    from games.rollout import rollout
    from games.types import GameConfig

    started = time.perf_counter()
    judge = build_judge(judge_spec)
    playable, skipped = playable_words(judge, words)
    guesser = build_guesser(
        f"hf:{base}",
        adapter=adapter,
        device=scale.device,
        # room for every game of a batch (~45 KB of keys/values per token, ~1,400 tokens by turn
        # 20): smaller, a lock-step batch evicts each game before its next turn and every turn
        # prefills the whole chat again (measured: over 30 min for 64 games instead of minutes)
        prefix_cache_mb=max(1024, 64 * scale.eval_batch),
        max_batch_size=scale.eval_batch,
    )
    if scale.eval_sampling == "paper":
        guesser.sampling = replace(guesser.sampling, **PAPER_VAL_SAMPLING)
    k = scale.eval_samples
    secrets = [w for w in playable for _ in range(k)]
    seeds = [10_000 * seed + 100 * i + s for i in range(len(playable)) for s in range(k)]
    config = GameConfig(max_turns=scale.max_turns, win_rule=scale.win_rule)
    games = []
    for start in range(0, len(secrets), scale.eval_batch):
        games += rollout(
            guesser,
            judge,
            secrets[start : start + scale.eval_batch],
            seeds=seeds[start : start + scale.eval_batch],
            config=config,
            belief_backend=guesser.backend if belief else None,
        )
    if save_as is not None:
        from games.__main__ import save_games

        save_as.parent.mkdir(parents=True, exist_ok=True)
        save_games(games, str(save_as))
    out = summarise_smol(games, belief=belief)
    out |= {
        "judge": judge_spec,
        "samples_per_word": k,
        "sampling": {
            "name": scale.eval_sampling,
            **{f: getattr(guesser.sampling, f) for f in ("temperature", "top_p", "top_k")},
        },
        "skipped_words": len(skipped),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return out


def question_latency(
    scale: SmolScale, base: str, adapter: str | None, words: list[str]
) -> dict[str, Any]:
    """Seconds from an answer to the next question as a person playing one game sees them: games
    played one at a time (batch 1, the prefix cache warm as in a live game), every `ask` timed;
    p50/p95 over the questions (the /play/ target: a question within 3 s)."""
    from bench.guesser_latency import quantiles, timed_guesser
    from games.llm.base import PAPER_VAL_SAMPLING
    from games.registry import build_guesser, build_judge
    from games.rollout import rollout
    from games.types import GameConfig

    judge = build_judge(scale.judge)
    guesser = build_guesser(f"hf:{base}", adapter=adapter, device=scale.device)
    if scale.eval_sampling == "paper":
        guesser.sampling = replace(guesser.sampling, **PAPER_VAL_SAMPLING)
    timed: list[float] = []
    timed_guesser(guesser, timed)
    config = GameConfig(max_turns=scale.max_turns, win_rule=scale.win_rule)
    for i, word in enumerate(words):
        rollout(guesser, judge, [word], seeds=[i], config=config)
    return {
        "questions": len(timed),
        "games": len(words),
        **quantiles(timed),
        "threads": scale.threads,
    }


def summarise_smol(games: list, *, belief: bool) -> dict[str, Any]:
    """Success under the rule played and the strict one (mean@k over words, 95% interval), valid
    questions, invalid and repeated shares, turns, bits gained over the paper's words (KB-grounded
    turns), the belief diagnostic, and the per-word rates the ordering pairs."""
    from bench.learning.evaluate import rate_over_words, share, strict_win
    from games.belief_progress import belief_progress
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.kb.narrowing import grounded_bits
    from games.types import Verdict

    turns = [t for g in games for t in g.turns]
    per_word, success = rate_over_words(games, lambda g: g.won)
    strict_per_word, strict = rate_over_words(games, strict_win)
    pool = list(dict.fromkeys(w for name in NARROWING_LISTS for w in words_of(name)))
    model = candidate_model(load_kb(), pool)
    bits = [grounded_bits(model, g.turns) for g in games]
    gained = [math.fsum(b for b in game if b is not None) for game in bits]
    bits_by_word: dict[str, list[float]] = {}
    for g, b in zip(games, gained, strict=True):
        bits_by_word.setdefault(g.secret, []).append(b)

    def count(*verdicts: Verdict) -> dict:
        return share(sum(t.verdict in verdicts for t in turns), len(turns))

    return {
        "success": success,
        "strict_success": strict,
        "valid_questions": count(Verdict.YES, Verdict.NO, Verdict.FINISHED, Verdict.UNKNOWN),
        "invalid": count(Verdict.INVALID),
        "repeated": count(Verdict.REPEATED),
        "mean_turns": round(statistics.fmean(g.n_turns for g in games), 2),
        "bits_gained": round(statistics.fmean(gained), 3),
        "bits_available": round(math.log2(len(pool)), 3),
        "grounded_turns": share(sum(b is not None for game in bits for b in game), len(turns)),
        "belief": belief_progress(games, bits) if belief else None,
        "example": [f"{t.question} -> {t.verdict.value}" for t in games[0].turns][:12]
        + [f"secret: {games[0].secret}"],
        "per_word": {w: round(r, 4) for w, r in per_word.items()},
        "strict_per_word": {w: round(r, 4) for w, r in strict_per_word.items()},
        "bits_per_word": {w: round(statistics.fmean(v), 3) for w, v in bits_by_word.items()},
    }


def evaluations(
    scale: SmolScale, stage, name: str, model: dict, words: dict[str, list[str]], seed: int
) -> dict[str, dict]:
    """One model's stored evaluations: the test words (with ΔBelief when `belief`) and the
    validation words against the judge, the first `check_words` test words against the check
    judge."""

    def ev(split: str, judge: str, split_words: list[str], belief: bool) -> dict:
        label = f"eval-{name}-{split}-{judge}"
        return stage(
            label,
            smol_evaluate,
            scale,
            model["base"],
            model["adapter"],
            split_words,
            judge,
            seed=seed,
            belief=belief,
            save_as=stage.work / "games" / f"{label.replace(':', '_')}.jsonl.gz",
        )

    out = {
        "test": ev("test", scale.judge, words["test"], scale.belief),
        "val": ev("val", scale.judge, words["val"], False),
    }
    if scale.check_words:
        out["test_check"] = ev("test", scale.check_judge, words["test"][: scale.check_words], False)
    return out


def smol_pipeline(scale: SmolScale, stage, until: str | None) -> dict[str, Any]:
    """SFT → per seed: StarPO, CIA → each arm on the test (and validation) words → the ordering.
    `until`: sft (the SFT model evaluated, seed 0) or seed-N."""
    from bench.learning.ordering import run_arms
    from games.base_models import resolve_model

    work = stage.work
    words = {
        "test": words_of("dbrl/paper_test", scale.test_words),
        "val": words_of("dbrl/paper_val", scale.val_words),
    }
    out: dict[str, Any] = {
        "world": {"name": scale.world, "base": scale.base, "device": scale.device}
        | {split: len(w) for split, w in words.items()}
        | {"test_words": words["test"][:20]}
    }
    sft, out["sft"] = stage("sft", smol_sft, scale, work)
    base = resolve_model(scale.base)
    if scale.latency_games:
        out["sft"]["latency"] = stage(
            "latency-sft", question_latency, scale, base, sft, words["val"][: scale.latency_games]
        )
    sft_model = {"base": base, "adapter": sft}
    return out | run_arms(
        stage,
        scale.seed_list,
        words,
        sft=lambda seed: (sft_model, out["sft"]),  # one SFT model, every seed's GRPO from it
        grpo=lambda model, arm, seed: smol_grpo(scale, work, model["adapter"], arm, seed),
        evaluate=lambda name, model, seed: evaluations(scale, stage, name, model, words, seed),
        until=until,
        sft_stage="sft",
    )
