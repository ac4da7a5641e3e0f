"""A judge's work for the header and the work page (``platform/work.py``): per
campaign they may judge, the items they could still be given (and the one they
hold), and how many they judged."""
from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from shareval.platform.work import Work

from shareval.platform.judging import service
from shareval.platform.judging.models import Assignment, Campaign


def judging_work(user) -> list[Work]:
    out = []
    for camp in user.judging.select_related("dataset__phase__competition").order_by("pk"):
        if not service.may_judge(camp, user):
            continue
        comp = camp.dataset.phase.competition
        mine = Assignment.objects.filter(item__campaign=camp, judge=user)
        holding = mine.filter(status__in=service.OPEN, deadline__gte=timezone.now()).exists()
        left = service.items_left(camp, user) + holding
        docs = camp.design == Campaign.EXHAUSTIVE           # recall: whole documents
        out.append(Work(
            what="Annotate documents" if docs else "Judge items", title=camp.title,
            competition=comp.title, slug=comp.slug,
            url=reverse("judge", args=[camp.pk]), left=left,
            done=mine.filter(status=Assignment.DONE).count(), unit="document" if docs else "item",
            anchor=f"campaign-{camp.pk}",
            note="" if left else f"every {'document' if docs else 'item'} has its judges"))
    return out
