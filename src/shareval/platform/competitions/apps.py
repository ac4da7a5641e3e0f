from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "shareval.platform.competitions"
    label = "competitions"

    def ready(self):
        from shareval.platform import work as site_work

        from shareval.platform.competitions.organizer_work import organizer_work
        site_work.provide(organizer_work)       # the header's "Your work": decisions waiting
