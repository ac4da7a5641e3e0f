"""The RCC phase-2 workflow: creating a study (sampling), roles and topic
routing, reference capture, related-to coding, review, the designer's final
pass and phase-1 rankings. Pages and the management command call these; each
step checks who may take it and writes a :class:`Decision`.

Stages of a sampled publication: capture (the study's one coder) -> related
(a judge whose declared topics include the publication's) -> review (a
reviewer) -> final (the designer closes the study). Phase-1 publications are
ranked by ``rankers`` judges each, routed by topic too.
"""
from __future__ import annotations

import random
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from shareval.assessment import rcc_phase2 as r2
from shareval.platform.competitions.models import Membership

from shareval.platform.annotation import sources, spans
from shareval.platform.annotation.models import (
    Coding, Decision, FullText, Member, Publication, Ranking, Reference, Study
)


class NotAllowed(Exception):
    """The user may not take this step (now)."""


class BadInput(ValueError):
    """What was posted does not fit the step; ``field`` names the form field."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def in_a_team(study: Study, user) -> bool:
    return Membership.objects.filter(team__competition=study.competition, user=user,
                                     team__is_baseline=False).exists()


def roles(study: Study, user) -> set[str]:
    """The user's roles, checked on every request: a member who joins a team
    of the competition has none. The designer is a role too."""
    if not user.is_authenticated or not user.is_active or in_a_team(study, user):
        return set()
    out = set(Member.objects.filter(study=study, user=user).values_list("role", flat=True))
    if study.designer_id == user.pk:
        out.add("designer")
    return out


def _need(study, user, role):
    if role not in roles(study, user):
        raise NotAllowed(f"only the study's {role} may do this")


def _log(study, user, stage, action, pub=None, ref=None, before=None, after=None, note=""):
    Decision.objects.create(study=study, publication=pub, reference=ref, actor=user,
                            stage=stage, action=action, before=before, after=after, note=note)


# creating a study -------------------------------------------------------------------

@transaction.atomic
def create_study(dataset, slug: str, title: str, designer, *, per_topic: int = 20,
                 mix: dict | None = None, seed: int = 0, qualitative: int = 0,
                 rankers: int = 2, strata: dict | None = None, agree: int = 0,
                 texts_dir: Path | None = None, catalog: Path | None = None,
                 topics: list[str] | None = None) -> Study:
    """Sample the publications and snapshot what judges will see.

    ``agree`` > 0 replaces the stratified sample by that many publications on
    which every team agrees whether there is data (RCC's mention sample);
    ``qualitative`` adds that many other publications for phase-1 rankings."""
    if not dataset.competition.is_organizer(designer):
        raise NotAllowed("the designer must be an organizer of the competition")
    if Study.objects.filter(dataset=dataset, slug=slug).exists():
        raise BadInput(f"{dataset} already has a study {slug!r} (choose another --slug)")
    mix = mix or dict(r2.MIX)
    titles, cited = sources.reference_publications(dataset)
    outputs = sources.team_outputs(dataset)
    if len(outputs) < 1:
        raise BadInput(f"{dataset}: no team has a scored run to compare")
    base = sources.baseline_teams(dataset)       # strata and agreement: participants only
    parts = {t: o for t, o in outputs.items() if t not in base} or outputs
    cands = sources.candidates(titles, cited, parts, strata)
    by_id = {c.publication: c for c in cands}
    if agree:
        chosen = [by_id[p] for p in r2.where_teams_agree(
            {t: set(o) for t, o in parts.items()}, sorted(by_id), agree, seed)]
        report = {"mode": "teams agree", "n": agree, "got": len(chosen), "shortfall": []}
    else:
        s = r2.stratified_sample(cands, per_topic, mix, seed, topics)
        chosen = s.chosen
        report = {"mode": "stratified", "per_topic": per_topic, "mix": mix, "wanted": s.wanted,
                  "got": s.got, "shortfall": s.shortfall}
    rest = sorted(p for p in set(by_id) - {c.publication for c in chosen}
                  if topics is None or by_id[p].topic in topics)
    random.Random(f"{seed}:qualitative").shuffle(rest)
    quali = [by_id[p] for p in sorted(rest[:qualitative])]
    study = Study.objects.create(
        dataset=dataset, slug=slug, title=title, designer=designer, teams=sorted(outputs),
        config={"seed": seed, "rankers": rankers, "sample": report,
                "strata": "given" if strata is not None else "guessed from the reference "
                          "and the runs (docs/annotation.md)"})
    ids = {d for o in outputs.values() for per in o.values() for d in per}
    labels = sources.catalog_labels(catalog, ids)
    pubs = []
    for purpose, group in ((Publication.REFERENCES, chosen), (Publication.QUALITATIVE, quali)):
        for c in group:
            outs = {t: [{"id": d, "label": labels.get(d, "")} for d in o.get(c.publication, [])]
                    for t, o in outputs.items()}
            pubs.append(Publication(study=study, publication_id=c.publication, purpose=purpose,
                                    title=titles.get(c.publication, ""), topic=c.topic,
                                    stratum=c.stratum, outputs=outs,
                                    payload=sources.passages(texts_dir, c.publication)))
    Publication.objects.bulk_create(pubs)
    # whole texts only for the publications a coder captures: stored once each
    FullText.objects.bulk_create([FullText(publication=p, text=t) for p in pubs
                                  if p.purpose == Publication.REFERENCES
                                  and (t := sources.full_text(texts_dir, p.publication_id))])
    _log(study, designer, "sample", "sample", after={**report, "references": len(chosen),
                                                     "qualitative": len(quali)})
    return study


def add_member(study: Study, actor, user, role: str, topics: list[str] | None = None) -> Member:
    if not study.competition.is_organizer(actor):
        raise NotAllowed("only organizers add members")
    if role not in dict(Member.ROLES):
        raise BadInput(f"role must be one of {', '.join(dict(Member.ROLES))}")
    if in_a_team(study, user):
        raise BadInput(f"{user.username} is in a team of this competition")
    if role == Member.CODER and Member.objects.filter(study=study, role=role).exclude(
            user=user).exists():
        raise BadInput("the study has its reference coder (one coder keeps the "
                       "references consistent)")
    m, _ = Member.objects.get_or_create(study=study, user=user, role=role)
    if topics is not None:
        m.topics = topics
        m.save(update_fields=["topics"])
    _log(study, actor, "sample", "add member", after={"user": user.username, "role": role})
    return m


def study_topics(study: Study) -> list[str]:
    return sorted(set(study.publications.values_list("topic", flat=True)))


def declare_topics(study: Study, user, topics: list[str]) -> Member:
    """A judge names the topic areas they know; they get items from those only."""
    _need(study, user, Member.JUDGE)
    if not topics:
        # an empty choice would silently stop all of this judge's work
        raise BadInput("Choose at least one topic area: you get publications from those only.")
    known = set(study_topics(study))
    bad = sorted(set(topics) - known)
    if bad:
        raise BadInput(f"unknown topics: {', '.join(bad)}")
    m = Member.objects.get(study=study, user=user, role=Member.JUDGE)
    before = m.topics
    m.topics = sorted(set(topics))
    m.save(update_fields=["topics"])
    _log(study, user, "related", "declare topics", before={"topics": before},
         after={"topics": m.topics})
    return m


# what each role has to do -------------------------------------------------------------

def work_for(study: Study, user) -> dict[str, list[Publication]]:
    """Per role the publications waiting for this user (topic routing for judges)."""
    mine = roles(study, user)
    pubs = study.publications.all()
    out: dict[str, list[Publication]] = {}
    if Member.CODER in mine:
        out["capture"] = list(pubs.filter(purpose=Publication.REFERENCES, captured=None))
    if Member.JUDGE in mine:
        topics = Member.objects.get(study=study, user=user, role=Member.JUDGE).topics
        ready = pubs.filter(topic__in=topics)
        out["related"] = list(ready.filter(purpose=Publication.REFERENCES, coded=None)
                              .exclude(captured=None))
        k = study.config.get("rankers", 2)
        out["rank"] = [p for p in ready.filter(purpose=Publication.QUALITATIVE)
                       .exclude(rankings__judge=user) if p.rankings.count() < k]
    if Member.REVIEWER in mine:
        out["review"] = list(pubs.filter(purpose=Publication.REFERENCES, reviewed=None)
                             .exclude(coded=None))
    if "designer" in mine and study.closed is None:
        out["final"] = list(pubs.exclude(reviewed=None))
    return out


def systems(pub: Publication) -> list[dict]:
    """Teams as System A, B, ... in an order fixed per publication (judges code
    outputs, not team names)."""
    teams = sorted(pub.outputs)
    random.Random(f"{pub.study_id}:{pub.pk}").shuffle(teams)
    letters = [f"System {chr(65 + i % 26)}{'' if i < 26 else i // 26}" for i in range(len(teams))]
    return [{"team": t, "label": lab, "output": pub.outputs[t]} for t, lab in zip(teams, letters)]


# capture ---------------------------------------------------------------------------

def stored_text(pub: Publication) -> str:
    """The publication's whole text, "" when the study has none for it."""
    return FullText.objects.filter(publication=pub).values_list("text", flat=True).first() or ""


def _capturing(pub: Publication, user, kind: str) -> None:
    _need(pub.study, user, Member.CODER)
    if pub.captured is not None:
        raise NotAllowed("capture of this publication is finished")
    if kind not in dict(Reference.KINDS):
        raise BadInput("type: titled, untitled or own", "kind")


def _add_reference(pub, user, **fields) -> Reference:
    ref = Reference.objects.create(publication=pub, created_by=user, **fields)
    _log(pub.study, user, "capture", "add", pub, ref, after=ref.state())
    return ref


def capture_add(pub: Publication, user, kind: str, name: str, context: str) -> Reference:
    """A typed reference: only for a publication whose text the study does not
    have (older studies, or created without --texts)."""
    _capturing(pub, user, kind)
    if FullText.objects.filter(publication=pub).exists():
        raise BadInput("select the reference in the publication's text (typing is only "
                       "for publications without a stored text)", "begin")
    name, context = name.strip(), context.strip()
    if not name or not context:
        raise BadInput("a reference needs a name and the passage it is read from")
    return _add_reference(pub, user, kind=kind, name=name[:500], context=context)


def capture_span(pub: Publication, user, kind: str, begin, end) -> Reference:
    """A reference selected in the stored text: name and passage come from the
    offsets (checked against the text), never from what the browser sent."""
    _capturing(pub, user, kind)
    text = stored_text(pub)
    if not text:
        raise BadInput("the study has no text of this publication: type the reference", "begin")
    try:
        p = spans.derive(text, begin, end)
    except spans.SpanError as e:
        raise BadInput(str(e), e.field) from None
    return _add_reference(pub, user, kind=kind, name=p.name, context=p.context,
                          begin=p.begin, end=p.end)


def capture_withdraw(ref: Reference, user) -> None:
    pub = ref.publication
    _need(pub.study, user, Member.CODER)
    if pub.captured is not None:
        raise NotAllowed("capture of this publication is finished")
    before = ref.state()
    ref.status, ref.note = Reference.REMOVED, "withdrawn by the coder"
    ref.save(update_fields=["status", "note"])
    _log(pub.study, user, "capture", "withdraw", pub, ref, before, ref.state())


def capture_finish(pub: Publication, user) -> None:
    _need(pub.study, user, Member.CODER)
    n = Publication.objects.filter(pk=pub.pk, captured=None).update(captured=timezone.now())
    if n:
        _log(pub.study, user, "capture", "finish", pub, after={
            "references": pub.references.exclude(status=Reference.REMOVED).count()})


# related-to coding -----------------------------------------------------------------

def clean_related(pub: Publication, raw: dict) -> dict[str, dict[str, list[str]]]:
    """{team: {reference pk: [output id]}} restricted to the publication's live
    references and each team's own outputs."""
    refs = {str(r) for r in pub.references.exclude(status=Reference.REMOVED)
            .values_list("pk", flat=True)}
    out: dict[str, dict[str, list[str]]] = {}
    for team, per in (raw or {}).items():
        if team not in pub.outputs or not isinstance(per, dict):
            raise BadInput(f"unknown system {team!r}")
        own = {o["id"] for o in pub.outputs[team]}
        for ref, ids in per.items():
            if str(ref) not in refs:
                raise BadInput(f"unknown reference {ref!r}")
            if not isinstance(ids, list) or not set(map(str, ids)) <= own:
                raise BadInput(f"reference {ref}: not an output of that system")
            if ids:
                out.setdefault(team, {})[str(ref)] = sorted(set(map(str, ids)))
    return out


@transaction.atomic
def code_related(pub: Publication, user, raw: dict) -> Coding:
    """A topic judge's coding (once per publication), or a reviewer's revision."""
    study = pub.study
    mine = roles(study, user)
    pub = Publication.objects.select_for_update(no_key=True).get(pk=pub.pk)
    if pub.captured is None:
        raise NotAllowed("the references are not captured yet")
    if pub.coded is None:
        if Member.JUDGE not in mine or pub.topic not in Member.objects.get(
                study=study, user=user, role=Member.JUDGE).topics:
            raise NotAllowed("this publication is not in your topic areas")
        stage = "related"
    elif pub.reviewed is None and Member.REVIEWER in mine:
        stage = "review"
    else:
        raise NotAllowed("this publication is already coded")
    related = clean_related(pub, raw)
    before = current_coding(pub)
    c = Coding.objects.create(publication=pub, coder=user, related=related)
    if pub.coded is None:
        pub.coded = timezone.now()
        pub.save(update_fields=["coded"])
    _log(study, user, stage, "code" if stage == "related" else "revise coding", pub,
         before=before.related if before else None, after=related)
    return c


def current_coding(pub: Publication) -> Coding | None:
    return pub.codings.order_by("-created", "-pk").first()


# review and final pass ---------------------------------------------------------------

REVIEW_ACTIONS = ("confirm", "revise", "unsure", "remove")


def review_reference(ref: Reference, user, action: str, note: str = "",
                     kind: str | None = None, name: str | None = None,
                     context: str | None = None) -> None:
    """The reviewer confirms, revises (type, name, context), marks unsure with a
    note, or removes (not data) a reference."""
    pub = ref.publication
    _need(pub.study, user, Member.REVIEWER)
    if pub.coded is None or pub.reviewed is not None:
        raise NotAllowed("this publication is not waiting for review")
    if action not in REVIEW_ACTIONS:
        raise BadInput(f"action: one of {', '.join(REVIEW_ACTIONS)}")
    note = note.strip()
    if action in ("unsure", "remove") and not note:
        raise BadInput(f"say why ({action} needs a note)")
    before = ref.state()
    if action == "revise":
        if kind is not None and kind not in dict(Reference.KINDS):
            raise BadInput("type: titled, untitled or own")
        ref.kind = kind or ref.kind
        ref.name = (name or ref.name).strip()[:500]
        ref.context = (context or ref.context).strip()
        ref.status = Reference.ACTIVE
    elif action == "unsure":
        ref.status = Reference.UNSURE
    elif action == "remove":
        ref.status = Reference.REMOVED
    ref.note = note or ref.note
    ref.save()
    _log(pub.study, user, "review", action, pub, ref, before, ref.state(), note)


def review_finish(pub: Publication, user) -> None:
    _need(pub.study, user, Member.REVIEWER)
    if pub.coded is None:
        raise NotAllowed("this publication is not coded yet")
    if Publication.objects.filter(pk=pub.pk, reviewed=None).update(reviewed=timezone.now()):
        _log(pub.study, user, "review", "finish", pub)


def flagged(study: Study) -> list[Reference]:
    """What the designer looks at: references the reviewer removed, revised or was
    unsure of (the reviewer's decision is in the trail)."""
    touched = set(Decision.objects.filter(study=study, stage="review",
                                          action__in=("revise", "unsure", "remove"))
                  .values_list("reference_id", flat=True))
    return list(Reference.objects.filter(pk__in=touched).select_related("publication")
                .order_by("publication__topic", "publication_id", "pk"))


def final_decide(ref: Reference, user, keep: bool, note: str = "") -> None:
    study = ref.publication.study
    _need(study, user, "designer")
    if study.closed is not None:
        raise NotAllowed("the final pass is closed")
    before = ref.state()
    ref.status = Reference.ACTIVE if keep else Reference.REMOVED
    ref.note = note.strip() or ref.note
    ref.save(update_fields=["status", "note"])
    _log(study, user, "final", "keep" if keep else "remove", ref.publication, ref, before,
         ref.state(), note.strip())


def close_study(study: Study, user) -> None:
    """The designer ends the final pass: unresolved "unsure" references block it."""
    _need(study, user, "designer")
    unsure = Reference.objects.filter(publication__study=study, status=Reference.UNSURE).count()
    if unsure:
        raise BadInput(f"{unsure} reference(s) still marked unsure: keep or remove them first")
    open_pubs = study.publications.filter(purpose=Publication.REFERENCES, reviewed=None).count()
    if Study.objects.filter(pk=study.pk, closed=None).update(closed=timezone.now()):
        _log(study, user, "final", "close", note=f"{open_pubs} publication(s) not reviewed "
                                                 f"are left out of the scores")


# phase-1 rankings -------------------------------------------------------------------

def rank(pub: Publication, user, order: list[str], notes: dict[str, dict]) -> Ranking:
    study = pub.study
    if pub.purpose != Publication.QUALITATIVE:
        raise NotAllowed("this publication is not in the qualitative set")
    _need(study, user, Member.JUDGE)
    if pub.topic not in Member.objects.get(study=study, user=user, role=Member.JUDGE).topics:
        raise NotAllowed("this publication is not in your topic areas")
    k = study.config.get("rankers", 2)
    if not pub.rankings.filter(judge=user).exists() and pub.rankings.count() >= k:
        raise NotAllowed(f"this publication already has its {k} rankings")
    teams = sorted(pub.outputs)
    if sorted(order) != teams:
        raise BadInput("give every system a different rank")
    clean = {t: {k: str((notes.get(t) or {}).get(k, "")).strip()[:2000] for k in ("good", "bad")}
             for t in teams}
    r, made = Ranking.objects.update_or_create(publication=pub, judge=user,
                                               defaults={"order": order, "notes": clean})
    _log(study, user, "rank", "rank" if made else "re-rank", pub,
         after={"order": order, "notes": clean})
    return r
