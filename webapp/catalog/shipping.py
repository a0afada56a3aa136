"""Ship a platform job's checkpoint as a published guesser (`manage.py ship_guesser`): the LoRA
adapter of a training job's checkpoint (a model spec on a pretrained base), the finished
evaluation job that measured it on held-out words (its games become the shipped snapshot), the
evaluations that chose it on validation words, and the measured latency, written into
games/data/models/<name>/ (training.shipping's layout), so the seed registers it
(webapp.catalog.shipped) on every fresh machine."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from games.base_models import is_base_model
from training.shipping import (
    ShippingError,
    index_snapshot,
    save_adapter_fp16,
    stack_adapters,
    write_snapshot,
)
from webapp.catalog.builders import trained_sampling
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.shipped import EVALUATION_DIR, MODELS_DIR
from webapp.jobs.models import Checkpoint, Job, JobStatus
from webapp.play.models import Game
from webapp.play.records import trajectory_of

ARMS = ("sft", "starpo", "cia")
PAPER_SFT_ROWS = 48_335
SUMMARY_SKIPPED = ("by_difficulty", "skipped_words", "snapshot")


def held_out(result: dict[str, Any]) -> dict[str, Any]:
    """guesser.json's `results.cli` (what the catalog reads) from an evaluation job's result."""
    invalid, repeated = result.get("invalid_rate", 0.0), result.get("repeated_rate", 0.0)
    return {
        "success_rate": result["success_rate"],
        "success_ci95": result["success_ci95"],
        "n_words": result["n_words"],
        "n_games": result["n_games"],
        "strict_success_rate": result["strict_success_rate"],
        "strict_success_ci95": result["strict_success_ci95"],
        "valid_questions": round(1.0 - invalid - repeated, 4),
        "invalid_rate": invalid,
        "repeated_rate": repeated,
        "mean_turns": result["mean_turns"],
    }


def _evaluation_of(job_id: int, guesser: str | None = None) -> Job:
    job = Job.objects.filter(pk=job_id, kind="evaluation").first()
    if job is None:
        raise ShippingError(f"job {job_id} is not an evaluation job")
    if job.status != JobStatus.FINISHED:
        raise ShippingError(f"evaluation job {job_id} is {job.status}, not finished")
    if guesser is not None and job.config.get("guesser") != guesser:
        raise ShippingError(
            f"evaluation job {job_id} played {job.config.get('guesser')!r}, not {guesser!r}"
        )
    return job


def _run_config(folder: Path) -> dict[str, Any]:
    path = folder / "training_config.json"
    if not path.is_file():
        raise ShippingError(f"{folder} has no training_config.json")
    return json.loads(path.read_text(encoding="utf-8"))


def trained_on(run: dict[str, Any]) -> str:
    config, resolved = run["config"], run.get("resolved", {})
    if run.get("kind") == "sft" and config.get("source") == "reference":
        rows = resolved.get("examples") or config.get("max_turn_examples")
        return (
            f"SFT on {rows:,} of the ΔBelief-RL paper's {PAPER_SFT_ROWS:,} SFT turns "
            f"(games/data/reference-sft, none of a paper_val or paper_test secret)"
        )
    if run.get("kind") == "grpo":
        return (
            f"GRPO ({config.get('advantage')} advantage) on {config.get('word_list')} secrets "
            f"against the {config.get('judge')} judge"
        )
    return f"{run.get('kind')} training"


def validation_rows(job_ids: list[int]) -> list[dict[str, Any]]:
    rows = []
    for job_id in job_ids:
        job = _evaluation_of(job_id)
        spec = ModelSpec.objects.filter(name=job.config["guesser"]).first()
        checkpoint = Checkpoint.objects.filter(model_spec=spec).first() if spec else None
        rows.append(
            {
                "job": job_id,
                "guesser": job.config["guesser"],
                "step": checkpoint.step if checkpoint else None,
                "word_list": job.config["word_list"],
                "samples": job.config["samples"],
                **held_out(job.result),
            }
        )
    return rows


def model_card(name: str, settings: dict[str, Any], run: dict[str, Any]) -> str:
    cli, p = settings["results"]["cli"], settings["provenance"]
    config = run["config"]

    def pct(rate: float, ci: list[float] | None = None) -> str:
        return f"{100 * rate:.1f}%" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")

    sampling = settings["sampling"]
    lines = [
        f"# {name}",
        "",
        f"{settings['base']} (built from its wheel by `make setup`) with a LoRA adapter trained "
        f"on this platform: {p['trained']}.",
        "",
        "## Training",
        f"- {p['arm']} job {p['jobs']['training']} (launched through the jobs API, run by the "
        f"worker), checkpoint step {p['step']}: {config.get('epochs')} epoch(s), learning rate "
        f"{config.get('learning_rate')}, global batch {config.get('global_batch_size')}, LoRA r "
        f"{config.get('lora_rank')} / α {config.get('lora_alpha')} / dropout "
        f"{config.get('lora_dropout')}, seed {config.get('seed')}.",
        f"- Precision: {settings['precision']} (bfloat16: the frozen base in bf16, the LoRA "
        "weights and their optimiser state in float32, under autocast; games.precision).",
        f"- Code: commit `{p['bench_commit'] or '?'}`"
        + (" (with uncommitted changes)" if p.get("dirty") else "")
        + "; the full config is `training_config.json` beside this card.",
        f"- Shipped in float16 ({settings['adapter_mb']} MB); the base is never copied.",
    ]
    if settings.get("validation"):
        lines += [
            "",
            "## Chosen on validation words",
            "| checkpoint | step | words × k | success | valid | repeated |",
            "|---|---|---|---|---|---|",
        ]
        for row in settings["validation"]:
            lines.append(
                f"| {row['guesser']} | {row['step']} | {row['n_words']} × {row['samples']} | "
                f"{pct(row['success_rate'])} | {pct(row['valid_questions'])} | "
                f"{pct(row['repeated_rate'])} |"
            )
    lines += [
        "",
        "## Held-out results",
        f"Evaluation job {p['jobs']['evaluation']}: {cli['n_words']} words of "
        f"`{settings['word_list']}` (secrets no training row holds), {cli['n_games']} games, "
        f"against the `{settings['judge']}` judge, {settings['max_turns']} questions, the "
        f"`{settings['win_rule']}` win rule, sampled at T {sampling['temperature']}, top-p "
        f"{sampling['top_p']}, top-k {sampling['top_k']}. Success is mean@k over words with its "
        "95% interval over words.",
        "",
        f"- success: {pct(cli['success_rate'], cli['success_ci95'])}; strict rule: "
        f"{pct(cli['strict_success_rate'], cli['strict_success_ci95'])}",
        f"- valid questions: {pct(cli['valid_questions'])}; invalid "
        f"{pct(cli['invalid_rate'])}; repeated {pct(cli['repeated_rate'])}; mean turns "
        f"{cli['mean_turns']:.1f}",
    ]
    latency = settings.get("latency")
    if latency:
        for variant in latency.get("variants", {latency["precision"]: latency}).values():
            lines.append(
                f"- a question {variant['p50_s']} s (median) / {variant['p95_s']} s (p95) after "
                f"an answer, one game at a time at {variant['precision']} on "
                f"{latency['threads']} CPU threads ({variant['questions']} questions)"
            )
        lines.append(
            "  (a person's game decodes one row at a time, where `auto` runs float32 on a CPU; "
            f"`{latency['command']}`)"
        )
    if settings.get("limits"):
        lines += ["", "## Limits", settings["limits"]]
    return "\n".join(lines) + "\n"


def export_checkpoint(checkpoint_spec: str, out: Path) -> dict[str, Any]:
    """A training stage's artifact for a later session on a fresh machine: the checkpoint's
    adapter in float16 (the base named, never copied), its training_config.json (config,
    precision, commit) and stage.json (the job's config, result, timings and loss curve), so
    the next stage starts from it without this machine's database."""
    from webapp.jobs.models import Metric

    spec = ModelSpec.objects.filter(name=checkpoint_spec).first()
    parent = spec.parent if spec is not None else None
    stacked = (  # a stage trained on an earlier stage merged into the base: one adapter of both
        spec is not None
        and bool(spec.adapter_path)
        and not is_base_model(spec.path)
        and parent is not None
        and bool(parent.adapter_path)
        and is_base_model(parent.path)
    )
    if spec is None or not spec.adapter_path or not (stacked or is_base_model(spec.path)):
        raise ShippingError(f"{checkpoint_spec!r} is not a LoRA checkpoint on a pretrained base")
    base = parent.path if stacked else spec.path
    checkpoint = Checkpoint.objects.filter(model_spec=spec).select_related("job").first()
    with tempfile.TemporaryDirectory() as work:
        adapter = Path(spec.adapter_path)
        if stacked:
            adapter = stack_adapters(Path(parent.adapter_path), adapter, Path(work))
        save_adapter_fp16(adapter, Path(out), base)
    job = checkpoint.job if checkpoint else None
    stage = {
        "model_spec": spec.name,
        "base": base,
        "stacked_on": parent.name if stacked else None,
        "step": checkpoint.step if checkpoint else None,
        "job": None
        if job is None
        else {
            "id": job.pk,
            "kind": job.kind,
            "config": job.config,
            "status": job.status,
            "result": job.result,
            "started_at": job.started_at.isoformat() if job.started_at else None,
            "finished_at": job.finished_at.isoformat() if job.finished_at else None,
            "loss": [
                [m.step, round(m.value, 5)]
                for m in Metric.objects.filter(job=job, name="loss").order_by("step")
            ],
        },
    }
    (Path(out) / "stage.json").write_text(json.dumps(stage, indent=1) + "\n", encoding="utf-8")
    return stage


def import_checkpoint(folder: Path) -> ModelSpec:
    """The model spec of an exported stage (export_checkpoint) on this machine: its recorded name,
    the base by name and the folder as the adapter, unpublished like a fresh checkpoint; the
    next stage's jobs (an evaluation, a grpo run from it) name it."""
    folder = Path(folder).resolve()
    meta = folder / "stage.json"
    if not meta.is_file() or not (folder / "adapter_model.safetensors").is_file():
        raise ShippingError(f"{folder} is not an exported stage (stage.json and an adapter)")
    stage = json.loads(meta.read_text(encoding="utf-8"))
    if not is_base_model(stage.get("base", "")):
        raise ShippingError(f"{folder}: {stage.get('base')!r} is not a pretrained base")
    base = ModelSpec.objects.filter(name=stage["base"]).first()
    job = stage.get("job") or {}
    fields = dict(
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path=stage["base"],
        adapter_path=str(folder),
        sampling=trained_sampling(base),
        parent=base,
        description=f"{job.get('kind', 'training')} job {job.get('id', '?')} of an earlier "
        f"session, step {stage.get('step')}, from {stage['base']} (LoRA adapter, exported "
        f"to {folder.name}).",
    )
    spec, _ = ModelSpec.objects.update_or_create(
        name=stage["model_spec"],
        defaults=fields,
        create_defaults={**fields, "published": False},  # a re-import keeps the choice
    )
    return spec


def ship_checkpoint_guesser(
    *,
    name: str,
    checkpoint_spec: str,
    evaluation_job: int,
    arm: str = "sft",
    validation_jobs: tuple[int, ...] = (),
    latency: dict[str, Any] | None = None,
    limits: str = "",
    models_dir: Path = MODELS_DIR,
    evaluation_dir: Path = EVALUATION_DIR,
) -> dict[str, Any]:
    """Write `checkpoint_spec` (a training job's checkpoint on a pretrained base) as the shipped
    guesser `name`, measured by `evaluation_job`; returns its guesser.json."""
    if arm not in ARMS:
        raise ShippingError(f"arm must be one of {', '.join(ARMS)}")
    spec = ModelSpec.objects.filter(name=checkpoint_spec).first()
    if spec is None:
        raise ShippingError(f"no model spec named {checkpoint_spec!r}")
    if not spec.adapter_path or not is_base_model(spec.path):
        raise ShippingError(
            f"{checkpoint_spec} is not a LoRA adapter on a pretrained base (path {spec.path!r})"
        )
    checkpoint = Checkpoint.objects.filter(model_spec=spec).select_related("job").first()
    folder = Path(spec.adapter_path)
    run = _run_config(folder)
    test = _evaluation_of(evaluation_job, guesser=checkpoint_spec)
    if "sampling" not in test.result:
        raise ShippingError(f"evaluation job {evaluation_job} did not record its sampling")
    out = Path(models_dir) / name
    adapter = save_adapter_fp16(folder, out, spec.path)
    code = run.get("code", {})
    played = test.result["sampling"]
    # the job and step that trained it: its checkpoint row, else an exported stage's record
    stage_file = folder / "stage.json"
    stage = json.loads(stage_file.read_text(encoding="utf-8")) if stage_file.is_file() else {}
    trained_by = checkpoint.job_id if checkpoint else (stage.get("job") or {}).get("id")
    trained_step = checkpoint.step if checkpoint else stage.get("step", run.get("step"))
    settings: dict[str, Any] = {
        "base": spec.path,
        "guesser_prompt": run["config"].get("guesser_prompt", "paper"),
        "sampling": {k: played[k] for k in ("temperature", "top_p", "top_k", "max_new_tokens")},
        "judge": test.config["judge"],
        "word_list": test.config["word_list"],
        "max_turns": test.config["max_turns"],
        "win_rule": test.config["win_rule"],
        "precision": run.get("resolved", {}).get("precision", "float32"),
        "adapter_mb": round(adapter.stat().st_size / 2**20, 1),
        "provenance": {
            "arm": arm,
            "seed": run["config"].get("seed", 0),
            "trained": trained_on(run),
            "bench_commit": code.get("commit", ""),
            "dirty": code.get("dirty", False),
            "step": trained_step,
            "command": (
                f"POST /api/jobs/ {{kind: {run['kind']}}} (job "
                f"{trained_by or '?'}), then evaluation job "
                f"{evaluation_job}; manage.py ship_guesser {name}"
            ),
            "jobs": {
                "training": trained_by,
                "evaluation": evaluation_job,
                "validation": list(validation_jobs),
            },
        },
        "results": {"cli": held_out(test.result)},
        "validation": validation_rows(list(validation_jobs)),
    }
    if latency:
        settings["latency"] = latency
    if limits:
        settings["limits"] = limits
    (out / "guesser.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(model_card(name, settings, run), encoding="utf-8")
    games = (
        Game.objects.filter(job=test)
        .select_related("guesser", "judge")
        .prefetch_related("turns")
        .order_by("secret", "sample_index", "id")
    )
    evaluation_dir = Path(evaluation_dir)
    evaluation_dir.mkdir(parents=True, exist_ok=True)
    snapshot = evaluation_dir / f"{name}.jsonl.gz"
    write_snapshot(snapshot, ({**trajectory_of(g).to_dict(), "guesser": name} for g in games))
    index_snapshot(
        evaluation_dir,
        name,
        {
            "file": snapshot.name,
            "command": settings["provenance"]["command"],
            "commit": code.get("commit", ""),
            "played_at": (test.finished_at or datetime.now(UTC)).isoformat(timespec="seconds"),
            "samples": test.config["samples"],
            "max_turns": test.config["max_turns"],
            "win_rule": test.config["win_rule"],
            "seed": test.config["seed"],
            "judge_spec": test.config["judge"],
            "word_list": test.config["word_list"],
            "split": test.config.get("split", ""),
            "sampling_name": test.config.get("sampling", "model"),
            "summary": {k: v for k, v in test.result.items() if k not in SUMMARY_SKIPPED},
        },
    )
    return settings
