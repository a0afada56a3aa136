"""The embedded default end to end: stored games -> disagreements job (kb vs kb-any-sense) -> three
annotators label through the API -> agreement and judge accuracy move to the hand-computed
numbers."""

from __future__ import annotations

import pytest

from tests.webapp.labelling.support import run_disagreements
from webapp.labelling.models import DisagreementItem

pytestmark = pytest.mark.django_db

LABELS = {  # question -> the three annotators' labels
    "Is it an animal?": ("yes", "yes", "yes"),  # seal: consensus yes (kb said no, kb-any-sense yes)
    "Is it an organism?": ("yes", "yes", "no"),  # seal: disputed, adjudicated later
    "Is it an electronic device?": (
        "no",
        "no",
        "no",
    ),  # mouse: consensus no (kb no, kb-any-sense yes)
    "Is it a building?": ("yes", "yes", "yes"),  # club: consensus yes (kb no, kb-any-sense yes)
}


def test_labels_update_agreement_and_judge_accuracy(client, games, make_user, researcher):
    client.force_login(researcher)
    assert client.get("/api/labelling/judges/").json()["rows"] == []
    job = run_disagreements(controls=0.0)
    assert DisagreementItem.objects.filter(job=job).count() == 4
    before = client.get("/api/labelling/agreement/").json()
    assert before["n_units"] == 0 and before["fleiss_kappa"]["value"] is None

    annotators = [make_user("annotator") for _ in range(3)]
    for k, person in enumerate(annotators):
        client.force_login(person)
        while (item := client.get("/api/labelling/next/").json()["item"]) is not None:
            verdict = LABELS[item["question"]][k]
            assert (
                client.post(
                    f"/api/labelling/items/{item['id']}/labels/",
                    {"verdict": verdict},
                    content_type="application/json",
                ).status_code
                == 201
            )
    client.force_login(researcher)

    # Agreement by hand: per item the share of agreeing pairs is 1, 1/3, 1, 1 -> p_a = 10/12.
    # π_yes = (1 + 2/3 + 0 + 1)/4 = 2/3, π_no = 1/3.
    # Fleiss: p_e = 4/9 + 1/9 = 5/9, κ = (5/6 − 5/9)/(4/9) = 0.625.
    # AC1 (4 categories): p_e = (2/3·1/3 + 1/3·2/3)/3 = 4/27, AC1 = (5/6 − 4/27)/(23/27) = 0.80435.
    after = client.get("/api/labelling/agreement/").json()
    assert after["n_units"] == 4 and after["n_ratings"] == 12
    assert after["percent_agreement"]["value"] == pytest.approx(10 / 12)
    assert after["fleiss_kappa"]["value"] == pytest.approx(0.625)
    assert after["gwet_ac1"]["value"] == pytest.approx((5 / 6 - 4 / 27) / (23 / 27))
    assert after["fleiss_kappa"]["lo"] <= 0.625 <= after["fleiss_kappa"]["hi"]
    assert {r["rater"] for r in after["raters"]} == {a.username for a in annotators}

    # Judge accuracy on the three unanimous items: kb is right only on the mouse (1/3),
    # kb-any-sense on 2/3.
    board = client.get("/api/labelling/judges/").json()
    rows = {r["judge"]: r for r in board["rows"]}
    assert board["gold_sources"] == {"consensus": 3}
    assert (
        rows["kb"]["accuracy"]["value"] == pytest.approx(1 / 3)
        and rows["kb"]["taxonomy"]["false_no"] == 2
    )
    assert rows["kb-any-sense"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert rows["kb-any-sense"]["taxonomy"]["false_yes"] == 1
    assert [r["judge"] for r in board["rows"]] == ["kb-any-sense", "kb"]

    # The researcher settles the disputed item: a seal (the animal) is an organism.
    disputed = client.get("/api/labelling/items/", {"show": "disputed"}).json()["results"]
    assert [d["question"] for d in disputed] == ["Is it an organism?"]
    client.post(
        f"/api/labelling/items/{disputed[0]['id']}/gold/",
        {"gold": "yes"},
        content_type="application/json",
    )
    rows = {r["judge"]: r for r in client.get("/api/labelling/judges/").json()["rows"]}
    assert rows["kb"]["accuracy"]["value"] == pytest.approx(1 / 4) and rows["kb"]["n"] == 4
    assert rows["kb-any-sense"]["accuracy"]["value"] == pytest.approx(3 / 4)
    agreement = client.get("/api/labelling/agreement/").json()
    with_gold = {r["rater"]: r["agreement_with_gold"]["value"] for r in agreement["raters"]}
    assert sorted(with_gold.values()) == [
        0.0,
        1.0,
        1.0,
    ]  # the one who said "no" disagrees with gold
