"""The arena (/arena/) and its API (under /api/arena/)."""

from django.urls import include, path

from webapp.arena import api, views

app_name = "arena"
urlpatterns = [
    path("", views.arena_new, name="new"),
    path("start/", views.battle_start, name="start"),
    path(
        "<uuid:public_id>/",
        include(
            [
                path("", views.battle_page, name="battle"),
                path("answer/", views.side_answer, name="answer"),
                path("finish/", views.battle_finish, name="finish"),
                path("abandon/", views.battle_abandon, name="abandon"),
            ]
        ),
    ),
    path("people/", views.people, name="people"),
    path("words/", views.words_refresh, name="words"),
    path("export/battles.<slug:fmt>", views.export, name="export"),
]

# Included by webapp/urls.py under /api/arena/ (namespace "api").
api_urlpatterns = [
    path("battles/", api.BattleStartApi.as_view(), name="arena-battles"),
    path("battles/<uuid:public_id>/", api.BattleDetailApi.as_view(), name="arena-battle"),
    path("battles/<uuid:public_id>/answer/", api.BattleAnswerApi.as_view(), name="arena-answer"),
    path("battles/<uuid:public_id>/finish/", api.BattleFinishApi.as_view(), name="arena-finish"),
    path("board/", api.ArenaBoardApi.as_view(), name="arena-board"),
]
