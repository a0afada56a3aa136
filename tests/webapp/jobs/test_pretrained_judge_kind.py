"""The `pretrained_judge` job: fine-tuning the cross-encoder judge from the web app (checks before
queueing, its queue, and the judge model spec it registers, which plays like any other)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from games.types import Verdict
from tests.sending import tasks_held
from tests.webapp.judge_rows import use_small_reference
from webapp.catalog.builders import judge_for
from webapp.catalog.models import ModelKind, ModelSpec
from webapp.catalog.services import seed_model_specs
from webapp.jobs.models import Checkpoint, Job
from webapp.jobs.services import job_run, job_submit
from webapp.labelling.models import DisagreementItem

pytestmark = pytest.mark.django_db
SMALL = {"max_rows": 48, "lora_rank": 4, "eval_every": 0, "batch_size": 16, "cpu_threads": 1}


def submit(**params) -> Job:
    with tasks_held():
        return job_submit(kind="pretrained_judge", params=params)


def refused(**params) -> dict:
    with pytest.raises(ValidationError) as err:
        submit(**params)
    assert not Job.objects.exists()
    return err.value.message_dict


def test_a_base_that_cannot_load_or_a_bad_setting_is_refused_before_queueing(tmp_path, monkeypatch):
    seed_model_specs()
    assert "neither a base model" in refused(base_model="bert-of-nowhere")["base_model"][0]
    assert "lora_rank" in refused(lora_rank=0)
    assert "input must be one of" in refused(input="poem")["input"][0]
    assert "yes/no answers" in refused(dataset="gold")["dataset"][0]
    monkeypatch.setenv("BASE_MODELS_DIR", str(tmp_path))  # a machine without `make setup`
    message = refused()["base_model"][0]
    assert "minilm-l6" in message and "make setup" in message


def test_it_goes_to_the_gpu_queue_where_there_is_one(settings):
    settings.JOBS_GPU_QUEUE = "gpu"
    assert submit(**SMALL).queue == "gpu"


@pytest.mark.django_db(transaction=True)  # as a worker runs it: each fenced write commits
def test_a_job_on_reference_and_gold_registers_a_playable_pretrained_judge(
    monkeypatch, client, researcher
):
    use_small_reference(monkeypatch)
    DisagreementItem.objects.create(secret="dog", question="Is it a pet?", gold="yes")
    job = submit(dataset="reference+gold", **SMALL)
    assert job_run(job_id=job.pk) == "finished", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    result = job.result
    assert (
        result["rows_by_source"]["gold"] == 1 and result["model_spec"] == f"pretrained-job{job.pk}"
    )
    spec = ModelSpec.objects.get(name=f"pretrained-job{job.pk}")
    assert (spec.kind, spec.role, spec.path) == (ModelKind.PRETRAINED, "judge", result["weights"])
    assert spec.produced_by_id == job.pk and "minilm-l6" in spec.description
    assert Checkpoint.objects.get(job=job).model_spec == spec
    answer = judge_for(spec).judge("dog", "Is it an animal?")
    assert answer.verdict in (Verdict.YES, Verdict.NO) and 0.0 < answer.p_yes < 1.0
    client.force_login(researcher)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert spec.name in page and "test/accuracy" in page


def test_the_launch_form_offers_the_inputs_and_the_combination(client, researcher):
    seed_model_specs()
    client.force_login(researcher)
    html = client.get("/jobs/new/pretrained_judge/").content.decode()
    for name in ("base_model", "input", "combine", "lora_rank", "max_rows", "dataset"):
        assert f'name="{name}"' in html, name
    assert 'value="minilm-l6"' in html
