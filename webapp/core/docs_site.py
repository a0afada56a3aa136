"""The docs site (MkDocs, built by `make docs-build` or `make run` into settings.DOCS_SITE_DIR),
served by the web app at /docs/ so the header's "Docs" link works wherever the app runs, offline
too. Only files inside the built folder are served."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.urls import reverse


def docs_site_dir() -> Path:
    return Path(settings.DOCS_SITE_DIR)


def docs_site_built() -> bool:
    return (docs_site_dir() / "index.html").is_file()


def docs_link() -> str:
    """Where the header's "Docs" link goes: settings.DOCS_URL where the docs are served elsewhere,
    else /docs/ once the site is built; "" (no link) otherwise."""
    if settings.DOCS_URL:
        return settings.DOCS_URL
    return reverse("core:docs") if docs_site_built() else ""


def docs_page(path: str) -> tuple[str, str] | None:
    """(the folder to serve from, the file's path inside it) of a docs address, a folder's
    index.html for a folder (MkDocs writes one page per folder); None when no such file was built
    (or the site was not) and for anything outside the folder."""
    root = docs_site_dir().resolve()
    wanted = (root / path).resolve()
    if root not in (wanted, *wanted.parents):
        return None
    if wanted.is_dir():
        wanted = wanted / "index.html"
    if not wanted.is_file():
        return None
    return str(root), wanted.relative_to(root).as_posix()


def wants_slash(path: str) -> bool:
    """A folder's address without its final slash ("how-to"): the page's relative links need it."""
    if not path or path.endswith("/") or docs_page(path) is None:
        return False
    return (docs_site_dir() / path).is_dir()
