"""Run pages, the runs list and Compare read like a report, not debug output (issue 22, item 8):
formatted results, durations and time left, a live runs list, cancel that asks first, a table
of final results and a sentence naming the ids Compare could not find."""

from datetime import timedelta

import pytest
from django.utils import timezone

from webapp.jobs.formatting import number_text, rate_text, result_rows
from webapp.jobs.models import Job, JobStatus

pytestmark = pytest.mark.django_db

EVALUATION_RESULT = {
    "n_games": 3464,
    "n_words": 433,
    "k": 8,
    "success_rate": 0.9242424242424242,
    "success_ci95": [0.9012345678, 0.9456789012],
    "win_rule": "reference",
    "pass_at_k": 0.9745958429561201,
    "mean_turns": 13.642857142857142,
    "mean_turns_solved": 12.987654321,
    "invalid_rate": 0.0012345678,
    "skipped_words": ["xylophone", "quasar"],
    "verdicts": {"yes": 12000, "no": 30123},
    "by_difficulty": {
        "easy": {"n_games": 1200, "success_rate": 0.98765, "success_ci95": [0.97, 0.995]},
    },
}


def finished_evaluation(**fields) -> Job:
    now = timezone.now()
    values = {
        "kind": "evaluation",
        "status": JobStatus.FINISHED,
        "progress": 1.0,
        "config": {"guesser": "infogain", "samples": 8, "word_list": "dbrl/paper_test"},
        "result": EVALUATION_RESULT,
        "started_at": now - timedelta(minutes=12, seconds=5),
        "finished_at": now,
    }
    return Job.objects.create(**{**values, **fields})


def test_results_are_formatted_for_people():
    rows = {r["key"]: r for r in result_rows(EVALUATION_RESULT, skip=("by_difficulty",))}
    assert rows["success_rate"]["text"] == "92.4% [90.1, 94.6]"
    assert "success_ci95" not in rows  # folded into its rate
    assert rows["n_games"]["text"] == "3,464" and rows["mean_turns"]["text"] == "13.64"
    assert rows["skipped_words"]["text"] == "xylophone, quasar"
    assert rows["verdicts"]["table"]["rows"] == [["yes", "12,000"], ["no", "30,123"]]
    assert rate_text(0.5) == "50.0%" and number_text(1234567) == "1,234,567"


def test_an_agreement_coefficient_is_a_number_not_a_percentage():
    rows = {r["key"]: r for r in result_rows({"kappa": 0.61, "kappa_free": 0.4, "accuracy": 0.9})}
    assert rows["kappa"]["text"] == "0.61" and rows["kappa_free"]["text"] == "0.4"
    assert rows["accuracy"]["text"] == "90.0%"


def test_finished_evaluation_run_page_shows_no_raw_values(rclient):
    job = finished_evaluation()
    page = rclient.get(f"/jobs/{job.pk}/").content.decode()
    results = page[page.index('id="job-results"') : page.index("<h2>Games</h2>")]
    assert "92.4% [90.1, 94.6]" in results and "3,464" in results and "97.5%" in results
    assert "98.8% [97.0, 99.5]" in results  # the difficulty table too
    assert "0.9242424242424242" not in page and "13.642857" not in page
    assert "['" not in page and "{'" not in page  # no Python list or dict reprs
    assert "<td>12,000</td>" in results  # a dict as a small table


def test_run_page_shows_duration_and_while_running_the_time_left(rclient):
    finished = finished_evaluation()
    page = rclient.get(f"/jobs/{finished.pk}/").content.decode()
    assert "12 min 5 s" in page and "left" not in page.split('id="job-timing"')[1][:300]
    running = Job.objects.create(
        kind="smoke",
        status=JobStatus.RUNNING,
        progress=0.25,
        started_at=timezone.now() - timedelta(minutes=10),
    )
    timing = rclient.get(f"/jobs/{running.pk}/").content.decode().split('id="job-timing"')[1]
    assert "10 min" in timing[:300] and "about 30 min 0 s left" in timing[:300]


def test_runs_list_polls_while_a_job_is_active_and_stops_when_none_is(rclient):
    job = Job.objects.create(kind="smoke", status=JobStatus.RUNNING, progress=0.5)
    dashboard = rclient.get("/jobs/").content.decode()
    runs = dashboard[dashboard.index('<tbody id="runs"') :]
    assert runs.split(">")[0].count('hx-trigger="every 3s"') == 1 and "/jobs/runs/" in runs[:300]
    partial = rclient.get(f"/jobs/runs/?ids={job.pk}").content.decode()
    assert partial.lstrip().startswith('<tbody id="runs" hx-get=') and "<html" not in partial
    assert f'value="{job.pk}" aria-label="compare job {job.pk}" checked' in partial  # kept ticked
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FINISHED, progress=1.0)
    partial = rclient.get("/jobs/runs/").content.decode()
    assert "hx-trigger" not in partial and "hx-get" not in partial  # polling stops
    assert (
        "hx-trigger"
        not in rclient.get("/jobs/").content.decode().split('<tbody id="runs"')[1][:200]
    )


def test_cancel_asks_first(rclient):
    job = Job.objects.create(kind="smoke", status=JobStatus.RUNNING)
    page = rclient.get(f"/jobs/{job.pk}/").content.decode()
    form = page[page.index(f'action="/jobs/{job.pk}/cancel/confirm/"') - 40 :][:600]
    assert 'method="get"' in form and "hx-confirm=" in form and "onclick" not in form
    confirm = rclient.get(f"/jobs/{job.pk}/cancel/confirm/")
    body = confirm.content.decode()
    assert confirm.status_code == 200 and f'action="/jobs/{job.pk}/cancel/"' in body
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING  # asking changes nothing
    swapped = rclient.post(f"/jobs/{job.pk}/cancel/", HTTP_HX_REQUEST="true")
    body = swapped.content.decode()  # htmx: the status block, swapped in place
    assert swapped.status_code == 200 and body.startswith('<div id="job-status"')
    assert 'id="job-status-value">stopping<' in body


def test_compare_shows_final_results_and_names_ids_it_could_not_find(rclient):
    a = finished_evaluation()
    b = finished_evaluation(result={**EVALUATION_RESULT, "success_rate": 0.5, "n_games": 1000})
    page = rclient.get(f"/jobs/compare/?ids={a.pk},{b.pk},99999&ids=abc").content.decode()
    table = page[page.index('id="final-results"') : page.index("<h2>Configs</h2>")]
    assert "92.4% [90.1, 94.6]" in table and "50.0% [90.1, 94.6]" in table and "1,000" in table
    assert table.count("<tr>") == 3  # a header and one row per job
    assert page.index('id="final-results"') < page.index('id="charts"')  # above the curves
    assert "No job with id “99999” or “abc”" in page


def test_a_learning_rate_is_a_number_not_a_percentage(rclient):
    """Issue 34 item 26: a learning rate ends in "_rate" but is a step size; as a percentage 3e-05
    read "0.0%" in a run's results and in a nested config."""
    job = finished_evaluation(
        kind="grpo",
        config={"optim": {"learning_rate": 1e-5}},
        result={"learning_rate": 3e-5, "invalid_rate": 0.25},
    )
    page = rclient.get(f"/jobs/{job.pk}/").content.decode()
    assert "0.0%" not in page and "learning_rate: 1e-05" in page and "<td>3e-05</td>" in page
    assert "25.0%" in page  # a rate still reads as one
