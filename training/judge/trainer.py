"""Train the learned judge: `run(config, reporter, rows=...)`, shared by the CLI and the worker.

Rows come from the shipped reference answers, a file, or (from the web app) the labelling app's
gold labels and stored games, passed in as `rows`. Secrets are split by hash into train /
validation / test; validation figures are logged after every epoch (that is where settings are
chosen), and the test figures are computed once, at the end, by the numpy judge reading the
written weights file, so what is reported is what the product runs. The decision threshold stays
0.5: the one with the best validation accuracy (about 0.6) gained 0.002 of accuracy and lost
0.01 of κ.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from games.judge_eval import agreement
from games.kb import KnowledgeBase, load_kb
from training.judge.config import LearnedJudgeJobConfig
from training.judge.data import Examples, Row, Tables, featurize, load_rows
from training.judge.reporting import report_weights
from training.reporting import Reporter, StopRequested

WEIGHTS_FILE = "learned_judge.npz"
EVAL_BATCH = 8192


def _predict(net, tables_bags, examples: Examples) -> np.ndarray:
    import torch

    from training.judge.model import logits

    questions, secrets = tables_bags
    out = []
    net.eval()
    with torch.no_grad():
        for i in range(0, len(examples.rows), EVAL_BATCH):
            sl = slice(i, i + EVAL_BATCH)
            out.append(
                torch.sigmoid(
                    logits(
                        net,
                        questions,
                        secrets,
                        torch.from_numpy(examples.question_of[sl]),
                        torch.from_numpy(examples.secret_of[sl]),
                        torch.from_numpy(examples.match[sl]),
                    )
                ).numpy()
            )
    net.train()
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def scores(p_yes: np.ndarray, examples: Examples, threshold: float = 0.5) -> dict[str, Any]:
    """judge-eval figures of probabilities against the rows' majority answers (ties left out)."""
    answers = examples.answers
    keep = [i for i, a in enumerate(answers) if a in ("yes", "no")]
    verdicts = ["yes" if p_yes[i] >= threshold else "no" for i in keep]
    return agreement(verdicts, [answers[i] for i in keep])


def build_net(
    config: LearnedJudgeJobConfig,
    examples: dict[str, Examples],
    tables: Tables,
    kb: KnowledgeBase | None,
):
    """The network before training, its embeddings as `config.init` says."""
    import torch

    from training.judge.model import JudgeNet

    torch.manual_seed(config.seed)
    net = JudgeNet(len(tables.question_vocab), len(tables.secret_vocab), config.dim, config.hidden)
    if config.init == "kb-svd":
        from training.judge.init import kb_svd

        kb = kb or load_kb()
        held_out = {kb.lookup(r.secret) for s in ("val", "test") for r in examples[s].rows}
        secret, question = kb_svd(
            kb,
            tables.secret_vocab,
            tables.question_vocab,
            config.dim,
            held_out=held_out,
            seed=config.seed,
        )
        with torch.no_grad():
            net.secret_embedding.weight.copy_(torch.from_numpy(secret))
            net.question_embedding.weight.copy_(torch.from_numpy(question))
    return net


def train(
    config: LearnedJudgeJobConfig,
    reporter: Reporter,
    examples: dict[str, Examples],
    tables: Tables,
    kb: KnowledgeBase | None = None,
):
    """The network after `config.epochs` passes; validation figures logged per epoch."""
    import torch
    from torch import nn

    from training.judge.model import Bags, logits

    net = build_net(config, examples, tables, kb)
    rng = np.random.default_rng(config.seed)
    bags = (Bags(tables.bags("question")), Bags(tables.bags("secret")))
    optimizer = torch.optim.AdamW(
        net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    train_set = examples["train"]
    n = len(train_set.rows)
    per_epoch = max(1, n // config.batch_size)
    total = per_epoch * config.epochs
    schedule = _one_cycle(optimizer, config.learning_rate, total)
    target, weight = torch.from_numpy(train_set.target), torch.from_numpy(train_set.weight)
    step, started = 0, time.perf_counter()
    for epoch in range(config.epochs):
        order = rng.permutation(n)
        losses = []
        for b in range(per_epoch):
            idx = order[b * config.batch_size : (b + 1) * config.batch_size]
            out = logits(
                net,
                *bags,
                torch.from_numpy(train_set.question_of[idx]),
                torch.from_numpy(train_set.secret_of[idx]),
                torch.from_numpy(train_set.match[idx]),
            )
            loss = (
                nn.functional.binary_cross_entropy_with_logits(out, target[idx], reduction="none")
                * weight[idx]
            ).sum() / weight[idx].sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            losses.append(loss.item())
            if step % 50 == 0:
                if reporter.should_stop():
                    raise StopRequested()
                reporter.progress(
                    0.05 + 0.85 * step / total,
                    f"epoch {epoch + 1}/{config.epochs}, step {step}/{total}",
                )
        values = {
            "train/loss": float(np.mean(losses)),
            "train/seconds": time.perf_counter() - started,
            "train/lr": schedule.get_last_lr()[0],
        }
        _report_epoch(reporter, step, epoch, values, net, bags, examples["val"])
    return net, step


def _one_cycle(optimizer, learning_rate: float, total: int):
    """One cycle (10% warm-up, then cosine down); a handful of steps (a small gold set) keeps the
    rate constant."""
    import torch

    if total < 20:
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=learning_rate, total_steps=total, pct_start=max(0.1, 2.0 / total)
    )


def _report_epoch(reporter: Reporter, step: int, epoch: int, values: dict, net, bags, val):
    """An epoch's training figures, with the validation figures when there is a validation split."""
    if val.rows:
        values.update(
            {
                f"val/{k}": v
                for k, v in scores(_predict(net, bags, val), val).items()
                if isinstance(v, (int, float)) and v is not None
            }
        )
    reporter.metrics(step, values)
    reporter.log(
        f"epoch {epoch + 1}: loss {values['train/loss']:.4f}"
        + (
            f", validation accuracy {values['val/accuracy']:.4f}, κ {values['val/kappa']:.4f}"
            if "val/accuracy" in values
            else ""
        )
    )


def evaluate_file(path: Path, examples: Examples, kb: KnowledgeBase) -> dict[str, Any]:
    """The figures of the numpy judge that reads the written file, on one split."""
    from games.judges.learned import LearnedModel
    from games.kb import store

    model = LearnedModel(store.read(path), path, kb)
    pairs = []
    nouns = {}
    for r in examples.rows:
        if r.secret not in nouns:
            nouns[r.secret] = kb.lookup(r.secret)
        pairs.append((nouns[r.secret], r.question))
    p = (
        np.concatenate(
            [model.p_yes(pairs[i : i + EVAL_BATCH]) for i in range(0, len(pairs), EVAL_BATCH)]
        )
        if pairs
        else np.zeros(0)
    )
    return scores(p, examples, model.threshold)


def _write_and_measure(net, path: Path, tables: Tables, meta: dict, examples, kb, reporter):
    """Write the weights, measure the file the numpy judge reads on the held-out splits, and write
    the same weights again with what they scored; (held-out figures, bytes)."""
    from training.judge.model import export

    vocab = {"question_vocab": tables.question_vocab, "secret_vocab": tables.secret_vocab}
    export(net, path, **vocab, meta=meta)
    reporter.progress(0.92, "measuring the written weights on the held-out secrets")
    held_out = {
        split: evaluate_file(path, examples[split], kb)
        for split in ("val", "test")
        if examples[split].rows
    }
    return held_out, export(net, path, **vocab, meta={**meta, "held_out": held_out})


def run(
    config: LearnedJudgeJobConfig,
    reporter: Reporter,
    *,
    rows: Sequence[Row] | None = None,
    kb: KnowledgeBase | None = None,
) -> dict[str, Any]:
    import torch

    if config.cpu_threads:
        torch.set_num_threads(config.cpu_threads)
    kb = kb or load_kb()
    started = time.perf_counter()
    rows = list(rows) if rows is not None else load_rows(config)
    reporter.progress(0.01, f"featurising {len(rows)} rows")
    examples, tables, dropped = featurize(
        rows,
        kb,
        val_percent=config.val_percent,
        test_percent=config.test_percent,
        min_count=config.min_count,
    )
    sizes = {split: len(e.rows) for split, e in examples.items()}
    secrets = {split: len({r.secret for r in e.rows}) for split, e in examples.items()}
    if not sizes["train"]:
        raise ValueError(
            "no training rows: every secret fell outside the knowledge base or in val/test"
        )
    reporter.log(
        f"rows {sizes}, secrets {secrets}, vocabulary {len(tables.question_vocab)} question / "
        f"{len(tables.secret_vocab)} secret tokens; "
        f"{dropped['secrets_outside_kb']} secrets outside the KB"
    )
    net, steps = train(config, reporter, examples, tables, kb)
    path = Path(reporter.output_dir) / WEIGHTS_FILE
    sources = sorted({r.source for r in rows})
    meta = {
        "config": config.to_dict(),
        "rows": sizes,
        "secrets": secrets,
        "sources": sources,
        "question_vocab": len(tables.question_vocab),
        "secret_vocab": len(tables.secret_vocab),
    }
    held_out, size = _write_and_measure(net, path, tables, meta, examples, kb, reporter)
    report_weights(reporter, steps, path, held_out, config=config, name=WEIGHTS_FILE, size=size)
    return {
        "weights": str(path),
        "bytes": size,
        "rows": sizes,
        "secrets": secrets,
        "sources": sources,
        **{split: figures for split, figures in held_out.items()},
        "seconds": round(time.perf_counter() - started, 1),
        **dropped,
    }
