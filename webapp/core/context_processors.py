"""Values every page's layout reads."""

from django.conf import settings


def site(request):
    # the header's "Docs" link, shown only where the docs site is served (settings.DOCS_URL)
    return {"docs_url": settings.DOCS_URL}
