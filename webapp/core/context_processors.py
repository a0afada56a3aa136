"""Values every page's layout reads."""

from webapp.core.docs_site import docs_link


def site(request):
    # the header's "Docs" link: settings.DOCS_URL, else the built docs at /docs/ (no link without)
    return {"docs_url": docs_link()}
