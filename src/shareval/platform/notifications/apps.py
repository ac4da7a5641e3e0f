from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "shareval.platform.notifications"
    label = "notifications"
    default_auto_field = "django.db.models.BigAutoField"
