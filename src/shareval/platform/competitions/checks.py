"""Checks of a competition's settings shared by the bundle (``bundle.py``,
``bundles/access_section.py``) and the organizers' settings forms (``forms.py``), so a
value refused in ``bundle.yaml`` is refused in the browser with the same words.

Each check returns the problem as text (None when the value is fine); the
bundle reader files it under the key's path (``bundle.visibility``), a form
beside the field.
"""
from __future__ import annotations

import re
from pathlib import Path

from shareval.tasks.catalogs import CATALOG_KINDS as TASK_KINDS, read_catalog

from shareval.platform.competitions.models import Competition

# Slugs become URL parts and folder names under the server's home: lower-case
# letters, digits and inner hyphens only, so none can be "..", empty or hidden.
SLUG = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?")
# A data file's name is the last part of its download URL and its file name
# under PRIVATE_DIR: no folder, no leading dot.
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,199}")

CHOICES = {"visibility": (Competition.PUBLIC, Competition.UNLISTED, Competition.PRIVATE),
           "registration": ("open", "approval"),
           "downloads": (Competition.OPEN, Competition.PARTICIPANTS)}
CATALOG_KINDS = ("dataset", "variable")


def choice(key: str, value) -> str | None:
    """``visibility``, ``registration`` or ``downloads``: one of its values."""
    return None if str(value) in CHOICES[key] else " or ".join(CHOICES[key])


def positive_or_none(value) -> str | None:
    """``max_team_size`` (None: no limit) and a page's ``version:`` (None: counted by
    the server): None or a positive integer."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return "a positive integer"
    return None


def slug(value: str) -> str | None:
    if not SLUG.fullmatch(str(value)):
        return (f"{value!r} is not a slug: use 1-50 lower-case letters, digits and inner "
                "hyphens")
    return None


def data_name(value: str) -> str | None:
    if not FILE_NAME.fullmatch(str(value)):
        return (f"{value!r} is not a file name: letters, digits, '.', '_', '+' and '-', "
                "not starting with a dot")
    return None


def data_file(path: Path) -> str | None:
    if not path.is_file():
        return "must be a file (pack a folder as .tgz or .zip)"
    return None


def catalog_kind(value: str) -> str | None:
    return None if value in CATALOG_KINDS else "dataset or variable"


def catalog_file(path: Path) -> str | None:
    """A catalog must read as a non-empty list of ids."""
    try:
        if not read_catalog(path):
            return "holds no ids"
    except (ValueError, UnicodeDecodeError) as e:
        return f"not a list of ids: {e}"
    return None


def phase_catalog(task_names) -> str | None:
    """A phase may check a catalog only if one of its tasks names catalog ids."""
    kinds = {TASK_KINDS.get(t) for t in task_names if t}
    if kinds == {None}:
        return ("none of this phase's tasks names catalog ids (tasks that do: "
                f"{', '.join(sorted(TASK_KINDS))})")
    return None
