"""The site's URLs plus one view that fails, to see the 500 page."""

from django.urls import path

from webapp.urls import urlpatterns as site_urlpatterns


def broken(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [*site_urlpatterns, path("broken/", broken)]
