"""Audit trails: rows that are only ever added. Saving an existing row, deleting one,
and queryset updates or deletes raise ``PermissionError`` (deleting what a trail
belongs to removes it through the database's cascade). ``TRAIL`` words the refusal."""
from __future__ import annotations

from django.db import models


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise PermissionError(f"{self.model.TRAIL}: never updated")

    def delete(self):
        raise PermissionError(f"{self.model.TRAIL}: never deleted")


class AppendOnlyModel(models.Model):
    TRAIL = "an audit trail"

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise PermissionError(f"{self.TRAIL}: never changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError(f"{self.TRAIL}: never deleted")
