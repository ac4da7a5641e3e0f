from django.contrib import admin

from shareval.platform.accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "hint", "created", "last_used", "revoked")
    readonly_fields = ("key_digest", "hint")
