from django.contrib import admin

from webapp.core.admin import ViewOnlyAdmin, ViewOnlyInline
from webapp.play.models import Game, Turn


class TurnInline(ViewOnlyInline):
    model = Turn
    fields = (
        "index",
        "question",
        "verdict",
        "total_reward",
        "belief",
        "delta_belief",
        "candidates_left",
    )
    readonly_fields = fields


@admin.register(Game)
class GameAdmin(ViewOnlyAdmin):
    list_display = (
        "id",
        "secret",
        "mode",
        "guesser",
        "judge",
        "player",
        "outcome",
        "n_turns",
        "job",
        "created_at",
    )
    list_filter = ("mode", "outcome", "status", "guesser", "judge", "created_at")
    search_fields = ("secret", "player__username", "public_id")
    raw_id_fields = ("word", "word_list", "player", "job")
    date_hierarchy = "created_at"
    inlines = [TurnInline]
    list_select_related = ("guesser", "judge", "player", "job")


@admin.register(Turn)
class TurnAdmin(ViewOnlyAdmin):
    list_display = (
        "game",
        "index",
        "question",
        "verdict",
        "total_reward",
        "delta_belief",
        "candidates_left",
    )
    list_filter = ("verdict",)
    search_fields = ("question", "game__secret")
    raw_id_fields = ("game", "judged_by")
