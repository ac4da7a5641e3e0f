"""``shareval server send-reminders``: deadline reminders and scheduled releases.

Run it from cron (hourly, say). Each message goes out once per person and
occasion (a row in ``Sent``), so running it again, or from two machines at once,
sends nothing twice.
"""
from __future__ import annotations

import datetime as dt

from django.dispatch import Signal
from django.utils import timezone

from shareval.platform.competitions.models import Phase

from shareval.platform.notifications import mail

# (phase, now, claim_only) -> mails sent: reminders of apps above this one, for each
# open phase closing within the window (submissions: teams without a primary run)
phase_reminders: list = []


def add_phase_reminder(fn) -> None:
    if fn not in phase_reminders:
        phase_reminders.append(fn)


# sent at the end of each run with ``now``: higher apps do their own periodic work
# then (judging builds campaigns due after a phase's end) and return a count by name
periodic = Signal()


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _left(hours: int) -> str:
    """'1 day 23 hours', '2 days', '5 hours', '1 hour'."""
    days, rest = divmod(hours, 24)
    if not days:
        return _count(rest, "hour")
    return _count(days, "day") + (f" {_count(rest, 'hour')}" if rest else "")


def send_due(now=None, within: dt.timedelta = dt.timedelta(days=3)) -> dict:
    """Remind participants of open phases ending within ``within``; announce results
    whose scheduled release time has passed. Returns counts of mails sent."""
    now = now or timezone.now()
    out = {"reminders": 0, "releases": 0, "primaries": 0}
    for ph in Phase.objects.filter(start__lte=now, end__gt=now, end__lte=now + within) \
            .select_related("competition"):
        comp = ph.competition
        left = ph.end - now
        hours = int(left.total_seconds() // 3600)
        out["reminders"] += mail.send(
            comp.participants(), f"{comp.title}: {ph.title} closes in {_left(hours)}",
            f"{ph.title} of {comp.title} accepts submissions until "
            f"{ph.end.astimezone(comp.tz):%Y-%m-%d %H:%M %Z}.\n\n"
            f"{mail.link(f'/c/{comp.slug}/submit/')}",
            once=f"deadline:{ph.pk}:{ph.end.isoformat()}")
        out["primaries"] += sum(fn(ph, now) for fn in phase_reminders)
    for ph in Phase.objects.filter(blind=True).select_related("competition"):
        level = ph.released_at(now)
        if level in (Phase.TOP, Phase.DETAILED):
            out["releases"] += mail.results_released(ph, level)
    for _, counts in periodic.send(sender=None, now=now):
        out.update(counts or {})
    return out


def claim_past(comp, now=None, within: dt.timedelta = dt.timedelta(days=3)) -> int:
    """After ``import-competition``, mark as sent what the old server had
    already mailed (releases reached, the reminder of a phase closing soon), so
    ``send-reminders`` on the new server does not mail it a second time: the
    once-keys name phase ids, which an import gives anew."""
    now = now or timezone.now()
    people = list(comp.participants())
    n = 0
    for ph in comp.phases.all():
        keys = []
        if ph.blind:
            level = ph.released_at(now)
            keys += [f"release:{ph.pk}:{x}" for x in (Phase.TOP, Phase.DETAILED)
                     if level == Phase.DETAILED or x == level]
        if ph.start <= now < ph.end <= now + within:
            keys.append(f"deadline:{ph.pk}:{ph.end.isoformat()}")
            n += sum(fn(ph, now, claim_only=True) for fn in phase_reminders)
        for key in keys:
            for u in people:
                n += mail._once(f"{key}:{u.pk}")
    return n
