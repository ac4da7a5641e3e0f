"""Access and eligibility: invitations, registrations, agreements to versioned
pages (terms, data licence), restricted data files and their download log,
finalist-only phases, versioned catalogs, announcements.

The rules that read these rows are in ``eligibility.py``; the bundle keys that
write them in ``bundles/access_section.py``. Imported by ``models/__init__.py`` so Django sees them.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from shareval.platform.competitions.models.core import (
    AUDIENCE_REGISTERED, Competition, Phase, Team
)

TERMS, LICENCE = "terms", "licence"


class Invitation(models.Model):
    """Who may see a private competition: a username, an e-mail address or an
    e-mail domain (``@uni.example``)."""
    USER, EMAIL, DOMAIN = "user", "email", "domain"
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="invitations")
    kind = models.CharField(max_length=8, choices=[(USER, USER), (EMAIL, EMAIL),
                                                   (DOMAIN, DOMAIN)])
    value = models.CharField(max_length=254, help_text="lower case")
    # an address invited from the browser gets a mailed sign-up link; only
    # the token's SHA-256 is kept; it is used once and expires (invitations.py)
    token_hash = models.CharField(max_length=64, blank=True, db_index=True)
    sent = models.DateTimeField(null=True, blank=True)
    expires = models.DateTimeField(null=True, blank=True)
    used = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                                blank=True, related_name="+")
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "kind", "value"],
                                               name="invitation_unique")]

    def __str__(self):
        return self.value

    @classmethod
    def parse(cls, text: str) -> tuple[str, str]:
        """``@uni.example`` is a domain, ``a@b`` an address, anything else a username."""
        text = text.strip().lower()
        if text.startswith("@"):
            return cls.DOMAIN, text[1:]
        if "@" in text:
            return cls.EMAIL, text
        return cls.USER, text


class Registration(models.Model):
    """A person's request to take part; decided by an organizer when the
    competition has ``registration_approval``, approved at once otherwise."""
    PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="registrations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="registrations")
    status = models.CharField(max_length=10, default=PENDING,
                              choices=[(PENDING, PENDING), (APPROVED, APPROVED),
                                       (REJECTED, REJECTED)])
    created = models.DateTimeField(default=timezone.now)
    decided = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "user"],
                                               name="registration_unique")]
        ordering = ["created"]


class Page(models.Model):
    """An organizer page in Markdown (rules, schedule, data, terms, licence).
    ``version`` grows whenever the text changes; agreements name the version."""
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="pages")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    body = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)
    updated = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "slug"],
                                               name="page_unique")]
        ordering = ["id"]

    def __str__(self):
        return self.title


class Agreement(models.Model):
    """One acceptance of a versioned page (terms or data licence), with its time;
    every acceptance is kept, so the history shows which version was accepted when."""
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="agreements")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="agreements")
    document = models.CharField(max_length=20, choices=[(TERMS, TERMS), (LICENCE, LICENCE)])
    version = models.PositiveIntegerField()
    accepted = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-accepted"]


class DataFile(models.Model):
    """A file the organizers declared under ``data:`` in the bundle: stored under
    PRIVATE_DIR and served only through the checked download view."""
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="data_files")
    name = models.CharField(max_length=200)
    path = models.CharField(max_length=500, help_text="relative to PRIVATE_DIR")
    description = models.CharField(max_length=500, blank=True)
    size = models.BigIntegerField(default=0)
    digest = models.CharField(max_length=64, blank=True)
    # as PublicFile's; ``phase`` alone names no phase here, only phase:<slug> does
    release_at = models.DateTimeField(null=True, blank=True,
                                      help_text="not downloadable before (None: at once)")
    audience = models.CharField(max_length=80, default=AUDIENCE_REGISTERED,
                                help_text="registered or phase:<slug>")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "name"],
                                               name="datafile_unique")]
        ordering = ["name"]


class Download(models.Model):
    """Every download of a released or data file: who, what, when."""
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="downloads_log")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                             blank=True, related_name="+")
    what = models.CharField(max_length=500, help_text="data/<name> or files/<phase>/<dataset>/<name>")
    at = models.DateTimeField(default=timezone.now)
    address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        ordering = ["-at"]


class PhaseLimit(models.Model):
    """A phase only the chosen teams may submit to (RCC's phase 2 for its finalists)."""
    phase = models.OneToOneField(Phase, on_delete=models.CASCADE, related_name="limit")
    teams = models.ManyToManyField(Team, blank=True, related_name="+")


class Catalog(models.Model):
    """A versioned list of ids (datasets of a data catalog, variables of a
    vocabulary). Loading a changed file adds a version; phases name the version
    they check submissions against."""
    DATASET, VARIABLE = "dataset", "variable"
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="catalogs")
    slug = models.SlugField()
    kind = models.CharField(max_length=10, choices=[(DATASET, "dataset ids"),
                                                    (VARIABLE, "variable ids")])
    version = models.PositiveIntegerField(default=1)
    path = models.CharField(max_length=500, help_text="relative to PRIVATE_DIR: one id a line")
    count = models.PositiveIntegerField(default=0)
    digest = models.CharField(max_length=64)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "slug", "version"],
                                               name="catalog_version_unique")]
        ordering = ["slug", "-version"]

    def __str__(self):
        return f"{self.slug} v{self.version}"


class PhaseCatalog(models.Model):
    """The catalog version a phase's submissions are checked against."""
    phase = models.OneToOneField(Phase, on_delete=models.CASCADE, related_name="catalog")
    catalog = models.ForeignKey(Catalog, on_delete=models.PROTECT, related_name="uses")


class Announcement(models.Model):
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="announcements")
    title = models.CharField(max_length=200)
    body = models.TextField(blank=True)
    published = models.DateTimeField(default=timezone.now)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                               blank=True, related_name="+")

    class Meta:
        ordering = ["-published"]


class SettingChange(models.Model):
    """One change an organizer made to a competition's settings in the browser
    (``bundles/configure.py``), or a bundle load: who, when, what. Append-only;
    shown on the Access page."""
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="setting_changes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                             blank=True, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    setting = models.CharField(max_length=40, help_text="visibility, terms, page:rules, …")
    change = models.CharField(max_length=500, help_text="what changed, in words")

    class Meta:
        ordering = ["-at", "-id"]
