"""Labelling pages: roles, the queue with and without htmx, review, exports, scoring and training a
judge."""

from __future__ import annotations

import json
import re

import pytest

from tests.sending import tasks_held
from webapp.jobs.models import Artifact, Job
from webapp.labelling.models import DisagreementItem, JudgeVote, Label

pytestmark = pytest.mark.django_db
RESEARCHER_PAGES = ["/labelling/review/", "/labelling/agreement/", "/labelling/judges/"]


def test_role_checks_on_pages_and_forms(client, queued, player, annotator):
    item = DisagreementItem.objects.first()
    assert client.get("/labelling/").status_code == 302  # guests log in first
    client.force_login(player)
    assert client.get("/labelling/").status_code == 403
    assert client.post(f"/labelling/items/{item.pk}/label/", {"verdict": "yes"}).status_code == 403
    assert (
        client.post(f"/labelling/items/{item.pk}/adjudicate/", {"gold": "yes"}).status_code == 403
    )
    client.force_login(annotator)
    assert client.get("/labelling/").status_code == 200
    for url in RESEARCHER_PAGES:
        assert client.get(url).status_code == 403, url
    assert (
        client.post(f"/labelling/items/{item.pk}/adjudicate/", {"gold": "yes"}).status_code == 403
    )
    assert client.get("/labelling/export/labels.jsonl").status_code == 403
    item.refresh_from_db()
    assert item.gold == "" and not Label.objects.filter(annotator=player).exists()
    assert (
        'href="/labelling/"' in client.get("/").content.decode()
    )  # the nav links the queue for annotators


def test_queue_page_is_blind_and_has_buttons_shortcuts_and_a_live_region(client, queued, annotator):
    client.force_login(annotator)
    html = client.get("/labelling/").content.decode()
    assert "“Is it an animal?”" in html and "seal" in html
    assert "kb-any-sense" not in html  # the judges' votes stay hidden
    for value, key in (("yes", "y"), ("no", "n"), ("unclear", "u"), ("invalid", "i")):
        assert f'name="verdict" value="{value}" data-shortcut="{key}"' in html
    assert (
        'data-shortcut="ctrl+space"' in html
        and 'aria-live="polite"' in html
        and "js/labelling.js" in html
    )


def test_label_without_javascript_redirects_and_reveals_the_votes(client, queued, annotator):
    client.force_login(annotator)
    item = DisagreementItem.objects.get(question="Is it an animal?")
    response = client.post(f"/labelling/items/{item.pk}/label/", {"verdict": "yes"})
    assert response.status_code == 302 and response["Location"] == f"/labelling/?after={item.pk}"
    html = client.get(response["Location"]).content.decode()
    assert "you said" in html and "kb-any-sense" in html and "Undo last label" in html
    assert Label.objects.get(annotator=annotator).verdict == "yes"
    nxt = DisagreementItem.objects.get(question="Is it an organism?")
    assert (
        f'formaction="/labelling/items/{nxt.pk}/skip/"' in html
    )  # the skip button posts without JavaScript too
    response = client.post(f"/labelling/items/{nxt.pk}/skip/")
    assert response.status_code == 302 and response["Location"] == "/labelling/"
    assert "Is it an organism?" not in client.get("/labelling/").content.decode()


def test_htmx_label_skip_and_undo_return_the_fragment_with_an_announcement(
    client, queued, annotator
):
    client.force_login(annotator)
    item = DisagreementItem.objects.get(question="Is it an animal?")
    html = client.post(
        f"/labelling/items/{item.pk}/label/", {"verdict": "no"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in html and 'hx-swap-oob="innerHTML"' in html
    assert "Saved “no”. The judges said: kb no, kb-any-sense yes." in html
    nxt = DisagreementItem.objects.get(pk=int(html.split('data-item="')[1].split('"')[0]))
    html = client.post(f"/labelling/items/{nxt.pk}/skip/", HTTP_HX_REQUEST="true").content.decode()
    assert "Skipped" in html and f'data-item="{nxt.pk}"' not in html
    html = client.post("/labelling/undo/", HTTP_HX_REQUEST="true").content.decode()
    assert "Undone" in html and f'data-item="{item.pk}"' in html and not Label.objects.exists()
    html = client.post("/labelling/undo/", HTTP_HX_REQUEST="true").content.decode()
    assert "There is no label to undo." in html


def _header(html: str) -> str:
    """The queue's progress header, its words only."""
    header = html[html.index('id="lab-progress"') : html.index("</p>", html.index("lab-progress"))]
    return " ".join(re.sub(r"<[^>]+>", " ", header.split(">", 1)[1]).split())


def test_the_queue_header_moves_with_each_label_of_an_htmx_page(client, queued, make_user):
    """Issue 46 item 4: "4 of 4 items still need labels" stayed while one person labelled, since
    each item asks for three people's labels; the header counts the labels too."""
    first, second = make_user("annotator"), make_user("annotator")
    client.force_login(first)
    assert "0 of 12 labels given by everyone" in _header(client.get("/labelling/").content.decode())
    item = DisagreementItem.objects.get(question="Is it an animal?")
    html = client.post(
        f"/labelling/items/{item.pk}/label/", {"verdict": "no"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    header = _header(html)
    assert "Labelled by you: 1" in header and "1 of 12 labels given by everyone" in header
    assert "4 of 4 items still need more labels (several people label each)" in header
    DisagreementItem.objects.filter(pk=item.pk).update(labels_needed=1)  # one label was enough
    client.force_login(second)
    header = _header(client.get("/labelling/").content.decode())
    assert "1 of 10 labels given" in header and "3 of 4 items still need more labels" in header


def test_review_adjudicate_with_htmx_and_plain_post(client, queued, researcher):
    client.force_login(researcher)
    item = DisagreementItem.objects.first()
    html = client.get("/labelling/review/?show=all").content.decode()
    assert f'id="item-{item.pk}"' in html and "kb-any-sense" in html
    row = client.post(
        f"/labelling/items/{item.pk}/adjudicate/", {"gold": "invalid"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert (
        row.lstrip().startswith(f'<tr id="item-{item.pk}"')
        and '<option value="invalid" selected>' in row
    )
    response = client.post(
        f"/labelling/items/{item.pk}/adjudicate/",
        {"gold": "no", "next": "/labelling/review/?show=adjudicated"},
    )
    assert (
        response.status_code == 302
        and response["Location"] == "/labelling/review/?show=adjudicated"
    )
    item.refresh_from_db()
    assert item.gold == "no" and item.adjudicated_by == researcher
    assert (
        f'id="item-{item.pk}"' in client.get("/labelling/review/?show=adjudicated").content.decode()
    )
    assert (
        "No items match." in client.get("/labelling/review/?show=bogus").content.decode()
    )  # default: disputed


def test_exports_load_with_datasets(client, queued, researcher, tmp_path):
    item = DisagreementItem.objects.get(question="Is it an organism?")
    item.gold = "yes"
    item.save()
    client.force_login(researcher)
    jsonl = client.get("/labelling/export/labels.jsonl")
    assert jsonl["Content-Type"] == "application/jsonl"
    rows = [json.loads(line) for line in jsonl.content.decode().splitlines()]
    assert len(rows) == 4 and {r["gold"] for r in rows} == {"", "yes"}
    organism = next(r for r in rows if r["id"] == item.pk)
    assert (
        organism["gold_source"] == "adjudicated"
        and len(organism["votes"]) == 2
        and organism["history"]
    )
    parquet = client.get("/labelling/export/labels.parquet")
    assert parquet.status_code == 200 and parquet["Content-Disposition"].endswith('labels.parquet"')
    assert parquet["Content-Type"] == "application/vnd.apache.parquet"
    (tmp_path / "labels.parquet").write_bytes(parquet.content)
    import datasets

    data = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "labels.parquet"), split="train"
    )
    assert len(data) == 4 and set(data.column_names) >= {
        "secret",
        "question",
        "history",
        "labels",
        "votes",
        "gold",
    }
    assert client.get("/labelling/export/labels.csv").status_code == 404


def test_score_a_judge_on_gold_in_the_request_or_as_a_job(client, queued, researcher):
    from webapp.catalog.models import ModelSpec

    item = DisagreementItem.objects.get(question="Is it a building?")
    item.gold = "yes"
    item.save()
    client.force_login(researcher)
    response = client.post("/labelling/judges/score/", {"judge": "kb"})
    assert response.status_code == 302
    assert JudgeVote.objects.filter(item=item, judge_name="kb", job__isnull=True).count() == 1
    ModelSpec.objects.create(name="tiny-judge", kind="transformers", role="judge", path="/nowhere")
    with tasks_held():
        response = client.post("/labelling/judges/score/", {"judge": "tiny-judge"})
    job = Job.objects.get(kind="disagreements", config__source="gold")
    assert response["Location"] == f"/jobs/{job.pk}/" and job.config["judges"] == ["tiny-judge"]
    html = client.get("/labelling/judges/").content.decode()
    assert (
        'data-judge="kb-any-sense"' in html
        and "accuracy-chart" in html
        and 'id="accuracy-data"' in html
    )


def test_train_button_queues_the_judge_job_on_reference_and_gold_and_keeps_the_gold_set(
    client, queued, researcher
):
    for question, gold in (("Is it an animal?", "yes"), ("Is it an electronic device?", "unclear")):
        DisagreementItem.objects.filter(question=question).update(gold=gold)
    client.force_login(researcher)
    with tasks_held():
        response = client.post("/labelling/judges/train/")
    job = Job.objects.get(kind="judge")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.config["dataset"] == "reference+gold" and job.queue == "cpu"
    artifact = Artifact.objects.get(job=job, kind="judge-sft-dataset", name__endswith="train.jsonl")
    with open(artifact.path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    assert len(rows) == 1  # gold "unclear" has no training target
    messages = rows[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert "The secret that has to be guessed is 'seal'" in messages[1]["content"]
    assert messages[2]["content"] == "<answer>Yes</answer>"
    assert client.get(f"/jobs/artifacts/{artifact.pk}/download/").status_code == 200
    html = client.get("/labelling/judges/").content.decode()
    assert "Train the learned judge on the gold labels" in html and "(SFT)" not in html


def test_train_button_without_yes_no_gold_says_so_and_queues_nothing(client, queued, researcher):
    DisagreementItem.objects.filter(question="Is it an electronic device?").update(gold="unclear")
    client.force_login(researcher)
    response = client.post("/labelling/judges/train/", follow=True)
    assert "no yes/no answers to train on yet" in response.content.decode()
    assert not Job.objects.filter(kind="judge").exists() and not Artifact.objects.exists()
    assert client.get("/labelling/judges/train/").status_code == 405


def test_a_refused_queue_or_judges_action_shows_why(client, queued, researcher):
    """A service's refusal (ApplicationError) becomes the queue's error; a bad judges-page form a
    message."""
    client.force_login(researcher)  # researchers may label too
    item = DisagreementItem.objects.get(question="Is it an animal?")
    assert client.post(f"/labelling/items/{item.pk}/label/", {"verdict": "yes"}).status_code == 302
    html = client.post(
        f"/labelling/items/{item.pk}/label/", {"verdict": "no"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in html and "You have already labelled this item." in html
    assert Label.objects.get(item=item).verdict == "yes"
    response = client.post("/labelling/judges/score/", {"judge": "no-such-judge"}, follow=True)
    assert response.redirect_chain[-1][0] == "/labelling/judges/"
    assert "Choose a judge model spec." in response.content.decode()
