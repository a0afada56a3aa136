"""The `judge` job: training the learned judge from the web app (checks before queueing, the cpu
queue, the rows it builds from gold and stored games, and the judge model spec it registers)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from games.types import Verdict
from tests.sending import tasks_held
from tests.webapp.judge_rows import use_small_reference
from tests.webapp.labelling.support import JUDGED, store_games
from training.judge.config import LearnedJudgeJobConfig
from webapp.catalog.builders import judge_for
from webapp.catalog.models import ModelKind, ModelSpec
from webapp.catalog.services import seed_model_specs
from webapp.jobs.kinds import judge as judge_kind
from webapp.jobs.models import Artifact, Checkpoint, Job
from webapp.jobs.reporter import DatabaseReporter
from webapp.jobs.services import job_run, job_submit
from webapp.labelling.models import DisagreementItem
from webapp.play.models import Turn

pytestmark = pytest.mark.django_db
SMALL = {"epochs": 2, "dim": 8, "hidden": 16, "batch_size": 32, "cpu_threads": 1}


def submit(**params) -> Job:
    with tasks_held():
        return job_submit(kind="judge", params=params)


def refused(**params) -> dict:
    with pytest.raises(ValidationError) as err:
        submit(**params)
    assert not Job.objects.exists()
    return err.value.message_dict


def gold(secret: str, question: str, label: str, **fields) -> DisagreementItem:
    return DisagreementItem.objects.create(secret=secret, question=question, gold=label, **fields)


def test_missing_data_is_refused_before_queueing_with_the_field_named(tmp_path):
    seed_model_specs()
    assert "yes/no answers" in refused(dataset="reference+gold")["dataset"][0]
    gold("dog", "Is it a pet?", "unclear")  # gold without a yes/no answer teaches nothing
    assert "dataset" in refused(dataset="gold")
    assert "no active judge" in refused(dataset="games", games_judge="nobody")["games_judge"][0]
    assert (
        "no stored game" in refused(dataset="reference+games", games_judge="kb")["games_judge"][0]
    )
    assert (
        "no file"
        in refused(dataset="file", data_path=str(tmp_path / "missing.jsonl"))["data_path"][0]
    )
    # a clear error, not a 500
    assert "NUL character" in refused(dataset="file", data_path="bad\x00name")["data_path"][0]
    assert "dataset must be one of" in refused(dataset="everything")["dataset"][0]


def test_it_runs_on_the_cpu_queue_even_where_models_go_to_a_gpu_queue(settings):
    settings.JOBS_GPU_QUEUE = "gpu"
    gold("dog", "Is it a pet?", "yes")
    assert submit(dataset="reference+gold").queue == "cpu"


def test_gold_and_games_rows_count_each_pair_once_with_its_weight_and_source():
    store_games()
    gold("dog", "Is it a pet?", "yes")
    gold("dog", "Is it a pet?", "yes")  # the same pair twice: one row, two yes votes
    gold("dog", "Is it a plant?", "no", labels_needed=1)
    gold("cat", "Is it a tool?", "invalid")  # not a yes/no answer
    rows = judge_kind.training_rows(
        LearnedJudgeJobConfig(dataset="games", games_judge="kb", extra_weight=3.0)
    ) + judge_kind.gold_rows(2.0)
    gold_rows = {(r.secret, r.question): r for r in rows if r.source == "gold"}
    assert {k: (r.yes_votes, r.no_votes, r.weight) for k, r in gold_rows.items()} == {
        ("dog", "Is it a pet?"): (2, 0, 2.0),
        ("dog", "Is it a plant?"): (0, 1, 2.0),
    }
    games = [r for r in rows if r.source == "games"]
    answered = Turn.objects.filter(game__judge__name="kb", verdict__in=("yes", "no")).exclude(
        judge_raw__startswith="rule:"
    )
    assert 0 < len(games) == len({(t.game.secret, t.question) for t in answered}) <= JUDGED
    assert all(r.weight == 3.0 and r.yes_votes + r.no_votes >= 1 for r in games)
    assert ("seal", "Is it a seal?") not in {
        (r.secret, r.question) for r in games
    }  # the rules decided it


def test_a_job_on_reference_and_games_registers_a_playable_judge_once(
    monkeypatch, client, researcher
):
    store_games()
    reference = use_small_reference(monkeypatch)
    job = submit(dataset="reference+games", games_judge="kb", **SMALL)
    assert job_run(job_id=job.pk) == "finished", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    result = job.result
    assert (
        result["rows_by_source"]["reference"] == len(reference)
        and result["rows_by_source"]["games"] > 0
    )
    assert (
        result["sources"] == ["games", "reference"]
        and result["model_spec"] == f"learned-job{job.pk}"
    )
    spec = ModelSpec.objects.get(name=f"learned-job{job.pk}")
    assert (spec.kind, spec.role, spec.path) == (ModelKind.LEARNED, "judge", result["weights"])
    assert spec.produced_by_id == job.pk
    assert f"by job {job.pk}" in spec.description and "games" in spec.description
    assert Checkpoint.objects.get(job=job).model_spec == spec
    rows = Artifact.objects.get(job=job, kind="judge-rows")
    assert rows.meta["games"] == result["rows_by_source"]["games"] and rows.size_bytes > 0
    answer = judge_for(spec).judge("dog", "Is it an animal?")
    assert answer.verdict in (Verdict.YES, Verdict.NO) and 0.0 <= answer.p_yes <= 1.0

    client.force_login(researcher)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert spec.name in page and "extra_rows.jsonl" in page and "val/accuracy" in page

    again = judge_kind.run(
        LearnedJudgeJobConfig(dataset="reference+games", games_judge="kb", **SMALL),
        DatabaseReporter(job),
    )  # a re-run of the same job (e.g. after a dead worker)
    assert (
        again["model_spec"] == spec.name
        and ModelSpec.objects.filter(produced_by_id=job.pk).count() == 1
    )


def test_the_launch_form_offers_judges_for_games_judge(client, researcher):
    seed_model_specs()
    client.force_login(researcher)
    html = client.get("/jobs/new/judge/").content.decode()
    assert (
        'name="games_judge"' in html
        and '<option value="kb+learned">' in html
        and 'name="dataset"' in html
    )
