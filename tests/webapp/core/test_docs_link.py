"""The header links to the docs site ("Docs") only where settings.DOCS_URL says it is served."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_header_links_to_the_docs_when_docs_url_is_set(client, settings):
    settings.DOCS_URL = "https://docs.example.org/20q/"
    body = client.get("/").content.decode()
    nav = body.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    assert '<a href="https://docs.example.org/20q/">Docs</a>' in nav


def test_no_docs_link_without_docs_url(client, settings):
    settings.DOCS_URL = ""
    body = client.get("/").content.decode()
    assert ">Docs</a>" not in body
