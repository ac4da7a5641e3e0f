from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "shareval.platform.competitions"
    label = "competitions"

    def ready(self):
        from . import boards
        boards.connect()           # writes that change a leaderboard give it a new token
