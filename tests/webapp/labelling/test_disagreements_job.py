"""The disagreements job: which questions it judges, what it queues, and that it never
duplicates."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from tests.sending import tasks_held
from tests.webapp.labelling.support import (
    DISAGREEING,
    JUDGED,
    run_disagreements,
    store_game,
    submit,
)
from webapp.jobs.kinds.disagreements import DisagreementsConfig, compared, is_control, left_out
from webapp.jobs.models import Job, JobStatus
from webapp.jobs.services import job_run
from webapp.labelling.models import DisagreementItem, JudgeVote, Label
from webapp.play.models import Turn

pytestmark = pytest.mark.django_db


def test_kb_and_kb_any_sense_disagreements_fill_the_queue(queued):
    items = DisagreementItem.objects.filter(job=queued)
    assert {(i.secret, i.question) for i in items} == DISAGREEING
    assert not items.filter(is_control=True).exists() and set(
        items.values_list("labels_needed", flat=True)
    ) == {3}
    organism = items.get(question="Is it an organism?")
    # the history is the game up to the question, rule-decided turns included
    assert [h["question"] for h in organism.history][-2:] == ["Is it an animal?", "hello"]
    assert organism.history[-1]["verdict"] == "invalid"
    votes = dict(organism.votes.values_list("judge_name", "verdict"))
    assert votes == {"kb": "no", "kb-any-sense": "yes"}
    # every judged question got one vote per judge; rule-decided ones (repeated, invalid,
    # finished) none
    assert JudgeVote.objects.filter(job=queued).count() == 2 * JUDGED
    assert not JudgeVote.objects.filter(
        job=queued, turn__verdict__in=["finished", "repeated"]
    ).exists()
    assert not JudgeVote.objects.filter(job=queued, question="hello").exists()
    result = queued.result
    assert (
        result["disagreements"] == 4
        and result["controls"] == 0
        and result["examined_now"] == JUDGED
    )
    assert result["pair_disagreements"] == {"kb vs kb-any-sense": 4}
    assert result["disagreement_rate"] == pytest.approx(0.4)


def test_rerun_and_a_second_job_never_duplicate_items(queued):
    Job.objects.filter(pk=queued.pk).update(
        status=JobStatus.QUEUED
    )  # as if the reaper re-queued it
    assert job_run(job_id=queued.pk) == JobStatus.FINISHED
    queued.refresh_from_db()
    assert queued.result["examined_now"] == 0 and queued.result["examined_before"] == JUDGED
    assert JudgeVote.objects.filter(job=queued).count() == 2 * JUDGED
    second = run_disagreements(controls=1.0)
    assert DisagreementItem.objects.filter(source_turn__isnull=False, is_control=False).count() == 4
    assert second.result["already_queued"] == 4 and second.result["disagreements"] == 0
    assert second.result["controls"] == JUDGED - 4  # every agreeing question becomes a control
    item = DisagreementItem.objects.get(question="Is it a building?")
    assert item.votes.count() == 4  # both jobs' votes are attached to the one item


def test_controls_are_a_seeded_sample_of_agreeing_questions(games):
    job = run_disagreements(controls=0.5, seed=7)
    controls = set(
        DisagreementItem.objects.filter(job=job, is_control=True).values_list(
            "source_turn_id", flat=True
        )
    )
    agreeing = set(
        JudgeVote.objects.filter(job=job)
        .exclude(item__is_control=False)
        .values_list("turn_id", flat=True)
    )
    assert controls == {t for t in agreeing if is_control(7, t, 0.5)}
    assert is_control(7, 123, 0.5) == is_control(7, 123, 0.5) and not is_control(7, 123, 0.0)


def test_unknown_votes_distinct_or_ignored():
    assert compared(["yes", "unknown"], "distinct") is True
    assert compared(["yes", "unknown"], "ignore") is None  # only one judge answered
    assert compared(["unknown", "unknown"], "distinct") is False
    assert compared(["yes", "yes", "unknown"], "ignore") is False


def test_people_s_verdicts_count_as_votes(games, make_user):
    person = make_user("player", username="ada")
    turn = Turn.objects.get(question="Is it a mammal?")  # kb and kb-any-sense both say yes
    JudgeVote.objects.create(
        turn=turn,
        secret="mouse",
        question=turn.question,
        judge_name="human:ada",
        user=person,
        verdict="no",
    )
    job = run_disagreements(include_human=True, controls=0.0)
    item = DisagreementItem.objects.get(job=job, question="Is it a mammal?")
    assert set(item.votes.values_list("judge_name", flat=True)) == {
        "kb",
        "kb-any-sense",
        "human:ada",
    }
    assert job.result["pair_disagreements"]["human:ada vs kb"] == 1


def test_selection_by_job_and_guesser(db):
    from tests.webapp.labelling.support import store_games

    evaluation = Job.objects.create(kind="evaluation", status=JobStatus.FINISHED)
    store_games(job=evaluation)
    store_games()  # the same games again, outside the job
    job = run_disagreements(from_job=evaluation.pk, from_guesser="infogain", controls=0.0)
    assert job.result["questions"] == JUDGED
    assert set(
        DisagreementItem.objects.filter(job=job).values_list("source_turn__game__job", flat=True)
    ) == {evaluation.pk}


@pytest.mark.parametrize(
    "config,field",
    [
        ({"judges": ["kb"]}, "judges"),
        ({"judges": ["kb", "kb"]}, "judges"),
        ({"controls": 1.5}, "controls"),
        ({"labels_needed": 0}, "labels_needed"),
        ({"unknown": "maybe"}, "unknown"),
        ({"source": "web"}, "source"),
        ({"judges": ["kb", "nobody"]}, "judges"),
        ({"judges": ["kb", "infogain"]}, "judges"),
        ({"max_items": 0}, "max_items"),
        ({"max_items": 100_000}, "max_items"),
    ],
)
def test_bad_configs_are_refused_before_anything_is_queued(games, config, field):
    with pytest.raises(ValidationError) as err:
        submit(**config)
    assert field in err.value.message_dict
    assert not Job.objects.filter(kind="disagreements").exists()


def test_refuses_an_empty_selection_and_gold_without_gold(games):
    with pytest.raises(ValidationError, match="no judged questions"):
        submit(from_word_list="nothing-here")
    with pytest.raises(ValidationError, match="no gold set"):
        submit(judges=["kb"], source="gold")
    DisagreementsConfig(judges=("kb",), source="gold")  # valid as a config


def test_gold_source_scores_judges_on_gold_items_only(queued, make_user):
    item = DisagreementItem.objects.get(question="Is it an animal?")
    item.gold = "yes"
    item.save()
    job = run_disagreements(judges=["kb-any-sense"], source="gold")
    assert job.result == {"gold_items": 1, "votes": 1, "judges": ["kb-any-sense"]}
    assert JudgeVote.objects.get(job=job).item == item
    assert not Label.objects.exists() and DisagreementItem.objects.count() == 4
    # unanimous complete labels are gold too (consensus)
    other = DisagreementItem.objects.get(question="Is it a building?")
    for name in ("a", "b", "c"):
        Label.objects.create(
            item=other, annotator=get_user_model().objects.create(username=name), verdict="yes"
        )
    DisagreementItem.objects.filter(pk=other.pk).update(labels_count=3)
    again = run_disagreements(judges=["kb"], source="gold")
    assert again.result["gold_items"] == 2


def test_launch_form_on_the_jobs_dashboard_queues_the_job(client, games, researcher):
    client.force_login(researcher)
    html = client.get("/jobs/new/disagreements/").content.decode()
    assert (
        'value="pretrained, learned"' in html
        and 'name="unknown"' in html
        and "Include human" in html
        and 'name="max_items"' in html
        and 'name="people_only"' in html
    )
    with tasks_held():
        response = client.post(
            "/jobs/new/disagreements/",
            {
                "judges": "kb, kb-any-sense",
                "source": "games",
                "unknown": "ignore",
                "controls": "0.1",
                "labels_needed": "2",
                "seed": "1",
                "limit": "0",
                "batch_size": "64",
                "from_job": "0",
                "max_items": "50",
            },
        )
    job = Job.objects.get(kind="disagreements")
    assert response.status_code == 302 and job.config["judges"] == ["kb", "kb-any-sense"]
    assert (
        job.config["unknown"] == "ignore"
        and job.config["labels_needed"] == 2
        and job.config["max_items"] == 50
        and job.queue == "cpu"
    )


def test_the_job_page_shows_the_result(client, queued, researcher):
    client.force_login(researcher)
    html = client.get(f"/jobs/{queued.pk}/").content.decode()
    assert "disagreements" in html and "kb vs kb-any-sense" in html


def test_by_default_the_judges_people_play_with_and_a_bounded_queue():
    from webapp.play.services import DEFAULT_JUDGES

    config = DisagreementsConfig()
    assert config.judges == DEFAULT_JUDGES == ("pretrained", "learned")
    assert 0 < config.max_items <= 1000 and not config.people_only


def test_a_job_queues_at_most_max_items_and_says_so(games):
    job = run_disagreements(controls=0.0, max_items=2, batch_size=3)
    assert DisagreementItem.objects.filter(job=job).count() == 2
    assert job.result["queued_items"] == 2 and job.result["max_items_reached"] is True
    assert job.result["examined"] < JUDGED  # it stopped once the bound was reached


def test_gibberish_and_what_the_rules_call_invalid_are_left_out(games):
    assert left_out("Is it aora?", "seal") == "unreadable"
    assert left_out("Does it have a tungus?", "seal") == "unreadable"
    assert left_out("Is it a dog or a cat?", "seal") == "invalid"  # two guesses (people's rules)
    assert left_out("Is it made of wood?", "seal") is None
    assert left_out("Does it have a hindgut?", "seal") is None  # a KB concept, if rare
    store_game("seal", ["Is it aora?", "Does it have a tungus?", "Is it a dog or a cat?"])
    job = run_disagreements(controls=0.0)
    assert job.result["left_out_unreadable"] == 2 and job.result["left_out_invalid"] == 1
    assert job.result["questions"] == JUDGED
    assert not JudgeVote.objects.filter(job=job, question__in=["Is it aora?"]).exists()


def test_people_s_games_only(games):
    from webapp.play.models import GameMode

    store_game(
        "mouse", ["Is it an electronic device?", "Is it small?"], mode=GameMode.HUMAN_GUESSER
    )
    job = run_disagreements(controls=0.0, people_only=True)
    assert job.result["questions"] == 2
    assert set(DisagreementItem.objects.filter(job=job).values_list("question", flat=True)) == {
        "Is it an electronic device?"
    }


def test_a_resumed_job_s_counts_add_up(queued):
    """A worker died after the first games' batch: the re-run counts the whole job."""
    last = Turn.objects.filter(game__secret="club")
    DisagreementItem.objects.filter(job=queued, source_turn__in=last).delete()
    JudgeVote.objects.filter(job=queued, turn__in=last).delete()
    Job.objects.filter(pk=queued.pk).update(status=JobStatus.QUEUED)
    assert job_run(job_id=queued.pk) == JobStatus.FINISHED
    queued.refresh_from_db()
    result = queued.result
    assert result["examined_now"] == 2 and result["examined_before"] == JUDGED - 2
    assert result["examined"] == JUDGED and result["votes"] == 2 * JUDGED
    assert result["disagreements"] + result["controls"] == result["queued_items"] == 4
    assert result["pair_disagreements"] == {"kb vs kb-any-sense": 4}
    assert result["disagreement_rate"] == pytest.approx(0.4)
