"""Admin building blocks the apps share."""

from django.contrib import admin


class ViewOnly:
    """Stored results (games, turns, metrics, logs, verdicts, ...): shown, never added, changed or
    deleted through the admin, superusers included; they change only through the services that
    write them."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ViewOnlyAdmin(ViewOnly, admin.ModelAdmin):
    pass


class ViewOnlyInline(ViewOnly, admin.TabularInline):
    extra = 0
