"""Issue 34 items 21 and 9: word lists are the boards' public benchmark data. The board's word-list
link opens for guests and players (it gave players a 403 and sent guests to the login form), read
only; the home page lists names and sizes, linked, without repository paths."""

from __future__ import annotations

import pytest

from webapp.catalog.services import SeedEntry, word_list_create
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db
SOURCE = "bethgelab/delta-belief-rl, delta_belief_rl/env/twenty_questions/config/"


@pytest.fixture
def pool():
    word_list = word_list_create(
        name="bench-learning/pool",
        entries=[SeedEntry("dog", split="test"), SeedEntry("cat", split="sft")],
        source=SOURCE,
        provenance={"reference_guesser": {"name": "ig", "spec": "hf:/srv/secret/path"}},
    )
    word_list.curation_job = Job.objects.create(kind="curation", status="finished")
    word_list.save()
    return word_list


def test_a_word_list_opens_read_only_for_every_visitor(client, make_user, researcher, pool):
    for who in (None, make_user("player"), make_user("annotator")):
        if who is not None:
            client.force_login(who)
        listing = client.get("/lists/")
        assert listing.status_code == 200 and f'href="/lists/{pool.pk}/"' in listing.text
        assert "Curate a new version" not in listing.text
        page = client.get(f"/lists/{pool.pk}/")
        assert page.status_code == 200 and "<td>dog</td>" in page.text
        # what only researchers need: the provenance, the reference spec, the job's page
        assert "/srv/secret/path" not in page.text and "Provenance (JSON)" not in page.text
        assert f'href="/jobs/{pool.curation_job_id}/"' not in page.text
        assert client.get(f"/lists/{pool.pk}/download/txt/").content.decode().split() == [
            "cat",
            "dog",
        ]
        assert client.get(f"/lists/compare/?new={pool.pk}").status_code == 200
    client.force_login(researcher)
    page = client.get(f"/lists/{pool.pk}/").text
    assert "/srv/secret/path" in page and f'href="/jobs/{pool.curation_job_id}/"' in page


def test_home_lists_word_lists_by_name_and_size_linked_without_paths(client, pool):
    html = client.get("/").text
    table = html[html.index('id="home-word-lists"') :]
    assert f'<a href="/lists/{pool.pk}/">bench-learning/pool</a></td><td>2</td>' in table
    assert SOURCE not in html and "delta_belief_rl/" not in html
