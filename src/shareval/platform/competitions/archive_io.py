"""The pieces every part of a competition archive shares: rows to JSON and back,
users by name, and the list of files to pack.

``archive.py`` writes and reads the archive; each app that keeps its own rows
(``annotation/archive.py``, ``coderuns/archive.py``, ``archive_access.py``)
exports and imports them with these helpers, so one rule holds everywhere:
a row is dumped as its concrete non-relation fields, relations are written by
name (user names, team names, phase and dataset slugs) and resolved on import.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models

from shareval.formats.errors import InvalidInput

from .bundle import _p, inside


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


class Files(list):
    """(name in the archive, file or folder on disk) pairs."""

    def private(self, rel: str) -> None:
        if rel:
            self.append((f"files/private/{rel}", Path(settings.PRIVATE_DIR) / rel))

    def upload(self, stored_name: str) -> None:
        if stored_name:
            self.append((f"files/uploads/{stored_name}", Path(settings.UPLOAD_DIR) / stored_name))


def private_path(rel: str) -> None:
    """Refused unless ``rel`` stays inside PRIVATE_DIR."""
    if rel:
        inside(Path(settings.PRIVATE_DIR), rel)


def plain_name(where: str, name: str) -> None:
    if name and Path(name).name != name:
        raise InvalidInput([_p("competition.json", None, where,
                               f"{name!r} is not a plain file name")])
