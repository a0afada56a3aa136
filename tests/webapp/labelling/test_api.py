"""The labelling API: the queue round trip, role checks, review and gold, and the schema."""

from __future__ import annotations

import pytest

from webapp.labelling.models import DisagreementItem, Label

pytestmark = pytest.mark.django_db


def test_annotator_round_trip_next_label_reveal_undo_skip(client, queued, annotator):
    client.force_login(annotator)
    body = client.get("/api/labelling/next/").json()
    item = body["item"]
    assert body["progress"]["remaining"] == 4 and item["labels_needed"] == 3
    assert "votes" not in item and "is_control" not in item  # blind
    assert (item["secret"], item["question"]) == ("seal", "Is it an animal?") and item[
        "history"
    ] == []
    response = client.post(
        f"/api/labelling/items/{item['id']}/labels/",
        {"verdict": "yes", "seconds": 2.5},
        content_type="application/json",
    )
    assert response.status_code == 201
    answer = response.json()
    assert answer["seconds"] == 2.5 and answer["completed"] is False
    assert {v["judge_name"] for v in answer["votes"]} == {"kb", "kb-any-sense"}
    again = client.post(
        f"/api/labelling/items/{item['id']}/labels/",
        {"verdict": "no"},
        content_type="application/json",
    )
    assert again.status_code == 409 and "already labelled" in again.json()["detail"]
    undone = client.post("/api/labelling/undo/")
    assert undone.status_code == 200 and undone.json()["id"] == item["id"]
    assert not Label.objects.exists()
    assert client.get("/api/labelling/next/").json()["item"]["id"] == item["id"]  # back to me
    assert client.post(f"/api/labelling/items/{item['id']}/skip/").status_code == 204
    assert client.get("/api/labelling/next/").json()["item"]["id"] != item["id"]
    bad = client.post(
        f"/api/labelling/items/{item['id']}/labels/",
        {"verdict": "maybe"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert (
        client.post(
            "/api/labelling/items/999999/labels/",
            {"verdict": "yes"},
            content_type="application/json",
        ).status_code
        == 404
    )


def test_players_cannot_label_or_adjudicate_and_annotators_cannot_adjudicate(
    client, queued, player, annotator
):
    item = DisagreementItem.objects.first()
    for user in (None, player):
        if user:
            client.force_login(user)
        assert client.get("/api/labelling/next/").status_code in (401, 403)
        assert client.post(
            f"/api/labelling/items/{item.pk}/labels/",
            {"verdict": "yes"},
            content_type="application/json",
        ).status_code in (401, 403)
    client.force_login(annotator)
    assert client.get("/api/labelling/next/").status_code == 200
    for method, url in [
        ("post", f"/api/labelling/items/{item.pk}/gold/"),
        ("get", "/api/labelling/items/"),
        ("get", "/api/labelling/agreement/"),
        ("get", "/api/labelling/judges/"),
    ]:
        response = getattr(client, method)(url, {"gold": "yes"} if method == "post" else None)
        assert response.status_code == 403, url
    item.refresh_from_db()
    assert item.gold == "" and not Label.objects.exists()


def test_researcher_reviews_sets_gold_and_reads_agreement_and_accuracy(
    client, queued, make_user, researcher
):
    item = DisagreementItem.objects.get(question="Is it an animal?")
    for verdict in ("yes", "yes", "no"):
        client.force_login(make_user("annotator"))
        assert (
            client.post(
                f"/api/labelling/items/{item.pk}/labels/",
                {"verdict": verdict},
                content_type="application/json",
            ).status_code
            == 201
        )
    client.force_login(researcher)
    disputed = client.get("/api/labelling/items/", {"show": "disputed"}).json()
    assert disputed["count"] == 1
    row = disputed["results"][0]
    assert row["id"] == item.pk and sorted(lab["verdict"] for lab in row["labels"]) == [
        "no",
        "yes",
        "yes",
    ]
    assert {v["judge_name"]: v["verdict"] for v in row["votes"]} == {
        "kb": "no",
        "kb-any-sense": "yes",
    }
    assert row["agreement"] == pytest.approx(1 / 3)
    gold = client.post(
        f"/api/labelling/items/{item.pk}/gold/", {"gold": "yes"}, content_type="application/json"
    )
    assert (
        gold.status_code == 200
        and gold.json()["gold"] == "yes"
        and gold.json()["adjudicated_by"] == researcher.username
    )
    assert client.get("/api/labelling/items/", {"show": "disputed"}).json()["count"] == 0
    board = client.get("/api/labelling/judges/").json()
    rows = {r["judge"]: r for r in board["rows"]}
    assert board["gold_items"] == 1 and board["gold_sources"] == {"adjudicated": 1}
    assert (
        rows["kb-any-sense"]["accuracy"]["value"] == 1.0 and rows["kb"]["accuracy"]["value"] == 0.0
    )
    assert rows["kb"]["taxonomy"]["false_no"] == 1
    agreement = client.get("/api/labelling/agreement/").json()
    assert agreement["n_units"] == 1 and agreement["percent_agreement"]["value"] == pytest.approx(
        1 / 3
    )
    assert client.get("/api/labelling/agreement/", {"subset": "nope"}).status_code == 400


def test_schema_documents_the_labelling_api(client, db):
    schema = client.get("/api/schema/?format=json").json()
    paths = set(schema["paths"])
    assert {
        "/api/labelling/next/",
        "/api/labelling/items/{item_id}/labels/",
        "/api/labelling/undo/",
        "/api/labelling/items/{item_id}/skip/",
        "/api/labelling/items/{item_id}/gold/",
        "/api/labelling/items/",
        "/api/labelling/agreement/",
        "/api/labelling/judges/",
        "/api/labelling/disputes/",
    } <= paths
    components = schema["components"]["schemas"]
    assert {
        "LabellingItem",
        "LabellingAgreement",
        "LabellingJudgeBoard",
        "LabellingTaxonomy",
    } <= set(components)
    assert components["LabellingJudgeRow"]["properties"]["taxonomy"]["$ref"].endswith(
        "/LabellingTaxonomy"
    )
