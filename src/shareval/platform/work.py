"""What people have to do on the site, gathered from the apps that hand out work.

Judging campaigns give judges items; RCC phase-2 studies give their coder,
judges, reviewers and designer publications to capture, code, review, rank
and references to decide; competitions give organizers the registrations and
teams waiting for them. Each of those apps registers a provider when it
starts (its ``AppConfig.ready``): ``provider(user) -> list[Work]``. This module
knows none of them, so any app may import it.

The header shows one link, *Your work*, with how much is left, to people who
have something left; ``/work/`` (and ``/judging/``, its older address) lists
every piece with its progress; a competition's page lists its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET


@dataclass(frozen=True)
class Work:
    what: str              # what to do, in words: "Judge items", "Review publications"
    title: str             # the campaign's or study's title
    competition: str       # the competition's title
    slug: str              # the competition's slug
    url: str               # where to do it
    left: int              # units left for this person now
    done: int              # units this person (or their role) finished
    unit: str              # "item", "publication", "reference", "choice"
    anchor: str = ""       # the entry's HTML id on the work page
    note: str = ""         # why nothing is left yet, or what comes next

    @property
    def units(self) -> str:
        return self.unit if self.left == 1 else self.unit + "s"


Provider = Callable[[object], list[Work]]
_providers: list[Provider] = []


def provide(provider: Provider) -> Provider:
    """Register ``provider(user) -> [Work]`` (apps call it from ``ready``)."""
    if provider not in _providers:
        _providers.append(provider)
    return provider


def for_user(user, slug: str | None = None) -> list[Work]:
    """Everything ``user`` has to do (in one competition, with ``slug``)."""
    if not user.is_authenticated or not user.is_active:
        return []
    out = [w for p in _providers for w in p(user)]
    return [w for w in out if slug is None or w.slug == slug]


class HeaderWork:
    """The header's count, read only when a page shows the header to a signed-in user."""

    def __init__(self, user):
        self.user = user

    @cached_property
    def left(self) -> int:
        return sum(w.left for w in for_user(self.user))


def header(request) -> dict:
    """Context processor: ``work.left`` for the header's *Your work* link."""
    return {"work": HeaderWork(request.user)}


@login_required
@require_GET
def page(request):
    items = for_user(request.user)
    return render(request, "shareval/work.html", {
        "items": sorted(items, key=lambda w: (w.left == 0, w.competition, w.title, w.what)),
        "left": sum(w.left for w in items)})
