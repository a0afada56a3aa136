"""Issue 46 item 4: the admin names every model in good English ("Word list entries", not
"Word list entrys")."""

from __future__ import annotations

import re

import pytest
from django.apps import apps

from webapp.catalog.models import WordListEntry


def test_word_list_entries_are_plural_in_english():
    assert WordListEntry._meta.verbose_name_plural == "word list entries"


@pytest.mark.parametrize(
    "model", [m for m in apps.get_models() if m.__module__.startswith("webapp.")], ids=str
)
def test_no_model_is_named_with_a_made_up_plural(model):
    plural = str(model._meta.verbose_name_plural)
    assert not re.search(r"[^aeiou]ys$", plural), plural  # entrys, categorys


@pytest.mark.django_db
def test_the_admin_index_says_word_list_entries(client, make_user):
    user = make_user("researcher")
    user.is_superuser = True
    user.save()
    client.force_login(user)
    html = client.get("/admin/").content.decode()
    assert "Word list entries" in html and "entrys" not in html
