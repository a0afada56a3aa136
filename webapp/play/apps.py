from django.apps import AppConfig


class PlayConfig(AppConfig):
    name = "webapp.play"
    label = "play"
