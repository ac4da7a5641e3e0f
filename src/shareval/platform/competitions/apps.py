from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "shareval.platform.competitions"
    label = "competitions"

    def ready(self):
        from . import board_cache
        board_cache.connect()           # writes that change a leaderboard give it a new token
