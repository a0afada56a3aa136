from django.apps import AppConfig


class PlayConfig(AppConfig):
    name = "webapp.play"
    label = "play"

    def ready(self) -> None:
        from webapp.play import claims

        claims.connect()
