"""Where a competition stands now, for its card on the home page: the phase open
now (else the next one, else the last one), its deadline in the competition's
time zone, and whether it takes submissions."""
from __future__ import annotations

from django.db.models import Prefetch
from django.utils import timezone

from shareval.platform.competitions.models import Phase


def current_phase(phases: list, now) -> tuple[Phase | None, str]:
    """(phase, state): state is "open", "upcoming" or "closed" (or "" with no phase).

    The phase open at ``now`` (the one that ends first if several are open), else the
    next one to open, else the one that ended last."""
    open_ = [p for p in phases if p.start <= now < p.end]
    if open_:
        return min(open_, key=lambda p: p.end), "open"
    upcoming = [p for p in phases if p.start > now]
    if upcoming:
        return min(upcoming, key=lambda p: p.start), "upcoming"
    if phases:
        return max(phases, key=lambda p: p.end), "closed"
    return None, ""


def cards(competitions, now=None) -> list[dict]:
    """One dict per competition: ``comp``, ``phase``, ``state``, ``at`` (the
    deadline of an open phase, the start of an upcoming one, the end of a closed
    one, in the competition's zone) and ``zone``."""
    now = now or timezone.now()
    out = []
    for comp in competitions.prefetch_related(
            Prefetch("phases", queryset=Phase.objects.only("id", "competition_id", "title",
                                                           "start", "end"))):
        phase, state = current_phase(list(comp.phases.all()), now)
        at = None
        if phase is not None:
            at = (phase.start if state == "upcoming" else phase.end).astimezone(comp.tz)
        out.append({"comp": comp, "phase": phase, "state": state, "at": at,
                    "zone": comp.time_zone})
    return out
