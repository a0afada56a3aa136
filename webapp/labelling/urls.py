from django.urls import include, path

from webapp.labelling import api, views

app_name = "labelling"
urlpatterns = [
    path("", views.queue, name="queue"),
    path(
        "items/<int:item_id>/",
        include(
            [
                path("label/", views.label, name="label"),
                path("skip/", views.skip, name="skip"),
                path("adjudicate/", views.adjudicate, name="adjudicate"),
            ]
        ),
    ),
    path("undo/", views.undo, name="undo"),
    path("turns/<int:turn_id>/dispute/", views.dispute, name="dispute"),
    path("review/", views.review, name="review"),
    path("agreement/", views.agreement, name="agreement"),
    path(
        "judges/",
        include(
            [
                path("", views.judges, name="judges"),
                path("score/", views.score, name="score"),
                path("train/", views.train_judge, name="train-judge"),
            ]
        ),
    ),
    path("export/labels.<slug:fmt>", views.export, name="export"),
]

# mounted under /api/labelling/ by webapp/urls.py (names live in the "api" namespace)
api_urlpatterns = [
    path("next/", api.LabellingNextApi.as_view(), name="labelling-next"),
    path(
        "items/",
        include(
            [
                path("", api.LabellingItemListApi.as_view(), name="labelling-items"),
                path(
                    "<int:item_id>/labels/",
                    api.LabellingLabelCreateApi.as_view(),
                    name="labelling-label",
                ),
                path("<int:item_id>/skip/", api.LabellingSkipApi.as_view(), name="labelling-skip"),
                path("<int:item_id>/gold/", api.LabellingGoldApi.as_view(), name="labelling-gold"),
            ]
        ),
    ),
    path("undo/", api.LabellingUndoApi.as_view(), name="labelling-undo"),
    path("disputes/", api.LabellingDisputeApi.as_view(), name="labelling-dispute"),
    path("agreement/", api.LabellingAgreementApi.as_view(), name="labelling-agreement"),
    path("judges/", api.LabellingJudgeAccuracyApi.as_view(), name="labelling-judges"),
]
