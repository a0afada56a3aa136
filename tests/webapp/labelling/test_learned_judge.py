"""The learned judge in labelling: paired with the KB in the disagreements job (its p_yes kept,
the most uncertain items served first, revealed only after labelling), scored on gold next to the
others, and trained on the gold labels by the `judge` job the judges page queues."""

from __future__ import annotations

import pytest

from games.types import Verdict
from tests.sending import tasks_held
from tests.webapp.judge_rows import use_small_reference
from tests.webapp.labelling.support import run_disagreements
from webapp.catalog.builders import judge_for
from webapp.catalog.models import ModelSpec
from webapp.jobs.kinds.disagreements import uncertainty
from webapp.jobs.models import Job
from webapp.jobs.services import job_run
from webapp.labelling import selectors, services
from webapp.labelling.models import DisagreementItem, JudgeVote

pytestmark = pytest.mark.django_db


@pytest.fixture
def kb_vs_learned(games):
    # unknown="distinct": the learned judge answers where the open-world KB abstains ("Is it made
    # of wood?" for seal), so items exist whatever the shipped weights say where both answer
    return run_disagreements(judges=["kb", "learned"], unknown="distinct", controls=0.0)


def test_the_learned_judges_votes_keep_p_yes_and_items_their_uncertainty(kb_vs_learned):
    learned = JudgeVote.objects.filter(job=kb_vs_learned, judge_name="learned")
    assert learned.exists() and not learned.filter(p_yes__isnull=True).exists()
    assert not JudgeVote.objects.filter(
        job=kb_vs_learned, judge_name="kb", p_yes__isnull=False
    ).exists()
    items = DisagreementItem.objects.filter(job=kb_vs_learned)
    assert items.exists() and kb_vs_learned.result["pair_disagreements"]
    for item in items:
        vote = item.votes.get(judge_name="learned")
        assert vote.verdict == ("yes" if vote.p_yes >= 0.5 else "no")
        assert item.uncertainty == pytest.approx(1 - 2 * abs(vote.p_yes - 0.5), abs=1e-4)


def test_the_most_uncertain_item_is_served_first_then_the_fullest(kb_vs_learned, make_user):
    plain = DisagreementItem.objects.create(
        secret="dog", question="Is it loud?"
    )  # no probabilistic vote
    expected = list(
        DisagreementItem.objects.filter(job=kb_vs_learned).order_by("-uncertainty", "id")
    )
    annotator = make_user("annotator")
    served = []
    while (item := services.assignment_next(user=annotator)) is not None:
        served.append(item)
        services.label_submit(user=annotator, item_id=item.pk, verdict="yes")
    assert served == [*expected, plain]
    assert uncertainty([JudgeVote(p_yes=0.9), JudgeVote(p_yes=0.4), JudgeVote()]) == pytest.approx(
        0.8
    )


def test_a_later_job_with_a_less_sure_vote_raises_an_items_uncertainty(kb_vs_learned):
    item = DisagreementItem.objects.filter(job=kb_vs_learned).first()
    DisagreementItem.objects.filter(pk=item.pk).update(uncertainty=0.0)
    second = run_disagreements(judges=["kb", "learned"], unknown="distinct", controls=0.0)
    assert second.result["already_queued"] >= 1
    item.refresh_from_db()
    assert item.uncertainty == pytest.approx(
        1 - 2 * abs(item.votes.filter(judge_name="learned").first().p_yes - 0.5), abs=1e-4
    )


def test_how_sure_the_learned_judge_was_shows_only_after_labelling(
    client, kb_vs_learned, annotator
):
    client.force_login(annotator)
    html = client.get("/labelling/").content.decode()
    item = DisagreementItem.objects.get(pk=int(html.split('data-item="')[1].split('"')[0]))
    p_yes = item.votes.get(judge_name="learned").p_yes
    assert "% sure" not in html and "learned" not in html and str(p_yes) not in html  # blind
    assert "uncertainty" not in client.get("/api/labelling/next/").content.decode()
    html = client.post(
        f"/labelling/items/{item.pk}/label/", {"verdict": "yes"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    sure = round(100 * (p_yes if p_yes >= 0.5 else 1 - p_yes))
    assert 'learned: <span class="verdict-' in html and f"({sure}% sure)" in html
    assert (
        f"learned {'yes' if p_yes >= 0.5 else 'no'} ({sure}% sure)" in html
    )  # the announcement says it too
    votes = {v["judge_name"]: v for v in selectors.item_reveal(item.pk, annotator)["votes"]}
    assert votes["learned"]["p_yes"] == p_yes and votes["kb"]["p_yes"] is None


def test_the_judges_page_lists_every_active_judge_scored_or_not(client, queued, researcher):
    DisagreementItem.objects.filter(question="Is it a building?").update(gold="yes")
    DisagreementItem.objects.filter(question="Is it an animal?").update(gold="yes")
    client.force_login(researcher)
    html = client.get("/labelling/judges/").content.decode()
    for name in ("learned", "kb+learned", "kb-closed"):
        assert f'data-unscored="{name}"' in html and f'<option value="{name}">' in html
    for name in ("learned", "kb+learned"):
        assert client.post("/labelling/judges/score/", {"judge": name}).status_code == 302
    assert not Job.objects.exclude(pk=queued.pk).exists()  # cheap judges are scored in the request
    html = client.get("/labelling/judges/").content.decode()
    assert 'data-judge="learned"' in html and 'data-judge="kb+learned"' in html
    assert 'data-unscored="learned"' not in html and 'data-unscored="kb-closed"' in html
    board = client.get("/api/labelling/judges/").json()
    assert {"learned", "kb+learned", "kb", "kb-any-sense"} <= {r["judge"] for r in board["rows"]}
    assert "kb-closed" in board["unscored"] and "learned" not in board["unscored"]
    assert (
        JudgeVote.objects.filter(
            judge_name="learned", job__isnull=True, p_yes__isnull=False
        ).count()
        == 2
    )
    ModelSpec.objects.filter(name="kb-closed").update(is_active=False)
    assert "kb-closed" not in client.get("/api/labelling/judges/").json()["unscored"]


def test_training_on_gold_registers_a_judge_that_plays(client, queued, researcher, monkeypatch):
    """The job the judges page queues, run for real on a small sample of the reference answers."""
    reference = use_small_reference(monkeypatch)
    DisagreementItem.objects.filter(question="Is it an animal?").update(gold="yes")
    DisagreementItem.objects.filter(question="Is it a building?").update(gold="no")
    client.force_login(researcher)
    with tasks_held():
        client.post("/labelling/judges/train/")
    job = Job.objects.get(kind="judge")
    assert job_run(job_id=job.pk) == "finished", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    assert job.result["rows_by_source"] == {"reference": len(reference), "gold": 2}
    assert "gold" in job.result["sources"]
    spec = ModelSpec.objects.get(name=job.result["model_spec"], produced_by=job)
    assert spec.kind == "learned" and spec.can_judge and "2 gold" in spec.description
    answer = judge_for(spec).judge("dog", "Is it an animal?")
    assert answer.verdict in (Verdict.YES, Verdict.NO) and answer.p_yes is not None
    html = client.get("/labelling/judges/").content.decode()
    assert f'data-unscored="{spec.name}"' in html  # ready to be scored on gold like the others
