from django.urls import path

from webapp.leaderboards import views

app_name = "leaderboards"
urlpatterns = [
    path("", views.index, name="index"),
    path("recompute/", views.recompute, name="recompute"),
]
