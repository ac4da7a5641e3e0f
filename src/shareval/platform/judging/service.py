"""Work management and results of judging campaigns.

Assignment: a judge asks for work and gets their open assignment, else the
item with the fewest live assignments (done + open) below k that they never
had, gold items mixed in at the campaign's gold rate. Open assignments past
their deadline expire (they stay, so the item is never offered to that judge
again) and the item goes back to the pool: reassignment. Conditional
updates keep two browsers of one judge, or two judges, from racing.
"""
from __future__ import annotations

import datetime as dt
import secrets
from collections import Counter, defaultdict

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.text import slugify

from shareval.metrics import agreement
from shareval.platform.competitions.models import Membership

from shareval.platform.judging import build, content, designs, e2e_items, kbp_items
from shareval.platform.judging.models import Adjudication, Assignment, Campaign, Item

OPEN = (Assignment.ASSIGNED, Assignment.STARTED)


# creating a campaign ----------------------------------------------------------------

@transaction.atomic
def create_campaign(dataset, title: str, design: str, k: int, timeout: int, config: dict,
                    judges, on_leaderboard: bool = True, hourly_rate: float | None = None,
                    seconds: float | None = None, upload=None, n: int = 50, docs: int = 0,
                    seed: int = 0) -> Campaign:
    """A campaign with its items, from an uploaded items file or drawn from the runs;
    nothing is kept when the items are refused (raises InvalidInput or ValueError)."""
    from shareval.platform.judging import auto      # it builds on this module
    config = kbp_items.campaign_config(content.Resources(dataset), design, config,
                                       upload is None and config.get("build") != "primary-e2e")
    problems = auto.check_config(dataset, design, config)
    if config.get("auto") is True and upload is not None:
        problems.append("auto: an automatic campaign draws its items from the runs, not "
                        "from an items file")
    if problems:
        raise ValueError("; ".join(problems))
    if hourly_rate is not None:
        config["hourly_rate"] = hourly_rate
    if seconds is not None:
        config["seconds_per_judgment"] = seconds
    base = slugify(title)[:40] or "campaign"
    slug = base
    while Campaign.objects.filter(dataset=dataset, slug=slug).exists():
        slug = f"{base}-{secrets.token_hex(3)}"
    campaign = Campaign.objects.create(dataset=dataset, slug=slug, title=title, design=design,
                                       judges_per_item=k, timeout_minutes=timeout,
                                       config=config, on_leaderboard=on_leaderboard)
    campaign.judges.set(judges)
    if upload is not None:
        text = upload.read(50 * 1024 * 1024).decode("utf-8", errors="replace")
        build.load_items(campaign, text, upload.name)
    elif config.get("auto") is True:
        # the runs scored so far now; every later one when it is scored (judging/auto.py)
        auto.draw_all(campaign)
        if config.get("controls"):
            kbp_items.add_controls(campaign, content.Resources(dataset), config["controls"], seed)
    elif config.get("build") == "primary-e2e":
        # the primary E2E runs: now if the phase has ended, else by send-reminders after it
        e2e_items.check_campaign(campaign)
        e2e_items.build_due(only=campaign.pk)
    else:
        build.build_from_runs(campaign, n, docs, seed)
        if config.get("controls"):
            kbp_items.add_controls(campaign, content.Resources(dataset), config["controls"], seed)
    return campaign


# who may judge -------------------------------------------------------------------

def _in_a_team(competition_id: int, user) -> bool:
    """A membership of a participating team, pending included (asked to join)."""
    return Membership.objects.filter(team__competition_id=competition_id, user=user,
                                     team__is_baseline=False).exists()


def may_judge(campaign: Campaign, user) -> bool:
    """Checked on every judging request, not only when the campaign is made: a
    judge who creates or joins a team of the competition loses access."""
    return (user.is_authenticated and user.is_active
            and campaign.judges.filter(pk=user.pk).exists()
            and not _in_a_team(campaign.dataset.phase.competition_id, user))


def end_judge_access(competition_id: int, user, now=None) -> int:
    """Take ``user`` off every campaign of the competition; their open assignments
    expire (the items go back to the pool). Returns the number of campaigns."""
    camps = list(Campaign.objects.filter(dataset__phase__competition_id=competition_id,
                                         judges=user))
    for camp in camps:
        camp.judges.remove(user)
    Assignment.objects.filter(item__campaign__in=camps, judge=user, status__in=OPEN).update(
        status=Assignment.EXPIRED, deadline=now or timezone.now())
    return len(camps)


def expire_stale(campaign: Campaign, now=None) -> int:
    now = now or timezone.now()
    return Assignment.objects.filter(item__campaign=campaign, status__in=OPEN,
                                     deadline__lt=now).update(status=Assignment.EXPIRED)


def open_assignment(campaign: Campaign, judge, now=None) -> Assignment | None:
    """The judge's assignment in progress, if any; reads only (for GET)."""
    now = now or timezone.now()
    return (Assignment.objects.filter(item__campaign=campaign, judge=judge, status__in=OPEN,
                                      deadline__gte=now)
            .select_related("item").first())


def _candidates(campaign: Campaign, judge, now):
    """Items the judge never had with fewer than k live (open or done) assignments;
    an open one past its deadline is not live (expire_stale may not have run yet)."""
    expired = Q(assignments__status__in=OPEN, assignments__deadline__lt=now)
    return (Item.objects.filter(campaign=campaign)
            .exclude(assignments__judge=judge)
            .annotate(live=Count("assignments", filter=Q(
                assignments__status__in=OPEN + (Assignment.DONE,)) & ~expired))
            .filter(live__lt=campaign.judges_per_item).order_by("live", "pk"))


def items_left(campaign: Campaign, judge) -> int:
    """Items this judge could still be given (reads only)."""
    return _candidates(campaign, judge, timezone.now()).count()


def next_assignment(campaign: Campaign, judge, now=None) -> Assignment | None:
    """The judge's open assignment, else a new one (a write: call it from POST)."""
    now = now or timezone.now()
    expire_stale(campaign, now)
    mine = (Assignment.objects.filter(item__campaign=campaign, judge=judge, status__in=OPEN)
            .select_related("item").first())
    if mine:
        return mine
    k = campaign.judges_per_item
    for _ in range(5):                      # lost races retry with the next candidate
        item = _pick(campaign, judge, _candidates(campaign, judge, now))
        if item is None:
            return None
        try:
            with transaction.atomic():
                a = Assignment.objects.create(
                    item=item, judge=judge,
                    deadline=now + dt.timedelta(minutes=campaign.timeout_minutes))
                live = item.assignments.filter(status__in=OPEN + (Assignment.DONE,)).count()
                if live > k:
                    raise IntegrityError("over-assigned")
            return a
        except IntegrityError:
            continue
    return None


def _pick(campaign, judge, candidates):
    """Mostly real items; a gold item every ``gold_every`` assignments."""
    every = int(campaign.config.get("gold_every", 10) or 0)
    done = Assignment.objects.filter(item__campaign=campaign, judge=judge).count()
    if every and done % every == every - 1:
        gold = candidates.filter(gold__isnull=False).first()
        if gold:
            return gold
    return candidates.filter(gold__isnull=True).first() or candidates.first()


def start(a: Assignment) -> None:
    Assignment.objects.filter(pk=a.pk, status=Assignment.ASSIGNED).update(
        status=Assignment.STARTED)


def submit(a: Assignment, answer: dict, seconds: float | None = None, now=None) -> bool:
    """Store a checked answer; False when the assignment expired or was done meanwhile."""
    now = now or timezone.now()
    clean = designs.clean_answer(a.item.campaign, a.item, answer)
    n = Assignment.objects.filter(pk=a.pk, status__in=OPEN, deadline__gte=now).update(
        status=Assignment.DONE, answer=clean, done=now, seconds=seconds)
    return n == 1


def adjudicate(item: Item, user, decision: dict, note: str = "") -> Adjudication:
    clean = designs.clean_answer(item.campaign, item, decision)
    return Adjudication.objects.create(item=item, decided_by=user, decision=clean, note=note)


# progress, agreement, gold ----------------------------------------------------------

def progress(campaign: Campaign) -> dict:
    expire_stale(campaign)
    per_judge: dict[str, Counter] = defaultdict(Counter)
    for name, status in Assignment.objects.filter(item__campaign=campaign).values_list(
            "judge__username", "status"):
        per_judge[name][status] += 1
    for j in campaign.judges.all():
        per_judge.setdefault(j.username, Counter())
    items = campaign.items.count()
    done_items = (campaign.items.annotate(d=Count("assignments", filter=Q(
        assignments__status=Assignment.DONE))).filter(d__gte=campaign.judges_per_item).count())
    return {"items": items, "complete": done_items,
            "judges": {j: dict(c) for j, c in sorted(per_judge.items())}}


def _done(campaign):
    return (Assignment.objects.filter(item__campaign=campaign, status=Assignment.DONE)
            .select_related("item", "judge").order_by("item_id", "judge_id"))


def _label_rows(campaign: Campaign) -> tuple[dict, dict]:
    """(item, unit) -> judge -> label over the non-gold done answers, and item -> type."""
    rows: dict[tuple, dict[str, str]] = defaultdict(dict)
    types: dict[int, tuple[str, str]] = {}
    for a in _done(campaign).filter(item__gold__isnull=True):
        p = a.item.payload
        kind = str(p.get("type") or "default")
        types[a.item_id] = (kind, p["relation"] if isinstance(p.get("relation"), str) else kind)
        for unit, label in designs.labels(campaign.design, a.item, a.answer).items():
            rows[(a.item_id, unit)][a.judge.username] = label
    return rows, types


def agreement_stats(campaign: Campaign) -> dict:
    """Cohen's kappa (mean over judge pairs), Fleiss' kappa (when every unit has
    the same number of judgments) and Krippendorff's alpha over the units' labels."""
    return _agreement(_label_rows(campaign)[0])


def agreement_by_type(campaign: Campaign) -> list[dict]:
    """agreement_stats per item type (a KBP relation: its label), by label."""
    rows, types = _label_rows(campaign)
    groups: dict[tuple[str, str], dict] = defaultdict(dict)
    for (item, unit), r in rows.items():
        groups[types[item]][(item, unit)] = r
    return [{"type": kind, "label": label, **_agreement(g)}
            for (kind, label), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))]


def _agreement(rows: dict[tuple, dict[str, str]]) -> dict:
    judges = sorted({j for r in rows.values() for j in r})
    pairable = [r for r in rows.values() if len(r) >= 2]
    out = {"units": len(rows), "pairable_units": len(pairable), "judges": len(judges),
           "cohen_kappa": None, "fleiss_kappa": None, "krippendorff_alpha": None}
    if not pairable or len(judges) < 2:
        return out
    codes = {lab: i for i, lab in enumerate(sorted({v for r in pairable for v in r.values()}))}
    m = np.full((len(judges), len(pairable)), agreement.MISSING, dtype=np.int64)
    for u, r in enumerate(pairable):
        for j, lab in r.items():
            m[judges.index(j), u] = codes[lab]
    pairs = [v for v in agreement.pairwise_cohen(m).values() if v == v]
    out["cohen_kappa"] = float(np.mean(pairs)) if pairs else None
    counts = {len(r) for r in pairable}
    if len(counts) == 1:
        compact = np.array([[codes[v] for v in r.values()] for r in pairable]).T
        fk = agreement.fleiss_kappa(compact)
        out["fleiss_kappa"] = None if fk != fk else float(fk)
    ka = agreement.krippendorff_alpha_nominal(m)
    out["krippendorff_alpha"] = None if ka != ka else float(ka)
    return out


def gold_accuracy(campaign: Campaign) -> dict[str, dict]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a in _done(campaign).filter(item__gold__isnull=False):
        want = designs.labels(campaign.design, a.item, a.item.gold)
        got = designs.labels(campaign.design, a.item, a.answer)
        for unit, lab in want.items():
            out[a.judge.username][0] += got.get(unit) == lab
            out[a.judge.username][1] += 1
    return {j: {"correct": c, "gold_units": n, "accuracy": c / n} for j, (c, n) in out.items()}


def control_report(campaign: Campaign) -> list[dict]:
    """Per judge who answered gold (control) items: how many, how many failed, the
    accuracy and the failed items. A control fails when the verdict differs from the
    known one or, in a question chain, when any question answered differs from the
    known answer (saying "no" to a true subject reaches the right verdict by chance)."""
    out: dict[str, dict] = {}
    for a in _done(campaign).filter(item__gold__isnull=False):
        r = out.setdefault(a.judge.username, {"judge": a.judge.username, "answered": 0,
                                              "failed": 0, "failures": []})
        r["answered"] += 1
        want, got = _said(campaign, a.item, a.item.gold), _said(campaign, a.item, a.answer)
        known = a.item.gold.get("answers", {}) if campaign.design == designs.CHAIN else {}
        wrong = any(known.get(q, v) != v for q, v in a.answer.get("answers", {}).items()) \
            if known else False
        if wrong or designs.labels(campaign.design, a.item, a.answer) != \
                designs.labels(campaign.design, a.item, a.item.gold):
            r["failed"] += 1
            r["failures"].append({"item": a.item, "expected": want, "answered": got,
                                  "shown": content.summary_line(
                                      content.item_view(campaign.design, a.item.payload))})
    for r in out.values():
        r["accuracy"] = (r["answered"] - r["failed"]) / r["answered"]
    return [out[j] for j in sorted(out)]


def _said(campaign: Campaign, item, answer: dict) -> str:
    """An answer in words: the verdict, and a chain's answers ('incorrect (subject no)')."""
    verdict = "; ".join(designs.labels(campaign.design, item, answer).values())
    answers = answer.get("answers") if campaign.design == designs.CHAIN else None
    if not answers:
        return verdict
    # in the chain's order: PostgreSQL's JSON does not keep the stored order
    order = [q["id"] for q in designs.chain_for(campaign.config, item.payload.get("type"))]
    ids = sorted(answers, key=lambda q: (order.index(q) if q in order else len(order), q))
    return verdict + " (" + ", ".join(f"{q} {answers[q]}" for q in ids) + ")"


# final answers ---------------------------------------------------------------------

def final_answers(campaign: Campaign) -> dict[int, dict]:
    """Per item: judges' answers, the latest adjudication, and whether judges disagree."""
    out: dict[int, dict] = {}
    for a in _done(campaign):
        e = out.setdefault(a.item_id, {"item": a.item, "answers": {}, "adjudication": None})
        e["answers"][a.judge.username] = a.answer
    for adj in Adjudication.objects.filter(item__campaign=campaign).select_related("decided_by"):
        e = out.setdefault(adj.item_id, {"item": adj.item, "answers": {}, "adjudication": None})
        e["adjudication"] = adj                  # ordered by time: the last one wins
    for e in out.values():
        labs = [designs.labels(campaign.design, e["item"], a) for a in e["answers"].values()]
        e["disagree"] = len(labs) >= 2 and any(x != labs[0] for x in labs[1:])
    return out


def disagreements(campaign: Campaign) -> list[dict]:
    return [e for e in final_answers(campaign).values()
            if e["disagree"] and e["item"].gold is None]
