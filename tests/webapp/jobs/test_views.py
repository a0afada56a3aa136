import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from webapp.catalog.models import ModelSpec
from webapp.jobs import selectors
from webapp.jobs.models import Job, Metric

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]
SMOKE_FORM = {"message": "hi", "steps": "2", "seconds_per_step": "0"}  # the admin's add form


def test_launch_form_is_generated_from_the_config_dataclass(rclient):
    body = rclient.get("/jobs/new/evaluation/").content.decode()
    assert 'name="samples"' in body and 'value="8"' in body  # default
    assert "k: games per word" in body  # help text from the dataclass metadata
    assert '<option value="infogain"' in body and '<option value="dbrl/paper_test"' in body


def test_invalid_launch_shows_errors_next_to_the_field_and_queues_nothing(rclient, no_queue):
    response = rclient.post(
        "/jobs/new/evaluation/",
        {
            "guesser": "infogain",
            "judge": "kb",
            "word_list": "dbrl/paper_test",
            "samples": "0",
            "max_turns": "20",
            "seed": "0",
            "batch_size": "64",
            "limit": "0",
        },
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "samples must be between 1 and 256" in body and 'class="field has-error"' in body
    assert Job.objects.count() == 0 and not no_queue.called


def test_valid_launch_queues_and_redirects_to_the_run_page(
    rclient, no_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(
            "/jobs/new/smoke/", {"message": "hi", "steps": "3", "seconds_per_step": "0"}
        )
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.config == {"message": "hi", "steps": 3, "seconds_per_step": 0.0}
    no_queue.assert_called_once()


def test_quick_eval_button_queues_infogain_on_paper_test_k8(rclient, no_queue):
    response = rclient.post("/jobs/quick-eval/")
    job = Job.objects.get()
    assert response.status_code == 302
    assert (
        job.kind == "evaluation"
        and job.config["samples"] == 8
        and job.config["word_list"] == "dbrl/paper_test"
    )


def test_run_page_shows_progress_metrics_results_and_live_partial(rclient):
    job = Job.objects.create(
        kind="smoke",
        config={"message": "x"},
        status="finished",
        progress=1.0,
        result={"echo": "<b>x</b>"},
    )
    Metric.objects.create(job=job, step=1, name="smoke/step", value=1.0)
    page = rclient.get(f"/jobs/{job.pk}/").content.decode()
    assert "chart.umd.min.js" in page and "data-metrics-url" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page  # results are escaped
    partial = rclient.get(f"/jobs/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<div id="job-status"') and "<html" not in partial
    data = rclient.get(f"/jobs/metrics.json?ids={job.pk}").json()
    assert data["jobs"][str(job.pk)]["metrics"]["smoke/step"] == [[1, 1.0]]


def test_the_run_page_names_metrics_from_one_query_and_its_refresh_reads_no_points(rclient):
    job = Job.objects.create(kind="smoke", config={"message": "x"}, status="running")
    Metric.objects.bulk_create(
        [Metric(job=job, step=s, name=n, value=1.0) for s in range(50) for n in ("b/loss", "a/lr")]
    )
    assert selectors.job_metric_names(job) == ["a/lr", "b/loss"]
    page = rclient.get(f"/jobs/{job.pk}/").content.decode()
    assert "No metrics yet." not in page
    with CaptureQueriesContext(connection) as refresh:
        rclient.get(f"/jobs/{job.pk}/", HTTP_HX_REQUEST="true")
    assert not [q for q in refresh.captured_queries if "jobs_metric" in q["sql"]]


def test_optional_reference_fields_offer_an_empty_choice(rclient):
    body = rclient.get("/jobs/new/export/").content.decode()
    guesser_select = body.split('name="guesser"')[1].split("</select>")[0]
    assert '<option value="" selected>(none)</option>' in guesser_select


def test_result_keys_named_like_dict_methods_render(rclient):
    job = Job.objects.create(kind="smoke", status="finished", result={"items": 4, "values": [1, 2]})
    body = rclient.get(f"/jobs/{job.pk}/").content.decode()
    assert '<th scope="row">items</th><td>4</td>' in body


def test_compare_highlights_config_differences(rclient):
    a = Job.objects.create(kind="smoke", config={"message": "a", "steps": 1})
    b = Job.objects.create(kind="smoke", config={"message": "b", "steps": 1})
    body = rclient.get(f"/jobs/compare/?ids={a.pk}&ids={b.pk}").content.decode()
    assert body.count('class="differs"') == 1  # message differs, steps does not


def test_admin_add_form_validates_like_the_api(rclient, no_queue):
    bad = rclient.post("/admin/jobs/job/add/", {"kind": "evaluation", "guesser": "nobody"})
    assert bad.status_code == 200 and "Select a valid choice. nobody" in bad.content.decode()
    assert Job.objects.count() == 0
    ok = rclient.post("/admin/jobs/job/add/", {"kind": "smoke", **SMOKE_FORM})
    assert ok.status_code == 302 and Job.objects.get().config["steps"] == 2


def test_admin_action_evaluates_selected_models(rclient, no_queue):
    ids = list(ModelSpec.objects.filter(name__in=["infogain", "kb"]).values_list("pk", flat=True))
    rclient.post(
        "/admin/catalog/modelspec/", {"action": "evaluate_models", "_selected_action": ids}
    )
    jobs = list(Job.objects.all())
    assert [j.config["guesser"] for j in jobs] == ["infogain"]  # kb is a judge, skipped


def test_players_cannot_open_researcher_pages(client, player):
    client.force_login(player)
    for url in ("/jobs/new/evaluation/", "/jobs/compare/", "/jobs/metrics.json?ids=1"):
        assert client.get(url).status_code == 403
    assert client.post("/jobs/quick-eval/").status_code == 403


def test_dpo_launch_form_offers_llm_specs_as_rating_model_and_shows_its_errors(rclient, no_queue):
    from webapp.catalog.models import ModelKind
    from webapp.jobs.forms import config_form_class
    from webapp.jobs.registry import REGISTRY

    ModelSpec.objects.create(
        name="rater", kind=ModelKind.TRANSFORMERS, role="judge", path="/models/rater"
    )
    body = rclient.get("/jobs/new/dpo/").content.decode()
    select = body.split('name="rating_model"')[1].split("</select>")[0]
    assert (
        '<option value="" selected>(none)</option>' in select and '<option value="rater">' in select
    )
    assert 'value="kb"' not in select and 'value="infogain"' not in select  # not LLMs

    form = config_form_class(REGISTRY["dpo"])()
    data = {
        name: ", ".join(map(str, f.initial)) if isinstance(f.initial, (list, tuple)) else f.initial
        for name, f in form.fields.items()
        if f.initial is not None and f.initial is not False
    }
    data = {k: ("on" if v is True else v) for k, v in data.items()}
    response = rclient.post("/jobs/new/dpo/", {**data, "reward": "rating", "rating_model": ""})
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["rating_model"] and "reward=rating needs" in errors["rating_model"][0]
    field_html = body_of_field(response.content.decode(), "rating_model")
    assert (
        "has-error" in field_html
        and "reward=rating needs the model spec of the rating judge" in field_html
    )

    response = rclient.post("/jobs/new/dpo/", {**data, "reward": "rating", "rating_model": "kb"})
    assert "rating_model" in response.context["form"].errors
    assert Job.objects.count() == 0 and not no_queue.called


def body_of_field(page: str, name: str) -> str:
    """The <div class="field…"> of the launch form holding the input named `name`."""
    start = page.rindex('<div class="field', 0, page.index(f'name="{name}"'))
    return page[start : page.index('<div class="field', start + 1)]
