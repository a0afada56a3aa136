"""The header's "Docs" link (issue 36; issue 46 item 4: `make run` showed none): to
settings.DOCS_URL where the docs are served elsewhere, else to the built docs site the app serves
at /docs/ (`make docs-build` and `make run` build it into settings.DOCS_SITE_DIR); none where
neither is."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db
PAGE = '<!doctype html><html><head><script>__md_scope=new URL(".",location)</script></head></html>'


def _nav(client) -> str:
    body = client.get("/").content.decode()
    return body.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]


@pytest.fixture
def built_site(settings, tmp_path):
    """A built docs site with a page in a folder and a stylesheet."""
    site = tmp_path / "site"
    (site / "how-to" / "install").mkdir(parents=True)
    (site / "assets").mkdir()
    (site / "index.html").write_text(PAGE)
    (site / "how-to" / "install" / "index.html").write_text("<p>Install</p>")
    (site / "assets" / "main.css").write_text("body{}")
    (tmp_path / "secret.txt").write_text("not part of the site")
    settings.DOCS_URL, settings.DOCS_SITE_DIR = "", site
    return site


def test_the_header_links_to_the_docs_when_docs_url_is_set(client, settings, built_site):
    settings.DOCS_URL = "https://docs.example.org/20q/"
    assert '<a href="https://docs.example.org/20q/">Docs</a>' in _nav(client)


def test_no_docs_link_without_docs_url_or_a_built_site(client, settings, tmp_path):
    settings.DOCS_URL, settings.DOCS_SITE_DIR = "", tmp_path / "not-built"
    assert ">Docs</a>" not in client.get("/").content.decode()
    missing = client.get("/docs/")
    assert missing.status_code == 404 and "make docs-build" in missing.content.decode()


def test_the_built_site_is_linked_and_served_at_docs(client, built_site):
    assert '<a href="/docs/">Docs</a>' in _nav(client)
    home = client.get("/docs/")
    assert home.status_code == 200 and b"".join(home.streaming_content).decode() == PAGE
    # MkDocs Material's pages need their small inline scripts: allowed there, and only there
    assert "'unsafe-inline'" in home["Content-Security-Policy"].split("script-src", 1)[1]
    assert "unsafe-inline" not in client.get("/")["Content-Security-Policy"]
    page = client.get("/docs/how-to/install/")
    assert page.status_code == 200 and b"Install" in b"".join(page.streaming_content)
    assert client.get("/docs/how-to/install")["Location"] == "/docs/how-to/install/"
    css = client.get("/docs/assets/main.css")
    assert css.status_code == 200 and css["Content-Type"].startswith("text/css")


def test_nothing_outside_the_built_site_is_served(client, built_site):
    for path in ("/docs/../secret.txt", "/docs/%2e%2e/secret.txt", "/docs/no-such-page/"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert b"not part of the site" not in response.content
