import pytest
from django.core.exceptions import ValidationError

from games.llm.base import PAPER_VAL_SAMPLING
from tests.sending import tasks_held
from tests.training.sft.helpers import tiny_model
from webapp.catalog.models import ModelSpec
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import Job, JobStatus
from webapp.jobs.services import job_run, job_submit
from webapp.play.models import Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    seed_word_lists()
    seed_model_specs()


def submit(**config):
    with tasks_held():
        return job_submit(kind="evaluation", params=config)


def test_evaluation_job_runs_stores_games_and_reports_metrics(seeded):
    job = submit(
        guesser="infogain",
        judge="kb",
        word_list="dbrl/paper_test",
        samples=2,
        limit=10,
        batch_size=8,
    )
    assert job.queue == "cpu"
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    games = Game.objects.filter(job=job)
    assert games.count() == 20 - 2 * len(job.result["skipped_words"])
    assert set(games.values_list("sample_index", flat=True)) == {0, 1}
    result = job.result
    assert result["n_games"] == games.count() and result["k"] == 2
    assert result["success_rate"] >= 0.6
    assert result["success_ci95"][0] <= result["success_rate"] <= result["success_ci95"][1]
    assert 0 <= result["pass_at_k"] <= 1 and result["by_difficulty"]
    assert (
        result["win_rule"] == "reference"
        and result["reference_success_rate"] == result["success_rate"]
    )
    assert (
        result["strict_success_ci95"][0] <= result["strict_success_rate"] <= result["success_rate"]
    )
    assert all("strict_success_rate" in band for band in result["by_difficulty"].values())
    assert job.metrics.filter(name="eval/success_rate").exists()
    assert job.metrics.filter(name="eval/strict_success_rate").exists()
    game = games.filter(outcome="won").first()
    assert game.turns.count() == game.n_turns and game.turns.last().verdict == "finished"
    assert game.turns.first().top_candidates  # the guesser's posterior is kept per turn


def test_rerun_skips_stored_games_no_duplicates(seeded):
    job = submit(
        guesser="infogain",
        judge="kb",
        word_list="dbrl/paper_test",
        samples=1,
        limit=6,
        batch_size=3,
    )
    from webapp.jobs.kinds import evaluation

    # pretend an earlier attempt stored the first batch, then died
    job_run(job_id=job.pk)
    n = Game.objects.filter(job=job).count()
    Job.objects.filter(pk=job.pk).update(status=JobStatus.QUEUED)  # as if re-queued by the reaper
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    assert Game.objects.filter(job=job).count() == n
    job.refresh_from_db()
    assert job.result["games_played_now"] == 0 and job.result["n_games"] == n
    assert evaluation.evaluation_results(job.pk, k=1)["n_games"] == n


def test_an_evaluation_under_the_strict_rule_stores_it_with_each_game(seeded):
    job = submit(
        guesser="infogain",
        judge="kb",
        word_list="dbrl/paper_test",
        samples=1,
        limit=6,
        batch_size=6,
        win_rule="strict",
    )
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    assert {g.config["win_rule"] for g in Game.objects.filter(job=job)} == {"strict"}
    assert (
        job.result["win_rule"] == "strict"
        and job.result["strict_success_rate"] == job.result["success_rate"]
    )


@pytest.mark.parametrize(
    "field,value",
    [
        ("guesser", "nobody"),
        ("judge", "infogain"),
        ("word_list", "nope"),
        ("samples", 0),
        ("split", "weird"),
        ("win_rule", "lenient"),
        ("sampling", "greedy"),
    ],
)
def test_bad_references_are_refused_before_queueing(seeded, field, value):
    params = {"guesser": "infogain", "judge": "kb", "word_list": "dbrl/paper_test", field: value}
    with pytest.raises(ValidationError) as err:
        submit(**params)
    assert field in err.value.message_dict
    assert Job.objects.count() == 0


@pytest.mark.parametrize(
    "sampling,expected",
    [("model", dict(temperature=1.0, top_p=1.0, top_k=0)), ("paper", PAPER_VAL_SAMPLING)],
)
def test_a_model_guesser_plays_with_its_specs_or_the_papers_sampling(
    tmp_path_factory, sampling, expected
):
    seed_word_lists()
    seed_model_specs(tiny_model(tmp_path_factory))
    job = submit(
        guesser="tiny-llama",
        judge="kb",
        word_list="dbrl/paper_test",
        samples=1,
        limit=2,
        max_turns=2,
        sampling=sampling,
        precision="float32",
    )
    assert job_run(job_id=job.pk) == JobStatus.FINISHED, Job.objects.get(pk=job.pk).error
    played = Job.objects.get(pk=job.pk).result["sampling"]
    assert played["name"] == sampling
    assert {k: played[k] for k in expected} == expected
    spec = ModelSpec.objects.get(name="tiny-llama")
    assert played["max_new_tokens"] == spec.sampling["max_new_tokens"]  # the spec's budget
