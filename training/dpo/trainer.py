"""Multi-turn DPO with TRL's DPOTrainer: pairs from the base policy's own candidates
(training.dpo.pairs), LoRA via peft by default (the reference is the base with the adapter off),
else full weights against a frozen copy. TRL logs rewards/chosen, rewards/margins, ... per step."""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from games.llm.chat import GuesserFormat
from games.types import Trajectory
from training.common.data import (
    GameSources,
    RunInputs,
    gather_games,
    select_games,
    split_run_inputs,
)
from training.common.models import DeviceSetup, loaded_model, run_guesser_format
from training.common.ranks import from_rank_zero
from training.common.trainer import (
    store_rows,
    stored_rows,
    train_and_summarise,
    trl_run_config,
    trl_trainer,
)
from training.dpo import pairs as P
from training.dpo.config import DPOJobConfig
from training.reporting import Reporter
from training.sft.data import fits

PAIRS_FILE = "dpo_pairs.jsonl"


def _same_model(a: str, b: str) -> bool:
    a, b = os.path.expanduser(a), os.path.expanduser(b)
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return a.rstrip("/") == b.rstrip("/")


def rating_backend(spec: str, policy_backend: Any, policy_path: str | None) -> tuple[Any, bool]:
    """(backend of the rating judge, whether it is the policy's): a transformers spec of the
    policy's own folder (`policy_path`, None when an adapter was merged into it) reuses the policy
    backend, anything else is built as games.registry builds the backend of an LLM judge or
    guesser."""
    from games.registry import _backend, _split

    kind, target = _split(spec)
    if (
        policy_path
        and kind in ("hf", "transformers")
        and target
        and _same_model(target, policy_path)
    ):
        return policy_backend, True
    return _backend(kind, target, {}), False


def build_pairs(
    config: DPOJobConfig,
    reporter: Reporter,
    model: Any,
    tokenizer: Any,
    games: Sequence[Trajectory],
    *,
    judge,
    pool: Sequence[str] | None,
    policy_path: str | None = None,
    chat_format: GuesserFormat | None = None,
) -> list[dict]:
    """Sample candidates from `model` after history prefixes of `games`, score them, pair them.
    `policy_path`: the folder `model` was loaded from as is (reward=rating reuses it as the judge
    when `rating_model` names that folder)."""
    from games.guessers.llm import LLMGuesser
    from games.llm.base import SamplingParams
    from games.llm.transformers_backend import TransformersBackend
    from games.registry import build_judge

    judge = judge or build_judge(config.judge)
    chat_format = chat_format or GuesserFormat(max_turns=config.max_turns)
    backend = TransformersBackend.from_model(model.eval(), tokenizer)
    policy = LLMGuesser(
        backend,
        sampling=SamplingParams(
            max_new_tokens=config.max_new_tokens, temperature=config.temperature
        ),
        chat_format=chat_format,
        name="policy",
    )
    branches = sample_branches(config, reporter, policy, judge, games)
    score_branches(
        config,
        reporter,
        branches,
        games=games,
        pool=pool,
        backend=backend,
        policy=policy,
        judge=judge,
        policy_path=policy_path,
        chat_format=chat_format,
    )
    return pair_rows(config, reporter, branches, chat_format)


def sample_branches(
    config: DPOJobConfig, reporter: Reporter, policy: Any, judge: Any, games: Sequence[Trajectory]
) -> list[P.Branch]:
    """The policy's `candidates` next questions after each history prefix of `games`, sampled in
    chunks of about 256 (a stop request is honoured between chunks)."""
    prefixes = P.history_prefixes(games, config.prefixes_per_game, config.seed)
    reporter.log(
        f"sampling {config.candidates} candidates after each of {len(prefixes)} histories "
        f"from {len(games)} games"
    )
    branches = []
    step = max(1, 256 // config.candidates)
    for start in range(0, len(prefixes), step):
        if reporter.should_stop():
            from training.reporting import StopRequested

            raise StopRequested()
        branches += P.sample_candidates(
            policy,
            judge,
            prefixes[start : start + step],
            n=config.candidates,
            max_turns=config.max_turns,
            seed=config.seed,
        )
        reporter.progress(
            0.1 * len(branches) / len(prefixes), f"candidates {len(branches)}/{len(prefixes)}"
        )
    return branches


def score_branches(
    config: DPOJobConfig,
    reporter: Reporter,
    branches: Sequence[P.Branch],
    *,
    games: Sequence[Trajectory],
    pool: Sequence[str] | None,
    backend: Any,
    policy: Any,
    judge: Any,
    policy_path: str | None,
    chat_format: GuesserFormat,
) -> None:
    """Score every candidate with the configured proxy reward (training.dpo.pairs): `backend` is
    the policy's (belief, and rating when `rating_model` is the policy's folder), `policy` and
    `judge` play the continuations of reward=success."""
    if config.reward == "infogain":
        from games.kb import load_kb
        from games.kb.candidates import candidate_model

        secrets = sorted({t.secret for t in games})
        words = list(dict.fromkeys([*(pool or []), *secrets])) if pool else None
        P.score_infogain(branches, candidate_model(load_kb(), words))
    elif config.reward == "belief":
        P.score_belief(branches, backend, chat_format)
    elif config.reward == "rating":
        rater, shared = rating_backend(config.rating_model, backend, policy_path)
        reporter.log(
            f"rating {sum(len(b.candidates) for b in branches)} candidates with "
            f"{'the policy' if shared else rater.name} ({config.rating_model})"
        )
        try:
            P.score_rating(branches, rater, max_turns=config.max_turns)
        finally:
            if not shared:
                rater.close()
    else:
        P.score_success(
            branches,
            policy,
            judge,
            continuations=config.continuations,
            max_turns=config.max_turns,
            seed=config.seed,
        )


def pair_rows(
    config: DPOJobConfig,
    reporter: Reporter,
    branches: Sequence[P.Branch],
    chat_format: GuesserFormat,
) -> list[dict]:
    """The scored branches' chosen/rejected rows; the candidate statistics are reported at
    step 0."""
    stats = P.candidate_stats(branches)
    rows = P.make_pairs(branches, chat_format, config.min_reward_gap)
    stats["pairs/kept_fraction"] = len(rows) / max(len(branches), 1)
    reporter.metrics(0, stats)
    reporter.log(
        f"{len(rows)} pairs from {len(branches)} histories "
        f"(reward={config.reward}, gap ≥ {config.min_reward_gap}); "
        f"mean candidate reward {stats.get('candidates/reward_mean', 0):.3f}"
    )
    return rows


def build_dpo_trainer(
    config: DPOJobConfig,
    model: Any,
    tokenizer: Any,
    rows: Sequence[dict],
    *,
    output_dir: str | Path,
    setup: DeviceSetup,
    callbacks: Sequence[Any] = (),
) -> Any:
    """TRL's DPOTrainer on conversational prompt/chosen/rejected rows; with LoRA the reference is
    the base with the adapter disabled, else a frozen copy of the starting model."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    dataset = Dataset.from_list([{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in rows])
    ref_model = None if config.lora else copy.deepcopy(model).eval().requires_grad_(False)
    return trl_trainer(
        DPOTrainer,
        DPOConfig,
        config,
        model.train(),
        tokenizer,
        dataset,
        setup=setup,
        output_dir=output_dir,
        callbacks=callbacks,
        arguments=dict(beta=config.beta, loss_type=[config.loss_type]),
        ref_model=ref_model,
    )


def stored_or_new_pairs(
    config: DPOJobConfig,
    reporter: Reporter,
    model: Any,
    tokenizer: Any,
    *,
    model_path: str,
    adapter_path: str | None,
    chat_format: GuesserFormat,
    sources: GameSources,
) -> list[dict]:
    """A resumed run's stored pairs, else pairs built from the selected games (stored as the
    dpo-pairs artifact)."""
    rows = stored_rows(reporter, PAIRS_FILE, "pairs")
    if rows is not None:
        return rows

    def new_pairs() -> list[dict]:
        pool = sources.get("pool")
        if pool is None and config.pool_word_list and sources.get("words") is None:
            from games.wordlists import read_words

            pool = read_words(config.pool_word_list)
        games = gather_games(config, reporter, **{**sources, "pool": pool})
        games = select_games(games, config.selection)
        rows = build_pairs(
            config,
            reporter,
            model,
            tokenizer,
            games,
            judge=sources.get("judge"),
            pool=pool,
            policy_path=None if adapter_path else model_path,
            chat_format=chat_format,
        )
        store_rows(reporter, PAIRS_FILE, rows, artifact="dpo-pairs", meta={"pairs": len(rows)})
        return rows

    # across processes: rank 0 samples, scores and stores the pairs, every rank trains on them
    return from_rank_zero(new_pairs)


def fitting_pairs(config: DPOJobConfig, tokenizer: Any, rows: Sequence[dict]) -> list[dict]:
    """The pairs whose chosen and rejected conversations both fit in `max_tokens`; none is an
    error."""
    kept = [
        r
        for r in rows
        if fits(tokenizer, {"prompt": r["prompt"], "completion": r["chosen"]}, config.max_tokens)
        and fits(tokenizer, {"prompt": r["prompt"], "completion": r["rejected"]}, config.max_tokens)
    ]
    if not kept:
        raise ValueError(
            "no preference pair left: lower min_reward_gap, "
            "sample more candidates or more histories"
        )
    return kept


def dpo_run_config(
    config: DPOJobConfig,
    setup: DeviceSetup,
    *,
    model_path: str,
    adapter_path: str | None,
    prompt_name: str,
    pairs: int,
    dropped: int,
) -> dict[str, Any]:
    """The resolved config the run writes and every checkpoint carries."""
    return trl_run_config(
        "dpo",
        config,
        setup,
        model_path=model_path,
        adapter_path=adapter_path,
        pairs=pairs,
        dropped_too_long=dropped,
        guesser_prompt=prompt_name,
        reference="base model (adapter disabled)"
        if config.lora
        else "frozen copy of the base model",
    )


def run(config: DPOJobConfig, reporter: Reporter, **inputs: Unpack[RunInputs]) -> dict[str, Any]:
    """DPO on pairs built from the selected games' prefixes. `inputs` as in
    training.sft.trainer.run; the `pool` source is also the candidate set of the infogain reward.
    A resumed run reuses its stored pairs."""
    model_path, adapter_path, sources = split_run_inputs(config, inputs)
    chat_format, prompt_name = run_guesser_format(
        config.guesser_prompt, adapter_path, model_path, max_turns=config.max_turns
    )
    with loaded_model(config, model_path, adapter_path) as (setup, model, tokenizer):
        rows = stored_or_new_pairs(
            config,
            reporter,
            model,
            tokenizer,
            model_path=model_path,
            adapter_path=adapter_path,
            chat_format=chat_format,
            sources=sources,
        )
        kept = fitting_pairs(config, tokenizer, rows)
        run_config = dpo_run_config(
            config,
            setup,
            model_path=model_path,
            adapter_path=adapter_path,
            prompt_name=prompt_name,
            pairs=len(kept),
            dropped=len(rows) - len(kept),
        )
        return train_and_summarise(
            reporter,
            setup,
            run_config,
            partial(build_dpo_trainer, config, model, tokenizer, kept),
            is_adapter=config.lora,
            what=f"dpo: {len(kept)} pairs",
            extra={"pairs": len(kept), "dropped_too_long": len(rows) - len(kept)},
        )
