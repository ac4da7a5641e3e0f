"""When and to whom a file is given: the data files (``data:``) and the files
released with datasets (``public:``) each have a release time and an audience.

- ``release_at`` (None: at once): before it, the file is listed with "available
  from <date time zone>" in the competition's zone, and its download is refused
  with the same sentence.
- ``audience``: ``registered`` (everyone the competition's downloads rule lets
  download, as before), ``phase`` (the teams admitted to the file's own phase)
  or ``phase:<slug>`` (the teams admitted to that phase, e.g. finalists). A
  phase admits the approved teams of the competition, only its chosen ones when
  it has a team list (``eligibility.phase_refusal``). Outside the audience a
  file is not listed at all, and its URL is refused with "only for the teams of
  <phase title>".

Organizers see and download everything. The pages, the API and the download
views all ask :meth:`Viewer.of`, so a guessed URL meets the same rule as the list.
"""
from __future__ import annotations

import dataclasses

from django.utils import timezone

from shareval.platform.access import eligibility
from shareval.platform.competitions.models import Competition, Phase, PublicFile, Team
from shareval.platform.competitions.models.core import AUDIENCE_PHASE, AUDIENCE_REGISTERED

AUDIENCE, DATE, GENERAL = "audience", "date", "general"


def zoned(comp: Competition, t) -> str:
    """``t`` in the competition's zone: '2018-05-14 00:00 EDT (America/New_York)'."""
    local = t.astimezone(comp.tz)
    abbr = local.strftime("%Z")
    return f"{local:%Y-%m-%d %H:%M} {abbr}" + ("" if abbr == comp.time_zone
                                               else f" ({comp.time_zone})")


def available_from(comp: Competition, t) -> str:
    return f"available from {zoned(comp, t)}"


def audience_slug(f) -> str | None:
    """The slug of the phase whose teams may download ``f``; None: everyone registered."""
    if f.audience == AUDIENCE_REGISTERED:
        return None
    if f.audience == AUDIENCE_PHASE:
        return f.dataset.phase.slug if isinstance(f, PublicFile) else ""
    return f.audience.partition(":")[2]


def open_to_all(f, now=None) -> bool:
    """Whether every participant may have ``f`` now (samples built from released files)."""
    now = now or timezone.now()
    return f.audience == AUDIENCE_REGISTERED and (f.release_at is None or f.release_at <= now)


@dataclasses.dataclass(frozen=True)
class FileAccess:
    listed: bool                  # shown to this viewer at all
    refusal: str | None = None    # why a download is refused now; None: allowed
    kind: str | None = None       # audience, date or general (registration, licence)
    available_from: str | None = None
    note: str = ""                # organizers: the file's date and audience, when set

    @property
    def allowed(self) -> bool:
        return self.refusal is None


class Viewer:
    """One person looking at one competition's files: their role, team and the
    competition-wide download refusal are read once for a whole list."""

    def __init__(self, user, comp: Competition, now=None):
        self.comp, self.now = comp, now or timezone.now()
        self.organizer = comp.is_organizer(user)
        self.team = comp.team_of(user)
        self.general = eligibility.download_refusal(user, comp)
        self._phases: dict[str, Phase | None] = {}

    def phase(self, slug: str) -> Phase | None:
        if slug not in self._phases:
            self._phases[slug] = self.comp.phases.filter(slug=slug).first() if slug else None
        return self._phases[slug]

    def admitted(self, phase: Phase | None) -> bool:
        t = self.team
        return phase is not None and t is not None and t.status == Team.APPROVED \
            and eligibility.phase_refusal(t, phase) is None

    def describe(self, f, slug: str | None) -> str:
        """'from <date>; for the teams of <phase>' (the parts that are set)."""
        parts = [f"from {zoned(self.comp, f.release_at)}"] if f.release_at else []
        if slug is not None:
            ph = self.phase(slug)
            parts.append(f"for the teams of {ph.title if ph else f'phase {slug}'}")
        return "; ".join(parts)

    def of(self, f) -> FileAccess:
        """The rule for one PublicFile or DataFile of this competition."""
        slug = audience_slug(f)
        if self.organizer:
            return FileAccess(True, note=self.describe(f, slug))
        if slug is not None and not self.admitted(ph := self.phase(slug)):
            who = ph.title if ph is not None else f"phase {slug}"
            return FileAccess(False, f"only for the teams of {who}", AUDIENCE)
        if f.release_at is not None and self.now < f.release_at:
            when = available_from(self.comp, f.release_at)
            return FileAccess(True, when, DATE, when)
        if self.general:
            return FileAccess(True, self.general, GENERAL)
        return FileAccess(True)
