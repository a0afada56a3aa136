from django.contrib import admin, messages

from webapp.arena import services
from webapp.arena.models import ArenaExclusion, Battle


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
    list_display = ("id", "created_at", "player", "guesser_a", "guesser_b", "word", "outcome")
    list_select_related = ("player", "guesser_a", "guesser_b")  # player is nullable: not automatic
    list_filter = ("outcome", "abandoned", "word_in_kb")
    search_fields = ("word", "player__username")
    actions = ["exclude_people"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_exclude_permission(self, request) -> bool:
        return request.user.has_perm("arena.add_arenaexclusion")  # the action adds exclusions

    @admin.action(
        description="Exclude these battles' people from the Arena (bad-faith answers)",
        permissions=["exclude"],
    )
    def exclude_people(self, request, queryset):
        done, nobody = set(), 0
        for battle in queryset.select_related("player"):
            who = (battle.player_id, "" if battle.player_id else battle.guest_key)
            if who == (None, ""):  # its player's account was deleted
                nobody += 1
                continue
            if who in done:
                continue
            done.add(who)
            services.person_exclude(
                by=request.user,
                user=battle.player,
                guest_key=who[1],
                reason="excluded from the battles admin",
            )
        messages.success(request, f"Excluded {len(done)} person(s); their battles count nowhere.")
        if nobody:
            messages.warning(request, f"{nobody} battle(s) of deleted accounts: nobody to exclude.")


@admin.register(ArenaExclusion)
class ArenaExclusionAdmin(admin.ModelAdmin):
    list_display = ("player", "guest_key", "reason", "excluded_by", "created_at", "lifted_at")
    readonly_fields = ("excluded_by", "created_at", "lifted_by", "lifted_at")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.excluded_by = request.user  # who excluded, recorded
        super().save_model(request, obj, form, change)
