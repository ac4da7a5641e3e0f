from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "shareval.platform.judging"
    label = "judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import signals  # noqa: F401  (connects the receivers)
