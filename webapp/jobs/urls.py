from django.urls import path

from webapp.jobs import views

app_name = "jobs"
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("new/<slug:kind>/", views.launch, name="launch"),
    path("quick-eval/", views.quick_eval, name="quick-eval"),
    path("compare/", views.compare, name="compare"),
    path("metrics.json", views.metrics_json, name="metrics"),
    path("runs/", views.runs, name="runs"),
    path("<int:job_id>/", views.detail, name="detail"),
    path(
        "checkpoints/<int:checkpoint_id>/<slug:verb>/",
        views.checkpoint_action,
        name="checkpoint-action",
    ),
    path("<int:job_id>/cancel/confirm/", views.cancel_confirm, name="cancel-confirm"),
    path("<int:job_id>/<slug:verb>/", views.action, name="action"),
    path("artifacts/<int:artifact_id>/download/", views.artifact_download, name="artifact"),
]
