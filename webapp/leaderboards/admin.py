from django.contrib import admin

from webapp.core.admin import ViewOnlyAdmin
from webapp.leaderboards.models import LeaderboardSnapshot


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(ViewOnlyAdmin):
    list_display = ("board", "key", "computed_at")
    list_filter = ("board",)
    search_fields = ("key",)
