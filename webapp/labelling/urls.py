from django.urls import path

from webapp.labelling import api, views

app_name = "labelling"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("items/<int:item_id>/label/", views.label, name="label"),
    path("items/<int:item_id>/skip/", views.skip, name="skip"),
    path("undo/", views.undo, name="undo"),
    path("review/", views.review, name="review"),
    path("items/<int:item_id>/adjudicate/", views.adjudicate, name="adjudicate"),
    path("agreement/", views.agreement, name="agreement"),
    path("judges/", views.judges, name="judges"),
    path("judges/score/", views.score, name="score"),
    path("judges/train/", views.train_judge, name="train-judge"),
    path("export/labels.<slug:fmt>", views.export, name="export"),
]

# mounted under /api/ by webapp/urls.py (names live in the "api" namespace)
api_urlpatterns = [
    path("labelling/next/", api.LabellingNextApi.as_view(), name="labelling-next"),
    path("labelling/items/", api.LabellingItemListApi.as_view(), name="labelling-items"),
    path("labelling/items/<int:item_id>/labels/", api.LabellingLabelCreateApi.as_view(), name="labelling-label"),
    path("labelling/items/<int:item_id>/skip/", api.LabellingSkipApi.as_view(), name="labelling-skip"),
    path("labelling/items/<int:item_id>/gold/", api.LabellingGoldApi.as_view(), name="labelling-gold"),
    path("labelling/undo/", api.LabellingUndoApi.as_view(), name="labelling-undo"),
    path("labelling/agreement/", api.LabellingAgreementApi.as_view(), name="labelling-agreement"),
    path("labelling/judges/", api.LabellingJudgeAccuracyApi.as_view(), name="labelling-judges"),
]
