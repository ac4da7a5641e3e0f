from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "shareval.platform.submissions"
    label = "submissions"
