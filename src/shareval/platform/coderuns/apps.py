from django.apps import AppConfig


class CoderunsConfig(AppConfig):
    name = "shareval.platform.coderuns"
    label = "coderuns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import efficiency
        efficiency.connect()           # code-run writes give the board a new token
