"""Each study member's work for the header and the work page (``platform/work.py``):
publications to capture, code, review or rank, the topic areas a judge has not
chosen yet, and the references the designer still has to decide."""
from __future__ import annotations

from django.db.models import Q
from django.urls import reverse

from shareval.platform.work import Work

from shareval.platform.annotation import service
from shareval.platform.annotation.models import Decision, Member, Publication, Study


def annotation_work(user) -> list[Work]:
    out: list[Work] = []
    studies = (Study.objects.filter(Q(members__user=user) | Q(designer=user)).distinct()
               .select_related("dataset__phase__competition").order_by("pk"))
    for st in studies:
        mine = service.roles(st, user)
        if mine:
            out += _study_work(st, user, mine)
    return out


def _study_work(st: Study, user, mine: set[str]) -> list[Work]:
    comp = st.competition
    url = reverse("annotation-work", kwargs={"c": comp.slug, "study": st.pk})
    todo = service.work_for(st, user)
    refs = st.publications.filter(purpose=Publication.REFERENCES)

    def entry(what, stage, left, done, unit="publication", note="", link=url):
        return Work(what=what, title=st.title, competition=comp.title, slug=comp.slug,
                    url=link, left=left, done=done, unit=unit,
                    anchor=f"study-{st.pk}-{stage}", note="" if left else note)
    out = []
    if Member.CODER in mine:
        out.append(entry("Capture data references", "capture", len(todo["capture"]),
                         refs.exclude(captured=None).count()))
    if Member.REVIEWER in mine:
        out.append(entry("Review coded publications", "review", len(todo["review"]),
                         refs.exclude(reviewed=None).count(),
                         note="waiting for publications to be coded"))
    if Member.JUDGE in mine:
        out += _judge_work(st, user, todo, entry, url)
    if "designer" in mine and st.closed is None:
        flagged = {r.pk for r in service.flagged(st)}
        decided = set(Decision.objects.filter(study=st, stage="final", reference__in=flagged)
                      .values_list("reference_id", flat=True))
        out.append(entry("Decide flagged references (final pass)", "final",
                         len(flagged - decided), len(decided), unit="reference",
                         note="nothing flagged yet; close the pass when the review is done",
                         link=reverse("annotation-final",
                                      kwargs={"c": comp.slug, "study": st.pk})))
    return out


def _judge_work(st: Study, user, todo: dict, entry, url: str) -> list[Work]:
    topics = Member.objects.get(study=st, user=user, role=Member.JUDGE).topics
    if not topics:
        return [entry("Choose your topic areas", "topics", 1, 0, unit="choice",
                      link=url + "#topics-form")]
    mine = st.publications.filter(topic__in=topics)
    out = [entry("Code related-to", "related", len(todo["related"]),
                 mine.filter(purpose=Publication.REFERENCES).exclude(coded=None).count(),
                 note="waiting for the coder to capture publications in your topics")]
    if mine.filter(purpose=Publication.QUALITATIVE).exists():
        out.append(entry("Rank the teams (phase 1)", "rank", len(todo["rank"]),
                         mine.filter(rankings__judge=user).count(),
                         note="every publication in your topics has its rankings"))
    return out
