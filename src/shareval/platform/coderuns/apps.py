from django.apps import AppConfig


class CoderunsConfig(AppConfig):
    name = "shareval.platform.coderuns"
    label = "coderuns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform.coderuns import hooks
        hooks.register()                # what submissions ask of code runs
