"""The organizers' settings forms (the Settings page, ``bundles/views.py``).

Every value goes through the check the bundle applies to the same key
(``checks.py``), so the browser refuses what ``bundle.yaml`` refuses, in the
same words; a refused form is shown again with the problem beside its field and
every value as typed. Writing is ``configure.py``'s.
"""
from __future__ import annotations

from pathlib import Path

from django import forms

from shareval.platform.competitions import checks
from shareval.platform.bundles import configure
from shareval.platform.competitions.models.access import Page
from shareval.platform.competitions.models import Competition

TEXT_LIMIT = 100_000


def _check(why: str | None):
    if why:
        raise forms.ValidationError(why)


class VisibilityForm(forms.Form):
    visibility = forms.CharField()

    def clean_visibility(self):
        v = self.cleaned_data["visibility"]
        _check(checks.choice("visibility", v))
        return v


class _DocumentForm(forms.Form):
    """A mode plus the text of a versioned page (terms or licence)."""
    title = forms.CharField(max_length=200, required=False)
    text = forms.CharField(max_length=TEXT_LIMIT, required=False, strip=False)


class RegistrationForm(_DocumentForm):
    registration = forms.CharField()

    def clean_registration(self):
        v = self.cleaned_data["registration"]
        _check(checks.choice("registration", v))
        return v


class DownloadsForm(_DocumentForm):
    downloads = forms.CharField()

    def clean_downloads(self):
        v = self.cleaned_data["downloads"]
        _check(checks.choice("downloads", v))
        return v


class TeamsForm(forms.Form):
    team_approval = forms.BooleanField(required=False)
    max_team_size = forms.CharField(required=False, max_length=12)

    def clean_max_team_size(self):
        text = self.cleaned_data["max_team_size"].strip()
        if not text:
            return None
        try:
            value = int(text)
        except ValueError:
            value = text
        _check(checks.positive_or_none(value))
        return value


class PageForm(forms.Form):
    slug = forms.CharField(max_length=50)
    title = forms.CharField(max_length=200)
    body = forms.CharField(max_length=TEXT_LIMIT, required=False, strip=False)

    def __init__(self, comp: Competition, page: Page | None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.comp, self.page = comp, page
        if page is not None:
            self.fields["slug"].required = False

    def clean_slug(self):
        if self.page is not None:             # the slug is the page's address: kept
            return self.page.slug
        v = self.cleaned_data["slug"]
        _check(checks.slug(v))
        if Page.objects.filter(competition=self.comp, slug=v).exists():
            raise forms.ValidationError(f"there is already a page {v!r}: edit it instead")
        return v


class _UploadForm(forms.Form):
    """Spools the upload to a temporary folder so the bundle's file checks can read
    it; the view calls :meth:`cleanup` when done."""
    file = forms.FileField()
    tmp: str | None = None
    path: Path | None = None

    def spool(self, name: str) -> Path:
        self.path, self.tmp = configure.upload_to_temp(self.cleaned_data["file"], name)
        return self.path

    def cleanup(self):
        if self.tmp:
            configure.remove_temp(self.tmp)


class DataFileForm(_UploadForm):
    name = forms.CharField(max_length=200, required=False)
    description = forms.CharField(max_length=500, required=False)

    def clean(self):
        data = super().clean()
        up = data.get("file")
        if up is None:
            return data
        name = (data.get("name") or "").strip() or Path(up.name).name
        why = checks.data_name(name)
        if why:
            self.add_error("name" if data.get("name") else "file", why)
            return data
        data["name"] = name
        why = checks.data_file(self.spool(name))
        if why:
            self.add_error("file", why)
        return data


class CatalogForm(_UploadForm):
    slug = forms.CharField(max_length=50)
    kind = forms.CharField(initial="dataset")
    move_phases = forms.BooleanField(required=False, initial=True)
    phases = forms.MultipleChoiceField(required=False)

    def __init__(self, comp: Competition, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.comp = comp
        self.fields["phases"].choices = [(p.slug, p.title) for p in comp.phases.all()]

    def clean_phases(self):
        """The phases to check against the new version: each must have a task that
        names catalog ids, as ``phases[].catalog`` in the bundle."""
        chosen = list(self.comp.phases.filter(slug__in=self.cleaned_data["phases"])
                      .prefetch_related("datasets__task"))
        for p in chosen:
            why = checks.phase_catalog({d.task.task_name for d in p.datasets.all()})
            if why:
                raise forms.ValidationError(f"{p.title}: {why}")
        return chosen

    def clean_slug(self):
        v = self.cleaned_data["slug"].strip()
        _check(checks.slug(v))
        return v

    def clean_kind(self):
        v = self.cleaned_data["kind"]
        _check(checks.catalog_kind(v))
        return v

    def clean(self):
        data = super().clean()
        up = data.get("file")
        if up is None:
            return data
        name = Path(up.name).name
        if checks.data_name(name):
            name = "catalog.txt"
        why = checks.catalog_file(self.spool(name))
        if why:
            self.add_error("file", why)
        return data
