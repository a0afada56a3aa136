from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from webapp.accounts import api as accounts_api
from webapp.arena import urls as arena_urls
from webapp.jobs import urls as jobs_urls
from webapp.labelling import urls as labelling_urls
from webapp.leaderboards import api as leaderboards_api
from webapp.play import urls as play_urls

api_patterns = [
    path("jobs/", include(jobs_urls.api_urlpatterns)),
    *play_urls.api_urlpatterns,
    path("leaderboards/", leaderboards_api.LeaderboardApi.as_view(), name="leaderboards"),
    path("labelling/", include(labelling_urls.api_urlpatterns)),
    path("arena/", include(arena_urls.api_urlpatterns)),
    path("auth/token/", accounts_api.TokenLoginApi.as_view(), name="auth-token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves Swagger UI's start-up script as a file: no inline script (CSP)
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
]

urlpatterns = [
    path("", include("webapp.core.urls")),
    path("accounts/", include("webapp.accounts.urls")),
    path("jobs/", include("webapp.jobs.urls")),
    path("leaderboards/", include("webapp.leaderboards.urls")),
    path("labelling/", include("webapp.labelling.urls")),
    path("lists/", include("webapp.catalog.urls")),
    path("arena/", include("webapp.arena.urls")),
    path("", include("webapp.play.urls")),  # /play/, /games/, /players/
    path("api/", include((api_patterns, "api"))),
    path("admin/", admin.site.urls),
]
admin.site.site_header = "20Q Lab administration"
