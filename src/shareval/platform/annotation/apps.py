from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "shareval.platform.annotation"
    label = "annotation"
    default_auto_field = "django.db.models.BigAutoField"
