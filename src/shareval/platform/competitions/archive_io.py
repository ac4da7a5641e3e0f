"""The pieces every part of a competition archive shares: rows to JSON and back,
users by name, the list of files to pack, and the rule for every path a row
holds.

``bundles/archive.py`` writes and reads the archive; each app that keeps its own rows
(``annotation/archive.py``, ``coderuns/archive.py``, ``access/archive.py``)
exports and imports them with these helpers, so one rule holds everywhere:
a row is dumped as its concrete non-relation fields, relations are written by
name (user names, team names, phase and dataset slugs) and resolved on import.

The path rule: a competition's files live in its own folders, ``<slug>/`` under
the private and the public folder (the bundle loader names them so), and its
runs' uploads and results are its own. An imported row may name nothing else
(:class:`OwnFolders`), and an export packs nothing else (:class:`Files`), so
an archive can neither read another competition's hidden files nor write into
them.
"""
from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models

from shareval.formats.errors import InvalidInput, Problem


log = logging.getLogger("shareval.competitions")


def dump(obj, skip=()) -> dict:
    out = {}
    for f in obj._meta.concrete_fields:
        if f.primary_key or f.is_relation or f.name in skip:
            continue
        v = getattr(obj, f.name)
        out[f.name] = v.isoformat() if hasattr(v, "isoformat") else v
    return out


def load(model, data: dict) -> dict:
    """Field values from a dump, converted by each field (dates, UUIDs)."""
    out = {}
    for f in model._meta.concrete_fields:
        if f.name in data and not f.is_relation and not f.primary_key:
            out[f.name] = f.to_python(data[f.name]) if not isinstance(f, models.JSONField) \
                else data[f.name]
    return out


def user_name(u):
    return u.get_username() if u is not None else None


class Users:
    """User names to users of this server, created (without a usable password)
    when missing; ``profiles`` (archive format 2) gives their e-mail and names."""

    def __init__(self, profiles: dict | None = None):
        self.model, self.cache, self.created = get_user_model(), {}, []
        self.profiles = profiles or {}

    def __call__(self, name):
        if name is None:
            return None
        if name not in self.cache:
            u = self.model.objects.filter(username=name).first()
            if u is None:
                p = self.profiles.get(name) or {}
                u = self.model(username=name, email=str(p.get("email") or "")[:254],
                               first_name=str(p.get("first_name") or "")[:150],
                               last_name=str(p.get("last_name") or "")[:150])
                u.set_unusable_password()
                u.save()
                self.created.append(name)
            self.cache[name] = u
        return self.cache[name]


def profile(u) -> dict:
    return {"email": u.email, "first_name": u.first_name, "last_name": u.last_name}


def own_folder(kind: str, slug: str, rel: str) -> bool:
    """Whether ``rel`` (relative to the ``kind`` folder: "private" or "public") lies
    inside the competition's own folder ``<slug>/`` there, links resolved."""
    base = Path(getattr(settings, FOLDERS[kind])).resolve()
    target = (base / rel).resolve()
    return target != base / slug and target.is_relative_to(base / slug)


FOLDERS = {"private": "PRIVATE_DIR", "public": "PUBLIC_DIR"}


class Files(list):
    """(name in the archive, file or folder on disk) pairs of one competition's
    export; a path outside its own folders is left out (and logged), whatever a
    row says."""

    def __init__(self, slug: str):
        super().__init__()
        self.slug = slug

    def private(self, rel: str) -> None:
        self._own("private", rel)

    def public(self, rel: str) -> None:
        self._own("public", rel)

    def _own(self, kind: str, rel: str) -> None:
        if not rel:
            return
        if not own_folder(kind, self.slug, rel):
            log.error("export of %s: %s path %r is outside its folder; not exported",
                      self.slug, kind, rel)
            return
        self.append((f"files/{kind}/{rel}", Path(getattr(settings, FOLDERS[kind])) / rel))

    def upload(self, stored_name: str) -> None:
        if stored_name and Path(stored_name).name == stored_name:
            self.append((f"files/uploads/{stored_name}", Path(settings.UPLOAD_DIR) / stored_name))


class OwnFolders:
    """Checks of an imported document's paths against the new competition ``slug``:
    each raises InvalidInput naming the field and the path."""

    def __init__(self, slug: str):
        self.slug = slug

    def private(self, where: str, rel: str) -> None:
        self._own("private", where, rel)

    def public(self, where: str, rel: str) -> None:
        self._own("public", where, rel)

    def _own(self, kind: str, where: str, rel) -> None:
        if rel in (None, ""):
            return
        if not isinstance(rel, str) or not own_folder(kind, self.slug, rel):
            raise InvalidInput([Problem("competition.json", None, where,
                                   f"{rel!r} is outside this competition's own {kind} "
                                   f"folder {self.slug}/; nothing was imported")])


def plain_name(where: str, name: str) -> None:
    if name and (not isinstance(name, str) or Path(name).name != name or name in (".", "..")):
        raise InvalidInput([Problem("competition.json", None, where,
                               f"{name!r} is not a plain file name")])
