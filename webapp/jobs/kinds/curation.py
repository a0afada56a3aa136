"""The curation job on the web side: resolve lists and models in the database, run the pipeline,
store the result as a new word-list version with per-word statistics and provenance."""

from __future__ import annotations

import dataclasses

from django.core.exceptions import ValidationError

from training.curation import CurationConfig, Inputs
from training.curation import run as curate
from training.curation.normalise import normalise_entries, split_entries
from webapp.catalog.builders import guesser_for, judge_for, spec_string
from webapp.catalog.models import ModelKind, ModelSpec, WordList, WordListEntry
from webapp.catalog.selectors import word_list_latest
from webapp.catalog.services import word_list_version_create
from webapp.jobs.kinds.checks import check_model


def candidate_bound(config: CurationConfig) -> int:
    """How many candidates the source can give at most (the splits cannot ask for more)."""
    if config.source == "word_lists":
        lists = [word_list_latest(n) for n in config.word_lists]
        return (
            WordListEntry.objects.filter(word_list__in=[w for w in lists if w])
            .values("word")
            .distinct()
            .count()
        )
    if config.source == "text":
        return len(normalise_entries(split_entries(config.words)).candidates)
    return config.top_n


def check(config: CurationConfig) -> None:
    """Refuse unknown lists and models, and splits larger than the source, before anything is
    queued."""
    errors: dict[str, list[str]] = {}
    check_model(errors, "judge", config.judge, "judge")
    check_model(errors, "guesser", config.guesser, "guesser")
    if config.fairness_judge:
        check_model(
            errors,
            "fairness_judge",
            config.fairness_judge,
            "judge",
            kinds=ModelKind.LLM,
            what="LLM judge",
        )
    if config.source == "word_lists":
        missing = [n for n in config.word_lists if word_list_latest(n) is None]
        if missing:
            errors["word_lists"] = [f"no word list named {n!r}" for n in missing]
    if not errors and config.split_by == "count":
        bound = candidate_bound(config)
        if config.split_total_count > bound:
            errors["split_by"] = [
                f"the splits need {config.split_total_count} words but the source has only {bound}"
            ]
    if errors:
        raise ValidationError(errors)


def _describe(spec: ModelSpec | None) -> dict | None:
    return (
        None
        if spec is None
        else {"name": spec.name, "id": spec.pk, "kind": spec.kind, "spec": spec_string(spec)}
    )


def run(config: CurationConfig, reporter) -> dict:
    done = WordList.objects.filter(curation_job_id=reporter.job_id, name=config.name).first()
    if done is not None:  # a re-delivered job whose list was already stored
        reporter.log(f"word list {done} was already created by this job")
        return {"word_list": _ref(done), **done.provenance.get("summary", {})}
    judge_spec = ModelSpec.objects.get(name=config.judge)
    guesser_spec = ModelSpec.objects.get(name=config.guesser)
    fairness_spec = (
        ModelSpec.objects.get(name=config.fairness_judge) if config.fairness_judge else None
    )
    sources, lists = [], None
    if config.source == "word_lists":
        lists = {}
        for name in config.word_lists:
            word_list = word_list_latest(name)
            lists[name] = list(
                word_list.entries.order_by("id").values_list("word__text", "category")
            )
            sources.append(_ref(word_list))
    precision = config.precision
    inputs = Inputs(
        judge=judge_for(judge_spec, precision=precision),
        lists=lists,
        fairness=judge_for(fairness_spec, precision=precision).backend if fairness_spec else None,
        make_guesser=lambda pool: guesser_for(guesser_spec, pool=pool, precision=precision),
    )
    result = curate(config, reporter, inputs=inputs)
    provenance = {
        "job": reporter.job_id,
        "config": dataclasses.asdict(config),
        "source": {"kind": config.source, "lists": sources},
        "judge": _describe(judge_spec),
        "reference_guesser": _describe(guesser_spec),
        "fairness_judge": _describe(fairness_spec),
        "funnel": result.funnel,
        "summary": result.summary,
    }
    origin = ", ".join(f"{s['name']} v{s['version']}" for s in sources) or config.source
    word_list = word_list_version_create(
        name=config.name,
        entries=result.entries,
        provenance=provenance,
        curation_job_id=reporter.job_id,
        source=f"curation job {reporter.job_id} from {origin}",
        description=f"Curated by job {reporter.job_id}: {result.summary['kept']} of "
        f"{result.summary['candidates']} candidates kept "
        f"({config.guesser} vs {config.judge}, k={config.samples}).",
    )
    reporter.log(f"created word list {word_list} ({len(result.entries)} words)")
    subset_lists = (
        _subset_lists(config, word_list, result.entries, reporter.job_id)
        if config.subset_lists
        else []
    )
    # the funnel lives in the list's provenance (and funnel.json), not in the job's result table
    return {"word_list": _ref(word_list), "subset_lists": subset_lists, **result.summary}


def _subset_lists(
    config: CurationConfig, parent: WordList, entries: list[dict], job_id: int
) -> list[dict]:
    names = sorted({s for e in entries for s in e["stats"]["subsets"]})
    out = []
    for subset in names:
        chosen = [e for e in entries if subset in e["stats"]["subsets"]]
        word_list = word_list_version_create(
            name=f"{config.name}/{subset}",
            entries=chosen,
            curation_job_id=job_id,
            source=f"subset {subset} of {parent}",
            description=f"The {subset} subset of {parent}.",
            provenance={"job": job_id, "subset_of": _ref(parent), "subset": subset},
        )
        out.append(_ref(word_list))
    return out


def _ref(word_list: WordList) -> dict:
    return {"id": word_list.pk, "name": word_list.name, "version": word_list.version}
