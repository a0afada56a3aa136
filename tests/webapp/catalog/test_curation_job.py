import pytest
from django.core.exceptions import ValidationError

from webapp.catalog.models import WordList
from webapp.catalog.selectors import word_list_compare
from webapp.jobs.models import Artifact, Job, JobStatus
from webapp.jobs.services import job_run

from .conftest import LIST_A, LIST_B

pytestmark = pytest.mark.django_db
CONFIG = dict(
    name="curated/test",
    source="word_lists",
    word_lists="t/a, t/b",
    samples=2,
    seed=3,
    val=0.2,
    test=0.2,
    sft=0.2,
    rl=0.4,
)


def test_curation_job_creates_a_versioned_list_with_statistics_and_provenance(
    small_lists, submit, client, researcher
):
    job = submit(**CONFIG)
    assert job.queue == "cpu"
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    word_list = WordList.objects.get(name="curated/test")
    assert (word_list.version, word_list.curation_job_id, word_list.parent) == (1, job.pk, None)
    assert job.result["word_list"] == {"id": word_list.pk, "name": "curated/test", "version": 1}
    unique = set(LIST_A) | set(LIST_B)
    assert job.result["candidates"] == len(LIST_A) + len(
        LIST_B
    ) and word_list.entries.count() == len(unique)

    p = word_list.provenance
    assert p["job"] == job.pk and p["config"]["samples"] == 2
    assert p["judge"]["spec"] == "kb:dominant" and p["reference_guesser"]["name"] == "infogain"
    assert [s["name"] for s in p["source"]["lists"]] == ["t/a", "t/b"]
    assert p["funnel"][0]["dropped"] == {"duplicate of an earlier entry": 1}
    assert all(s["in"] == s["out"] + sum(s["dropped"].values()) for s in p["funnel"])
    entry = word_list.entries.select_related("word").get(word__text="dog")
    assert (
        entry.stats["games"] == 2
        and entry.stats["sources"] == ["t/a", "t/b"]
        and entry.category == "thing"
    )
    assert (
        entry.solve_rate == entry.stats["solved"] / 2
        and entry.difficulty is not None
        and entry.mean_questions
    )
    splits = dict(word_list.entries.values_list("word__text", "split"))
    assert sorted(list(splits.values()).count(s) for s in ("val", "test", "sft", "rl")) == [
        5,
        5,
        5,
        9,
    ]  # 24 words: 4.8, 4.8, 4.8, 9.6
    log = "\n".join(job.logs.values_list("message", flat=True))
    assert "dropped 1 (duplicate of an earlier entry): dog" in log
    assert {"curated.jsonl", "dropped.jsonl", "funnel.json"} <= set(
        Artifact.objects.filter(job=job).values_list("name", flat=True)
    )

    again = submit(**CONFIG)
    job_run(job_id=again.pk)
    second = WordList.objects.get(name="curated/test", version=2)
    assert second.parent == word_list and second.curation_job_id == again.pk
    same = word_list_compare(old=word_list, new=second)["counts"]
    assert same == {
        "old": 24,
        "new": 24,
        "added": 0,
        "removed": 0,
        "moved": 0,
        "difficulty_changed": 0,
    }

    client.force_login(researcher)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert (
        'id="curation-funnel"' in page
        and "data-funnel" in page
        and "duplicate of an earlier entry" in page
    )
    assert f"/lists/{word_list.pk}/" in page
    assert "curation-funnel" in client.get(f"/lists/{word_list.pk}/").content.decode()


def test_messy_uploaded_text_is_reported_entry_by_entry(small_lists, submit):
    text = "Dog\r\ndog\n\nCafé au lait!\nxqzzyplonk\nGUITAR, kite;moon\n"
    job = submit(name="curated/upload", source="text", words=text, samples=1)
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    funnel = WordList.objects.get(name="curated/upload").provenance["funnel"]
    assert funnel[0]["in"] == 8 and funnel[0]["out"] == 5
    assert funnel[0]["dropped"] == {
        "blank entry": 1,
        "duplicate of an earlier entry": 1,
        "not a word (letters, spaces, hyphens, apostrophes only)": 1,
    }
    assert funnel[1]["dropped"] == {"not a knowledge-base noun": 1}
    log = "\n".join(Job.objects.get(pk=job.pk).logs.values_list("message", flat=True))
    for line in (
        "(blank entry): ''",
        "(duplicate of an earlier entry): dog",
        "Café au lait!",
        "(not a knowledge-base noun): xqzzyplonk",
    ):
        assert line in log


@pytest.mark.parametrize(
    "params,field",
    [
        ({"word_lists": "t/a, nope"}, "word_lists"),
        (
            {"split_by": "count", "val": 10, "test": 10, "sft": 10, "rl": 0},
            "split_by",
        ),  # 30 > 24 candidates
        ({"val": 0.6, "test": 0.6}, "val"),
        ({"judge": "infogain"}, "judge"),
        ({"guesser": "kb"}, "guesser"),
        ({"fairness_judge": "kb"}, "fairness_judge"),
        ({"source": "text", "words": ""}, "words"),
    ],
)
def test_invalid_configs_are_refused_before_queueing(small_lists, submit, params, field):
    with pytest.raises(ValidationError) as err:
        submit(**{**CONFIG, **params})
    assert field in err.value.message_dict
    assert Job.objects.count() == 0


def test_launch_form_has_a_textarea_for_pasted_words(client, researcher, small_lists):
    client.force_login(researcher)
    page = client.get("/jobs/new/curation/").content.decode()
    assert '<textarea name="words"' in page and 'name="word_lists"' in page


def test_run_page_shows_the_funnel_while_the_job_runs(
    small_lists, submit, client, researcher, settings
):
    import json
    from pathlib import Path

    job = submit(**CONFIG)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    folder = Path(settings.CHECKPOINTS_DIR) / f"job-{job.pk}"
    folder.mkdir(parents=True, exist_ok=True)
    stage = {
        "stage": "source",
        "in": 25,
        "out": 24,
        "dropped": {"duplicate of an earlier entry": 1},
        "examples": {"duplicate of an earlier entry": ["dog"]},
    }
    (folder / "funnel.json").write_text(json.dumps({"stages": [stage]}))
    client.force_login(researcher)
    fragment = client.get(f"/jobs/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="curation-funnel"' in fragment and "<td>25</td><td>24</td><td>1</td>" in fragment
    assert 'id="job-status"' in fragment and "every 2s" in fragment  # still polling


def test_curate_command_submits_and_runs_through_the_job_code_path(small_lists, capsys):
    import json

    from django.core.management import call_command

    call_command(
        "curate",
        "--set",
        "name=cmd/list",
        "--set",
        "word_lists=t/a",
        "--set",
        "samples=1",
        "--run-here",
    )
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{") :])
    assert report["status"] == "finished" and report["result"]["kept"] == 12
    assert WordList.objects.get(name="cmd/list").curation_job_id == report["job"]
