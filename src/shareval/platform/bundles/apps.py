from django.apps import AppConfig


class BundlesConfig(AppConfig):
    name = "shareval.platform.bundles"
    label = "bundles"
