from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "shareval.platform.submissions"
    label = "submissions"

    def ready(self):
        from shareval.platform.submissions import signals  # noqa: F401  (mails run results)
        from shareval.platform.competitions import reminders
        from shareval.platform.submissions import deadline
        reminders.add_phase_reminder(deadline.remind)     # teams without a primary run
