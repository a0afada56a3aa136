"""Train the pretrained judge: `python -m training.judge.cross_encoder --out DIR`, or a
`pretrained_judge` job; `run(config, reporter, rows=...)` serves both.

A one-logit sequence classifier on the pretrained encoder (`base_model`, minilm-l6 by default)
reads (secret text, question) pairs; LoRA adapters on its attention and feed-forward layers and
the new head are trained with binary cross-entropy on the share of yes votes (a tie is 0.5), like
the learned judge, on the same rows and the same split of secrets (training.judge.data.split_of).
Validation figures are logged every `eval_every` steps. At the end the folder is written
(`adapter/`, `judge.json`), read back by the judge the product runs (games.judges.cross_encoder),
calibrated on every validation row (one temperature, fitted by likelihood), and measured once on
the test secrets.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from games import precision as precision_policy
from games.judge_eval import agreement
from games.judges.cross_encoder import (
    ADAPTER_DIR,
    FORMAT,
    META_FILE,
    CrossEncoder,
    combined_p_yes,
    secret_text,
)
from training.judge.config import PretrainedJudgeJobConfig
from training.judge.data import Row, load_rows, split_of
from training.judge.reporting import report_weights
from training.reporting import Reporter, StopRequested

LORA_TARGETS = ["query", "key", "value", "dense"]  # BERT's attention and feed-forward linears
HEAD = ["classifier", "pooler"]  # trained in full and saved with the adapter
SORT_WINDOW = 64  # batches shuffled together, then cut by length (less padding, same rows)
EVAL_BATCH = 256


def split_rows(rows: Sequence[Row], config) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {"train": [], "val": [], "test": []}
    for r in rows:
        out[split_of(r.secret, config.val_percent, config.test_percent)].append(r)
    return out


def batches(rows: list[Row], size: int, rng: random.Random, length) -> list[list[Row]]:
    """Shuffled rows cut into batches; within each window of SORT_WINDOW batches the rows are
    ordered by length first, so a batch pads little, and the batches are shuffled again."""
    rows = rows[:]
    rng.shuffle(rows)
    window = size * SORT_WINDOW
    out = []
    for start in range(0, len(rows), window):
        chunk = sorted(rows[start : start + window], key=length)
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def fit_temperature(logits: np.ndarray, targets: np.ndarray) -> float:
    """The T that maximises the likelihood of the targets under sigmoid(logit / T)."""
    from scipy.optimize import minimize_scalar

    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)

    def nll(log_t: float) -> float:
        s = z / math.exp(log_t)
        return float(np.mean(np.logaddexp(0.0, s) - y * s))

    best = minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded")
    return round(math.exp(best.x), 4)


def calibration_error(p: np.ndarray, targets: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: the row-weighted gap between mean P(yes) and the share of yes
    in ten equal-width bins of P(yes)."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    which = np.minimum((p * bins).astype(int), bins - 1)
    gaps = [
        abs(p[which == b].mean() - y[which == b].mean()) * (which == b).sum()
        for b in range(bins)
        if (which == b).any()
    ]
    return round(float(sum(gaps) / max(len(p), 1)), 4)


class Texts:
    """The secret's side of each pair, as the shipped judge will read it."""

    def __init__(self, input_format: str):
        self.input = input_format
        self.kb = None
        if input_format == "word+gloss":
            from games.kb import load_kb

            self.kb = load_kb()
        self._cache: dict[str, str] = {}

    def __call__(self, secret: str) -> str:
        if secret not in self._cache:
            self._cache[secret] = secret_text(secret, self.input, self.kb)
        return self._cache[secret]


def figures(p_yes: np.ndarray, rows: Sequence[Row], threshold: float = 0.5) -> dict[str, Any]:
    keep = [i for i, r in enumerate(rows) if r.answer in ("yes", "no")]
    verdicts = ["yes" if p_yes[i] >= threshold else "no" for i in keep]
    return agreement(verdicts, [rows[i].answer for i in keep])


def build_model(config: PretrainedJudgeJobConfig):
    import torch
    from peft import LoraConfig, get_peft_model

    from games.base_models import resolve_model
    from games.judges.cross_encoder import load_cross_encoder

    torch.manual_seed(config.seed)
    model, tokenizer = load_cross_encoder(resolve_model(config.base_model), None)
    lora = LoraConfig(
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        target_modules=LORA_TARGETS,
        modules_to_save=HEAD,
        task_type="SEQ_CLS",
    )
    return get_peft_model(model, lora), tokenizer


def predict(
    model,
    tokenizer,
    texts: Texts,
    rows: Sequence[Row],
    max_length: int,
    precision: str = "float32",
) -> np.ndarray:
    """Logits of the model being trained (eval mode for the call), at `precision` (resolved)."""
    import torch

    order = sorted(
        range(len(rows)), key=lambda i: len(texts(rows[i].secret)) + len(rows[i].question)
    )
    out = np.zeros(len(rows), dtype=np.float32)
    model.eval()
    with torch.inference_mode(), precision_policy.autocast("cpu", precision):
        for start in range(0, len(order), EVAL_BATCH):
            chunk = order[start : start + EVAL_BATCH]
            encoded = tokenizer(
                [texts(rows[i].secret) for i in chunk],
                [rows[i].question for i in chunk],
                padding=True,
                truncation="longest_first",
                max_length=max_length,
                return_tensors="pt",
            )
            out[chunk] = model(**encoded).logits[:, 0].float().numpy()
    model.train()
    return out


def train(
    config,
    reporter: Reporter,
    model,
    tokenizer,
    texts: Texts,
    split: dict[str, list[Row]],
    precision: str = "float32",
):
    """Train at `precision` (resolved): at bf16 the frozen encoder in bf16 (build_model's
    caller casts it), LoRA and the head in float32 under autocast."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    from training.common.models import lora_inputs_uncast

    rng = random.Random(config.seed)
    train_rows = split["train"]
    per_epoch = math.ceil(len(train_rows) / config.batch_size)
    total = max(1, math.ceil(per_epoch * config.epochs))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    schedule = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * total), total)
    val_rows = split["val"]
    if config.eval_rows and len(val_rows) > config.eval_rows:
        val_rows = random.Random(config.seed + 1).sample(val_rows, config.eval_rows)

    def length(r: Row) -> int:
        return len(texts(r.secret)) + len(r.question)

    model.train()
    step, started, losses = 0, time.perf_counter(), []
    plan: list[list[Row]] = []
    while step < total:
        if not plan:
            plan = batches(train_rows, config.batch_size, rng, length)
        batch = plan.pop()
        encoded = tokenizer(
            [texts(r.secret) for r in batch],
            [r.question for r in batch],
            padding=True,
            truncation="longest_first",
            max_length=config.max_length,
            return_tensors="pt",
        )
        target = torch.tensor([r.target for r in batch], dtype=torch.float32)
        weight = torch.tensor([r.weight for r in batch], dtype=torch.float32)
        with (
            precision_policy.autocast("cpu", precision),
            lora_inputs_uncast(model, precision == "bfloat16"),
        ):
            out = model(**encoded).logits[:, 0].float()
        loss = (
            torch.nn.functional.binary_cross_entropy_with_logits(out, target, reduction="none")
            * weight
        ).sum() / weight.sum()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        step += 1
        losses.append(loss.item())
        if step % 20 == 0 or step == total:
            if reporter.should_stop():
                raise StopRequested()
            seconds = time.perf_counter() - started
            reporter.progress(
                0.02 + 0.78 * step / total,
                f"step {step}/{total}, {step * config.batch_size / seconds:.0f} rows/s",
            )
        if step == total or (config.eval_every and step % config.eval_every == 0):
            values = {
                "train/loss": float(np.mean(losses)),
                "train/lr": schedule.get_last_lr()[0],
                "train/seconds": time.perf_counter() - started,
            }
            losses = []
            if val_rows:
                logits = predict(model, tokenizer, texts, val_rows, config.max_length, precision)
                scored = figures(1 / (1 + np.exp(-logits)), val_rows)
                values.update(
                    {f"val/{k}": v for k, v in scored.items() if isinstance(v, (int, float))}
                )
            reporter.metrics(step, values)
            reporter.log(
                f"step {step}/{total}: loss {values['train/loss']:.4f}"
                + (
                    f", validation accuracy {values['val/accuracy']:.4f}, "
                    f"κ {values['val/kappa']:.4f}"
                    if "val/accuracy" in values
                    else ""
                )
            )
    return step


def name_base(adapter_config: Path, base_model: str) -> None:
    """The adapter names its base as the config did (`minilm-l6`), not by this machine's path."""
    settings = json.loads(adapter_config.read_text(encoding="utf-8"))
    settings["base_model_name_or_path"] = base_model
    adapter_config.write_text(
        json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def write_meta(folder: Path, meta: dict) -> None:
    (folder / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def fit_combination(logits: np.ndarray, learned_p: np.ndarray, targets: np.ndarray) -> dict:
    """The weights of games.judges.cross_encoder.combined_p_yes that maximise the likelihood of the
    targets (logistic regression on the two logits)."""
    from scipy.optimize import minimize

    q = np.clip(learned_p.astype(np.float64), 1e-6, 1 - 1e-6)
    x = np.stack([logits.astype(np.float64), np.log(q / (1 - q)), np.ones(len(q))], axis=1)
    y = targets.astype(np.float64)

    def nll(w: np.ndarray) -> float:
        z = x @ w
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    w = minimize(nll, np.array([1.0, 0.0, 0.0]), method="BFGS").x
    return {
        "pretrained": round(float(w[0]), 5),
        "learned": round(float(w[1]), 5),
        "bias": round(float(w[2]), 5),
    }


def learned_p_yes(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    """The shipped learned judge's P(yes) of each row and which rows it could answer (a secret
    the knowledge base knows)."""
    from games.judges.learned import load_model

    model = load_model()
    kb = model.featurizer.kb
    nouns = {s: kb.lookup(s) for s in {r.secret for r in rows}}
    known = np.array([nouns[r.secret] is not None for r in rows], dtype=bool)
    p = np.full(len(rows), np.nan)
    pairs = [(nouns[r.secret], r.question) for r, k in zip(rows, known) if k]
    if pairs:
        p[known] = np.concatenate(
            [model.p_yes(pairs[i : i + 8192]) for i in range(0, len(pairs), 8192)]
        )
    return p, known


def check_combination(config: PretrainedJudgeJobConfig) -> None:
    """The learned judge combined in must hold out the same secrets (else its answers about our
    validation and test secrets were trained on)."""
    if config.combine != "learned":
        return
    from games.judges.learned import weights_meta

    shipped = weights_meta().get("config") or {}
    same = (shipped.get("val_percent"), shipped.get("test_percent")) == (
        config.val_percent,
        config.test_percent,
    )
    if not same:
        raise ValueError(
            "combine=learned needs the shipped learned judge's held-out split "
            f"(val_percent={shipped.get('val_percent')}, "
            f"test_percent={shipped.get('test_percent')}); "
            "use those or combine=none"
        )


def measure(folder: Path, split: dict[str, list[Row]], meta: dict, reporter: Reporter) -> dict:
    """Read the written folder as the product does; calibrate on the validation rows (the
    cross-encoder's temperature, and the combination's weights when it combines the learned judge)
    and return the held-out figures of what ships (the test split once, here)."""
    encoder = CrossEncoder(folder)
    texts = Texts(meta["input"])
    logits = {}
    for name in ("val", "test"):
        if split[name]:
            reporter.progress(
                0.82 if name == "val" else 0.9, f"reading {len(split[name])} {name} rows"
            )
            logits[name] = encoder.logits([(texts(r.secret), r.question) for r in split[name]])
    if "val" not in logits:
        return {name: figures(1 / (1 + np.exp(-z)), split[name]) for name, z in logits.items()}
    targets = {name: np.array([r.target for r in split[name]]) for name in logits}
    temperature = fit_temperature(logits["val"], targets["val"])
    meta["temperature"] = temperature
    p = {name: 1 / (1 + np.exp(-z / temperature)) for name, z in logits.items()}
    alone = {name: figures(p[name], split[name]) for name in p}
    meta["calibration"] = {
        "fitted_on": "val",
        "temperature": temperature,
        "ece_before": calibration_error(1 / (1 + np.exp(-logits["val"])), targets["val"]),
        "ece_after": calibration_error(p["val"], targets["val"]),
    }
    if meta["config"]["combine"] == "learned":
        learned = {name: learned_p_yes(split[name]) for name in logits}
        q, known = learned["val"]
        weights = fit_combination(logits["val"][known], q[known], targets["val"][known])
        meta["combine"] = {"judge": "learned", "weights": weights, "fitted_on": "val"}
        for name in logits:
            q, known = learned[name]
            p[name][known] = combined_p_yes(logits[name][known], q[known], weights)
        meta["calibration"]["ece_after"] = calibration_error(p["val"], targets["val"])
        meta["cross_encoder_alone"] = alone
    if "test" in p:
        meta["calibration"]["test_ece"] = calibration_error(p["test"], targets["test"])
    return {name: figures(p[name], split[name]) for name in p}


def run(
    config: PretrainedJudgeJobConfig, reporter: Reporter, *, rows: Sequence[Row] | None = None
) -> dict[str, Any]:
    import torch

    from training.common.models import quiet_libraries

    quiet_libraries()
    if config.cpu_threads:
        torch.set_num_threads(config.cpu_threads)
    started = time.perf_counter()
    check_combination(config)
    rows = list(rows) if rows is not None else load_rows(config)
    split = split_rows(rows, config)
    if config.max_rows and len(split["train"]) > config.max_rows:
        split["train"] = random.Random(config.seed).sample(split["train"], config.max_rows)
    if not split["train"]:
        raise ValueError("no training rows: every secret fell in the validation or test split")
    sizes = {name: len(r) for name, r in split.items()}
    secrets = {name: len({x.secret for x in r}) for name, r in split.items()}
    reporter.log(f"rows {sizes}, secrets {secrets}; base {config.base_model}, input {config.input}")
    texts = Texts(config.input)
    model, tokenizer = build_model(config)
    precision = precision_policy.resolve(config.precision, "cpu")
    if precision == "bfloat16":
        precision_policy.frozen_to(model, precision)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    reporter.log(
        f"{trainable:,} trainable parameters (LoRA r={config.lora_rank} and the head), "
        f"training at {precision}"
    )
    steps = train(config, reporter, model, tokenizer, texts, split, precision)
    folder = Path(reporter.output_dir) / "pretrained-judge"
    model.save_pretrained(folder / ADAPTER_DIR)
    name_base(folder / ADAPTER_DIR / "adapter_config.json", config.base_model)
    meta = {
        "format": FORMAT,
        "base_model": config.base_model,
        "input": config.input,
        "max_length": config.max_length,
        "threshold": 0.5,
        "temperature": 1.0,
        "config": config.to_dict(),
        "rows": sizes,
        "secrets": secrets,
        "sources": sorted({r.source for r in rows}),
        "trainable_parameters": trainable,
        "steps": steps,
        "precision": precision,  # trained at (config.precision resolved)
    }
    write_meta(folder, meta)
    held_out = measure(folder, split, meta, reporter)
    meta["held_out"] = held_out
    meta["seconds"] = round(time.perf_counter() - started, 1)
    write_meta(folder, meta)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    report_weights(
        reporter,
        steps,
        folder,
        held_out,
        config=config,
        name="pretrained-judge",
        size=size,
        is_adapter=True,
    )
    return {
        "weights": str(folder),
        "bytes": size,
        "rows": sizes,
        "secrets": secrets,
        "sources": meta["sources"],
        "calibration": meta.get("calibration"),
        "precision": precision,
        **held_out,
        "seconds": meta["seconds"],
    }


def main(argv: list[str] | None = None) -> int:
    from training.common.cli import main_for

    return main_for(
        PretrainedJudgeJobConfig,
        run,
        "python -m training.judge.cross_encoder",
        "Train the pretrained judge (a cross-encoder) on a reference judge's answers.",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
