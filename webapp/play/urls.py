"""Play (/play/), the trajectory browser (/games/), players (/players/) and the play API (under
/api/)."""

from django.urls import include, path

from webapp.play import api, views

app_name = "play"
urlpatterns = [
    path("play/", views.play_new, name="new"),
    path("play/start/", views.game_start, name="start"),
    path(
        "play/<int:game_id>/",
        include(
            [
                path("", views.game_play, name="game"),
                path("first-question/", views.first_question, name="first-question"),
                path("ask/", views.question_submit, name="ask"),
                path("answer/", views.answer_submit, name="answer"),
                path("undo/", views.answer_undo, name="undo"),
                path("confirm/", views.secret_confirm, name="confirm"),
                path("abandon/", views.game_abandon, name="abandon"),
                path("suggestions/", views.question_suggestions, name="suggestions"),
            ]
        ),
    ),
    path("games/", views.game_list, name="game-list"),
    path("games/<int:game_id>/", views.game_detail, name="game-detail"),
    path("games/<int:game_id>.json", views.game_json, name="game-json"),
    path("players/me/", views.my_games, name="me"),
    path("players/<path:username>/", views.player_detail, name="player"),
]

# Included by webapp/urls.py under /api/ (namespace "api").
api_urlpatterns = [
    path("games/", api.GameStartApi.as_view(), name="game-start"),
    path("games/<int:game_id>/", api.GameDetailApi.as_view(), name="game-detail"),
    path("games/<int:game_id>/turns/", api.TurnSubmitApi.as_view(), name="game-turns"),
]
