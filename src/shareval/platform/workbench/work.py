"""The header's *Your work*: each annotator's and curator's units left per project."""
from __future__ import annotations

from django.db.models import Count, Q
from django.urls import reverse

from shareval.platform.work import Work

from .models import CURATOR, DONE, Project


def workbench_work(user) -> list[Work]:
    rows = (Project.objects.filter(units__assignments__user=user)
            .annotate(left=Count("units__assignments", filter=Q(
                units__assignments__user=user) & ~Q(units__assignments__status=DONE)),
                done=Count("units__assignments", filter=Q(
                    units__assignments__user=user, units__assignments__status=DONE)),
                curating=Count("units__assignments", filter=Q(
                    units__assignments__user=user, units__assignments__role=CURATOR)))
            .select_related("competition").distinct())
    out = []
    for p in rows:
        out.append(Work(what="Curate units" if p.curating else "Annotate units",
                        title=p.title, competition=p.competition.title,
                        slug=p.competition.slug,
                        url=reverse("workbench-project", args=[p.competition.slug, p.slug]),
                        left=p.left, done=p.done, unit="unit",
                        anchor=f"workbench-{p.pk}"))
    return out
