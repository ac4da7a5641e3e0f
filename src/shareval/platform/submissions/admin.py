from django.contrib import admin

from shareval.platform.submissions import models


class EventInline(admin.TabularInline):
    model = models.SubmissionEvent
    extra = 0
    readonly_fields = ("state", "at", "message", "log")


@admin.register(models.Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "team", "dataset", "kind", "state", "created")
    list_filter = ("state", "kind", "dataset__phase__competition")
    inlines = [EventInline]


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("submission", "status", "attempts", "worker", "lease_until", "heartbeat")


@admin.register(models.Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ("submission", "scorer_version", "primary", "current", "created")
