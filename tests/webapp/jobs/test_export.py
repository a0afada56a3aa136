import pytest
from django.core.exceptions import ValidationError

from tests.sending import tasks_held
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import Artifact, JobStatus
from webapp.jobs.services import job_run, job_submit

pytestmark = pytest.mark.django_db


def submit(kind, **config):
    with tasks_held():
        return job_submit(kind=kind, params=config)


def test_export_job_writes_jsonl_and_parquet_loadable_with_datasets(client, researcher):
    seed_word_lists()
    seed_model_specs()
    evaluation = submit(
        "evaluation", guesser="infogain", judge="kb", word_list="lmrl/objects", samples=1, limit=5
    )
    job_run(job_id=evaluation.pk)
    export = submit("export", job=evaluation.pk)
    assert job_run(job_id=export.pk) == JobStatus.FINISHED
    export.refresh_from_db()
    n_games = evaluation.games.count()
    assert export.result["games"] == n_games
    names = sorted(Artifact.objects.filter(job=export).values_list("name", flat=True))
    assert names == [
        "games.jsonl",
        "games.parquet",
        "trajectories.jsonl",
        "trajectories.parquet",
        "turns.jsonl",
        "turns.parquet",
    ]

    import datasets

    paths = {a.name: a.path for a in Artifact.objects.filter(job=export)}
    games = datasets.load_dataset("parquet", data_files=paths["games.parquet"], split="train")
    turns = datasets.load_dataset("json", data_files=paths["turns.jsonl"], split="train")
    trajectories = datasets.load_dataset(
        "json", data_files=paths["trajectories.jsonl"], split="train"
    )
    assert len(games) == n_games and set(games["secret"]) == set(
        evaluation.games.values_list("secret", flat=True)
    )
    assert len(turns) == export.result["turns"] and "verdict" in turns.column_names
    assert sum(len(t["turns"]) for t in trajectories) == len(turns)

    client.force_login(researcher)
    artifact = Artifact.objects.get(job=export, name="games.jsonl")
    response = client.get(f"/jobs/artifacts/{artifact.pk}/download/")
    assert response.status_code == 200 and b'"secret"' in b"".join(response.streaming_content)


def test_export_refuses_an_empty_selection_and_bad_formats():
    with pytest.raises(ValidationError, match="no games match"):
        submit("export", job=12345)
    with pytest.raises(ValidationError, match="formats"):
        submit("export", formats="csv")
