"""The knowledge stage: plain causal-LM training on knowledge sequences (every token trained),
with the same trainer as SFT (training.sft.trainer.train_sft)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from training.common.trainer import store_rows, stored_rows
from training.knowledge.config import KnowledgeJobConfig
from training.reporting import Reporter

TEXTS_FILE = "knowledge_texts.jsonl"


def run(
    config: KnowledgeJobConfig,
    reporter: Reporter,
    *,
    model_path: str | None = None,
    adapter_path: str | None = None,
    words: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Train `model_path` (default: config.base_model as a folder / hub id) on every pool word's
    facts. `words` is the resolved pool (default: config.word_list as a shipped list or file)."""
    from games.kb import load_kb
    from games.wordlists import read_words
    from training.sft.trainer import train_sft

    rows = stored_rows(reporter, TEXTS_FILE, "knowledge sequences")
    if rows is None:
        from training.knowledge.data import knowledge_texts

        pool = list(words) if words is not None else read_words(config.word_list)
        if config.limit_words:
            pool = pool[: config.limit_words]
        rows, missing = knowledge_texts(
            load_kb(),
            pool,
            sense=config.sense,
            sequences_per_word=config.sequences_per_word,
            facts_per_sequence=config.facts_per_sequence,
            negatives_per_sequence=config.negatives_per_sequence,
            gloss=config.gloss,
            seed=config.seed,
        )
        if missing:
            reporter.log(
                f"{len(missing)} words have no knowledge-base facts: {', '.join(missing[:20])}",
                level="warning",
            )
        if not rows:
            raise ValueError("no word of the pool is in the knowledge base")
        store_rows(
            reporter, TEXTS_FILE, rows, artifact="knowledge-texts", meta={"sequences": len(rows)}
        )
        reporter.log(f"{len(rows)} knowledge sequences for {len({r['word'] for r in rows})} words")
    result = train_sft(
        config,
        reporter,
        rows,
        kind="knowledge",
        model_path=model_path or config.base_model,
        adapter_path=adapter_path,
        completion_only=False,
        resolved={"words": len({r["word"] for r in rows})},
    )
    return {**result, "words": len({r["word"] for r in rows}), "sequences": len(rows)}
