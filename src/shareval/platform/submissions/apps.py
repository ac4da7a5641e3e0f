from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "shareval.platform.submissions"
    label = "submissions"

    def ready(self):
        from shareval.platform.submissions import signals  # noqa: F401  (mails run results)
