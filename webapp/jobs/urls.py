from django.urls import include, path

from webapp.jobs import api, views

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

# mounted under /api/jobs/ by webapp/urls.py (names live in the "api" namespace)
api_urlpatterns = [
    path("", api.JobListSubmitApi.as_view(), name="job-list"),
    path(
        "<int:job_id>/",
        include(
            [
                path("", api.JobDetailApi.as_view(), name="job-detail"),
                path("cancel/", api.JobCancelApi.as_view(), name="job-cancel"),
                path("resume/", api.JobResumeApi.as_view(), name="job-resume"),
            ]
        ),
    ),
]
