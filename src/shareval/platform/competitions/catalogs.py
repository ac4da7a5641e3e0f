"""Catalogs and vocabularies: versioned lists of ids a phase's submissions must use.

A bundle declares them under ``catalogs:`` (slug, kind, file); loading a file
whose content changed adds a new version and keeps the old ones, so a phase
names exactly the version it checks against (``phases[].catalog: slug`` takes
the newest at load time, ``slug@2`` a given one). The check itself runs in the
validation child (``tasks/catalogs.py``): a submission naming an id that is not
in the catalog is refused with the unknown ids listed.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from shareval.tasks.catalogs import read_catalog

from shareval.platform.competitions.models.access import Catalog, PhaseCatalog


def phase_catalog(dataset) -> tuple[str, str] | None:
    """(file, label) of the catalog the dataset's phase checks, or None."""
    from shareval.tasks.catalogs import CATALOG_KINDS
    if dataset.task.task_name not in CATALOG_KINDS:
        return None
    use = PhaseCatalog.objects.filter(phase=dataset.phase).select_related("catalog").first()
    if use is None:
        return None
    cat = use.catalog
    return str(Path(settings.PRIVATE_DIR) / cat.path), f"{cat.slug} v{cat.version}"


def store(comp, slug: str, kind: str, src: Path, digest: str, copy) -> Catalog:
    """The catalog version holding ``src``: the newest one if its digest matches,
    else a new version (``copy(src, rel)`` stores the file under PRIVATE_DIR)."""
    newest = Catalog.objects.filter(competition=comp, slug=slug).order_by("-version").first()
    if newest is not None and newest.digest == digest and newest.kind == kind:
        return newest
    version = newest.version + 1 if newest else 1
    rel = f"{comp.slug}/catalogs/{slug}/v{version}/{src.name}"
    copy(src, rel)
    return Catalog.objects.create(competition=comp, slug=slug, kind=kind, version=version,
                                  path=rel, count=len(read_catalog(src)), digest=digest)
