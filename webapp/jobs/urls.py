from django.urls import path

from webapp.jobs import views

app_name = "jobs"
urlpatterns = [path("", views.dashboard, name="dashboard")]
