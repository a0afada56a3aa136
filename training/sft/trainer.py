"""Turn-level SFT with TRL's SFTTrainer.

Each example is a conversational prompt/completion pair (training.sft.data); TRL's
completion-only loss masks the prompt, and where the chat template has `{% generation %}`
markers its assistant-only loss also masks the template text after the end-of-turn token, so
exactly the question and its end-of-turn token are trained. `train_sft` is shared with the
knowledge stage (plain text, full loss).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from trl import SFTTrainer

from games.llm.chat import GuesserFormat
from training.common.config import TrainConfig
from training.common.data import (
    GameSources,
    RunInputs,
    build_teacher,
    gather_games,
    select_games,
    split_run_inputs,
)
from training.common.models import (
    DeviceSetup,
    has_generation_markers,
    loaded_model,
    run_guesser_format,
)
from training.common.ranks import from_rank_zero
from training.common.trainer import (
    store_rows,
    stored_rows,
    train_and_summarise,
    trl_run_config,
    trl_trainer,
)
from training.reporting import Reporter
from training.sft.config import SFTJobConfig
from training.sft.data import is_packed, pack_games, recovery_examples, turn_examples
from training.sft.packing import encode_row, fit_rows
from training.sft.prefix import SharedPrefixSFTTrainer
from training.sft.reference_data import (
    read_reference,
    reference_examples,
    reference_path,
    repeats_a_question,
    sample_turns,
)

EXAMPLES_FILE = "sft_examples.jsonl"


def build_sft_trainer(
    config: TrainConfig,
    model: Any,
    tokenizer: Any,
    rows: Sequence[dict],
    *,
    output_dir: str | Path,
    setup: DeviceSetup,
    completion_only: bool = True,
    callbacks: Sequence[Any] = (),
    shared_prefix: bool = False,
) -> SFTTrainer:
    """TRL's SFTTrainer for prompt/completion rows (only the completion trained; with
    `{% generation %}` markers also without the template's text after the end-of-turn token) or
    {"text"} rows (every token). Rows with an `untrained_prefix` (naming rows: "Is it" is context,
    the word is trained) are tokenised by training.common.chat, whose labels equal TRL's on the
    other rows. `shared_prefix`: each micro-batch's common prompt is encoded once
    (training.sft.prefix)."""
    from datasets import Dataset
    from trl import SFTConfig

    pretokenized = completion_only and any(r.get("untrained_prefix") or is_packed(r) for r in rows)
    if pretokenized:  # TRL has no notion of a partly trained completion: labels made here
        encoded = [encode_row(tokenizer, r) for r in rows]
        dataset = Dataset.from_list(
            [{"input_ids": e.input_ids, "labels": e.labels} for e in encoded]
        )
    else:
        columns = ("prompt", "completion") if completion_only else ("text",)
        dataset = Dataset.from_list([{c: r[c] for c in columns} for r in rows])
    return trl_trainer(
        SharedPrefixSFTTrainer,
        SFTConfig,
        config,
        model,
        tokenizer,
        dataset,
        setup=setup,
        output_dir=output_dir,
        callbacks=callbacks,
        arguments=dict(
            completion_only_loss=completion_only and not pretokenized,
            assistant_only_loss=completion_only
            and not pretokenized
            and has_generation_markers(tokenizer),
            packing=False,
            # each optimizer step's rows stay a random draw; only its micro-batches are cut by
            # length (less padding: turn-level rows range from the prompt alone to a 20-turn
            # history)
            train_sampling_strategy="batch_rebalance",
        ),
        shared_prefix=shared_prefix,
    )


def train_sft(
    config: TrainConfig,
    reporter: Reporter,
    rows: list[dict],
    *,
    kind: str,
    model_path: str,
    adapter_path: str | None = None,
    completion_only: bool = True,
    resolved: dict | None = None,
) -> dict[str, Any]:
    """Train on `rows` (prompt/completion pairs, or {"text": ...} for plain language modelling)
    and return the run summary; resumes from the reporter's last checkpoint. A config with a
    `guesser_prompt` (a guesser's run, its rows built with that prompt) records it in the
    checkpoints."""
    if hasattr(config, "guesser_prompt"):
        prompt_name = run_guesser_format(
            config.guesser_prompt, adapter_path, model_path, max_turns=config.max_turns
        )[1]
        resolved = {**(resolved or {}), "guesser_prompt": prompt_name}
    with loaded_model(config, model_path, adapter_path) as (setup, model, tokenizer):
        examples = sum(len(r["trained"]) if is_packed(r) else 1 for r in rows)  # questions
        if completion_only:  # packed games: cut to their questions that fit
            kept, dropped = fit_rows(tokenizer, rows, config.max_tokens)
        else:  # TRL appends the end-of-sequence token
            kept = [r for r in rows if len(tokenizer(r["text"])["input_ids"]) < config.max_tokens]
            dropped = len(rows) - len(kept)
        if dropped:
            reporter.log(
                f"dropped {dropped} of {examples} examples longer than {config.max_tokens} tokens",
                level="warning",
            )
        if not kept:
            raise ValueError("no training example fits in max_tokens")
        run_config = trl_run_config(
            kind,
            config,
            setup,
            model_path=model_path,
            adapter_path=adapter_path,
            examples=len(kept),
            dropped_too_long=dropped,
            loss="completion (question) tokens" if completion_only else "every token",
            assistant_only_loss=completion_only and has_generation_markers(tokenizer),
            **(resolved or {}),
        )
        accumulation = run_config["resolved"]["gradient_accumulation_steps"]
        return train_and_summarise(
            reporter,
            setup,
            run_config,
            partial(
                build_sft_trainer,
                config,
                model,
                tokenizer,
                kept,
                completion_only=completion_only,
                shared_prefix=completion_only and getattr(config, "shared_prefix", False),
            ),
            is_adapter=config.lora,
            what=f"{kind}: {len(kept)} examples",
            details=f", {accumulation} accumulation steps on {setup.device} × {setup.world_size}",
            extra={"examples": len(kept), "dropped_too_long": dropped},
        )


def reference_rows(
    config: SFTJobConfig, reporter: Reporter, chat_format: GuesserFormat
) -> list[dict]:
    """source=reference: the paper's SFT turns (training.sft.reference_data), subsampled by
    limit_words and max_turn_examples with the seed, each chat rebuilt with `chat_format`."""
    path = reference_path(config.reference_file)
    turns = read_reference(str(path))
    if config.skip_repeat_targets:
        before = len(turns)
        turns = [t for t in turns if not repeats_a_question(t)]
        reporter.log(f"left out {before - len(turns)} rows whose question was asked before")
    kept = sample_turns(
        turns, words=config.limit_words, rows=config.max_turn_examples, seed=config.seed
    )
    reporter.log(
        f"reference turns: {len(kept)} of {len(turns)} rows of {path.name}, "
        f"{len({t.secret for t in kept})} secrets"
    )
    if not kept:
        raise ValueError(f"no reference turn left ({path})")
    return reference_examples(kept, chat_format)


def new_examples(
    config: SFTJobConfig, reporter: Reporter, chat_format: GuesserFormat, sources: GameSources
) -> tuple[list[dict], int]:
    """The turn examples (and recovery examples) of the selected games, stored for a resume, and
    the number of games (source=reference: the paper's turns; `sources` unused)."""
    if config.source == "reference":
        rows = reference_rows(config, reporter, chat_format)
        n_games = len({r["game"] for r in rows})
        store_rows(
            reporter,
            EXAMPLES_FILE,
            rows,
            artifact="sft-examples",
            meta={"examples": len(rows), "games": n_games, "source": "reference"},
        )
        reporter.log(
            f"{len(rows)} turn examples from {n_games} reference games on "
            f"{len({r['secret'] for r in rows})} words"
        )
        return rows, n_games
    games = gather_games(config, reporter, **sources)
    chosen = select_games(games, config.selection)
    if not chosen:
        raise ValueError(f"no game left after selection={config.selection} ({len(games)} games)")
    rows = turn_examples(chosen, chat_format)
    if config.recovery_per_game:
        teacher = build_teacher(
            config,
            (t.secret for t in chosen),
            make_teacher=sources.get("make_teacher"),
            pool=sources.get("pool"),
        )
        recovery = recovery_examples(
            chosen, teacher, chat_format, per_game=config.recovery_per_game, seed=config.seed
        )
        reporter.log(
            f"{len(recovery)} recovery examples (wrong guesses, then the teacher's next question)"
        )
        rows += recovery
    store_rows(
        reporter,
        EXAMPLES_FILE,
        rows,
        artifact="sft-examples",
        meta={"examples": len(rows), "games": len(chosen)},
    )
    reporter.log(
        f"{len(rows)} turn examples from {len(chosen)} games on "
        f"{len({t.secret for t in chosen})} words (selection={config.selection})"
    )
    return rows, len(chosen)


def run(config: SFTJobConfig, reporter: Reporter, **inputs: Unpack[RunInputs]) -> dict[str, Any]:
    """Turn-level SFT on the selected games (`inputs`: training.common.data.RunInputs). A resumed
    run reuses its stored examples; across processes rank 0 builds them (training.common.ranks)."""
    base, adapter_path, sources = split_run_inputs(config, inputs)
    chat_format = run_guesser_format(
        config.guesser_prompt, adapter_path, base, max_turns=config.max_turns
    )[0]
    rows = stored_rows(reporter, EXAMPLES_FILE, "examples")
    if rows is None:  # across processes: rank 0's rows, on every rank
        rows, n_games = from_rank_zero(lambda: new_examples(config, reporter, chat_format, sources))
    else:
        n_games = len({r["game"] for r in rows})
    if config.pack_games:
        questions = len(rows)
        rows = pack_games(rows)
        reporter.log(f"{questions} turn examples packed into {len(rows)} sequences (pack_games)")
    result = train_sft(
        config,
        reporter,
        rows,
        kind="sft",
        model_path=base,
        adapter_path=adapter_path,
        resolved={"games": n_games},
    )
    return {**result, "games": n_games, "words": len({r["secret"] for r in rows})}
