from django.urls import path

from webapp.core import views

app_name = "core"
urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.FaviconRedirect.as_view(), name="favicon"),
    path("docs/", views.docs, name="docs"),
    path("docs/<path:path>", views.docs, name="docs-page"),
]
