from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "shareval.platform.judging"
    label = "judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform import work as site_work

        from . import signals  # noqa: F401  (connects the receivers)
        from .work import judging_work
        site_work.provide(judging_work)          # the header's "Your work" and /work/
