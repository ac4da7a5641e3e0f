from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "shareval.platform.workbench"
    label = "workbench"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform import work as site_work

        from shareval.platform.workbench.work import workbench_work
        site_work.provide(workbench_work)        # the header's "Your work" and /work/
