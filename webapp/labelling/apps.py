from django.apps import AppConfig


class LabellingConfig(AppConfig):
    name = "webapp.labelling"
    label = "labelling"
