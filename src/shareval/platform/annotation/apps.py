from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "shareval.platform.annotation"
    label = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform import work as site_work

        from .work import annotation_work
        site_work.provide(annotation_work)       # the header's "Your work" and /work/
