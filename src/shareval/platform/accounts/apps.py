from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "shareval.platform.accounts"
    label = "accounts"
