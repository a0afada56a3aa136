from django.contrib import admin

from webapp.core.admin import ViewOnlyAdmin
from webapp.leaderboards.models import LeaderboardSnapshot, RefreshPending


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(ViewOnlyAdmin):
    list_display = ("board", "key", "computed_at")
    list_filter = ("board",)
    search_fields = ("key",)


@admin.register(RefreshPending)
class RefreshPendingAdmin(ViewOnlyAdmin):
    """A queued refresh not yet started (older than ten minutes: treated as lost and re-queued)."""

    list_display = ("key", "queued_at")
