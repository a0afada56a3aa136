"""Deleting an account keeps its battles' standing: an excluded person's battles stay out of the
ratings (the exclusion outlives the account), and they can still be excluded or lifted."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.webapp.arena.support import STRONG, WEAK, stored_battle
from webapp.arena import selectors, services
from webapp.arena.models import ArenaExclusion

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(arena):
    make = get_user_model().objects.create_user
    return make("mallory", password="pw-mallory-1234"), make("ada", password="pw-ada-123456")


def test_an_excluded_accounts_battles_stay_out_when_the_account_is_deleted(people):
    mallory, ada = people
    bad = [stored_battle(STRONG, WEAK, "b", player=mallory) for _ in range(3)]
    good = stored_battle(STRONG, WEAK, "a", player=ada)
    services.person_exclude(by=ada, user=mallory, reason="answers at random")
    assert list(selectors.counted_battles()) == [good]
    mallory_id = mallory.pk
    mallory.delete()
    assert list(selectors.counted_battles()) == [good]  # before the fix: all four counted
    exclusion = ArenaExclusion.objects.get()
    assert exclusion.player is None and exclusion.guest_key == f"deleted:{mallory_id}"
    assert exclusion.reason == "answers at random" and exclusion.lifted_at is None
    row = next(p for p in selectors.people_rows() if p["user_id"] is None)
    assert row["name"] == f"deleted account {mallory_id}" and row["battles"] == len(bad)
    assert row["exclusion"] == exclusion and str(exclusion).startswith("deleted account")
    services.person_include(by=ada, guest_key=row["guest_key"])  # a researcher may still lift it
    assert selectors.counted_battles().count() == 4


def test_a_deleted_account_in_good_standing_still_counts_and_can_be_excluded_later(people):
    mallory, ada = people
    stored_battle(STRONG, WEAK, "a", player=mallory)
    key = f"deleted:{mallory.pk}"
    mallory.delete()
    assert selectors.counted_battles().count() == 1
    services.person_exclude(by=ada, guest_key=key)
    assert selectors.counted_battles().count() == 0
