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
