"""The sft job on the paper's SFT turns (source=reference): nothing comes from the database but
the base model, and the launch form starts from the named setting smol-20q-sft (issue 32)."""

from __future__ import annotations

import pytest

from tests.sending import tasks_held
from tests.training.sft.helpers import tiny_model
from tests.webapp.jobs.test_launch_validation import field_block
from webapp.catalog.models import ModelSpec
from webapp.catalog.services import seed_model_specs
from webapp.jobs.models import Job
from webapp.jobs.services import job_run, job_submit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_heartbeats(settings):
    settings.JOB_HEARTBEAT_SECONDS = 3600


def test_a_reference_sft_job_needs_no_word_list_judge_or_games(tmp_path_factory):
    seed_model_specs(tiny_model(tmp_path_factory))  # no word list seeded: none is read
    params = dict(source="reference", max_turn_examples=4, max_steps=1, learning_rate=1e-3)
    params |= dict(global_batch_size=4, per_device_batch_size=4, judge="no-such-judge")
    with tasks_held():
        job = job_submit(kind="sft", params=params)
    assert job_run(job_id=job.pk) == "finished", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    assert job.result["examples"] == 4 and job.result["global_step"] == 1
    assert ModelSpec.objects.get(name=job.result["model_spec"]).parent.name == "tiny-llama"


@pytest.mark.usefixtures("seeded")
def test_the_launch_form_starts_from_the_named_setting_and_shows_reference_errors(rclient):
    page = rclient.get("/jobs/new/sft/").content.decode()
    assert "?preset=smol-20q-sft" in page
    page = rclient.get("/jobs/new/sft/?preset=smol-20q-sft").content.decode()
    assert 'value="reference" selected' in field_block(page, "source")
    assert 'value="smollm2-135m-instruct"' in field_block(page, "base_model")
    assert "checked" in field_block(page, "lora")
    form = {"base_model": "tiny-llama", "source": "teacher", "max_turn_examples": "5"}
    form |= {"reference_file": "x.parquet", "judge": "kb", "teacher": "infogain"}
    page = rclient.post("/jobs/new/sft/", form).content.decode()
    assert "max_turn_examples needs source=reference" in field_block(page, "max_turn_examples")
    assert "reference_file needs source=reference" in field_block(page, "reference_file")
    assert Job.objects.count() == 0
