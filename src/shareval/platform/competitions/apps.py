from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "shareval.platform.competitions"
    label = "competitions"
