from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "shareval.platform.access"
    label = "access"
