from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "shareval.platform.annotation"
    label = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform import work as site_work

        from shareval.platform.annotation.work import annotation_work
        site_work.provide(annotation_work)       # the header's "Your work" and /work/
        from shareval.platform.annotation.results import board_columns
        from shareval.platform.leaderboards.payloads import add_human_columns
        add_human_columns(board_columns)         # studies' scores on the leaderboards
