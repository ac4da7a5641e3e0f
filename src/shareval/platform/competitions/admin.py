from django.contrib import admin

from shareval.platform.competitions import models


class DatasetInline(admin.TabularInline):
    model = models.Dataset
    extra = 0
    fields = ("slug", "title", "task", "reference_path", "feedback")


@admin.register(models.Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "time_zone", "team_approval", "created")
    filter_horizontal = ("organizers",)


@admin.register(models.Phase)
class PhaseAdmin(admin.ModelAdmin):
    list_display = ("competition", "slug", "start", "end", "blind", "leaderboard_public",
                    "released")
    inlines = [DatasetInline]


@admin.register(models.CompetitionTask)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("competition", "slug", "task_name", "primary_metric")


@admin.register(models.Quota)
class QuotaAdmin(admin.ModelAdmin):
    list_display = ("dataset", "group", "limit", "window", "days")


@admin.register(models.Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("competition", "name", "lead", "status", "is_baseline")
    list_filter = ("status",)


admin.site.register(models.Membership)
admin.site.register(models.PublicFile)
