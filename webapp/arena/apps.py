from django.apps import AppConfig


class ArenaConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webapp.arena"
    label = "arena"

    def ready(self) -> None:
        from webapp.arena import claims, deletions

        claims.connect()
        deletions.connect()
