from django.apps import AppConfig


class PagesConfig(AppConfig):
    name = "shareval.platform.pages"
    label = "pages"
