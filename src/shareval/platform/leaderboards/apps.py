from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "shareval.platform.leaderboards"
    label = "leaderboards"

    def ready(self):
        from shareval.platform.leaderboards import cache, efficiency, warm
        cache.connect()             # writes that change a leaderboard give it a new token
        warm.connect()              # and build it again once they commit
        efficiency.connect()        # code-run writes too (their resources are columns)
