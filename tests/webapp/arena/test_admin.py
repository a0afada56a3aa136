"""The battles admin: its list costs the same few queries however many battles it shows."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.webapp.arena.support import STRONG, WEAK, stored_battle

pytestmark = pytest.mark.django_db


def _list_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/admin/arena/battle/").status_code == 200
    return len(queries)


def test_the_battle_list_has_no_query_per_row(client, arena):
    admin = get_user_model().objects.create_superuser("root", password="pw-root-123456")
    client.force_login(admin)
    stored_battle(STRONG, WEAK, "a", player=admin)
    few = _list_queries(client)
    for _ in range(5):
        stored_battle(WEAK, STRONG, "b", player=admin)
    assert _list_queries(client) == few


def test_excluding_from_the_admin_skips_battles_with_nobody_behind_them(client, arena):
    from webapp.arena.models import ArenaExclusion, Battle

    admin = get_user_model().objects.create_superuser("root", password="pw-root-123456")
    client.force_login(admin)
    ada = get_user_model().objects.create_user("ada", password="pw-ada-123456")
    stored_battle(STRONG, WEAK, "a", player=ada)
    stored_battle(STRONG, WEAK, "b")  # its player's account was deleted: no user, no guest key
    response = client.post(
        "/admin/arena/battle/",
        {
            "action": "exclude_people",
            "_selected_action": list(Battle.objects.values_list("pk", flat=True)),
        },
        follow=True,
    )
    assert response.status_code == 200 and "nobody to exclude" in response.content.decode()
    assert list(ArenaExclusion.objects.values_list("player__username", flat=True)) == ["ada"]


def test_a_researcher_lists_battles_and_excludes_a_person_but_deletes_nothing(
    client, arena, researcher, player
):
    from webapp.arena.models import ArenaExclusion, Battle

    client.force_login(researcher)
    battle = stored_battle(STRONG, WEAK, "a", player=player)
    page = client.get("/admin/arena/battle/")
    assert page.status_code == 200
    assert "exclude_people" in page.content.decode()
    assert "delete_selected" not in page.content.decode()  # battles are results
    client.post(
        "/admin/arena/battle/", {"action": "exclude_people", "_selected_action": [battle.pk]}
    )
    assert ArenaExclusion.objects.get().excluded_by == researcher
    assert client.get("/admin/arena/arenaexclusion/").status_code == 200
    assert client.post(f"/admin/arena/battle/{battle.pk}/delete/").status_code == 403
    assert Battle.objects.filter(pk=battle.pk).exists()
