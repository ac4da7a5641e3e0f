"""The bundle's release dates and audiences of files (read beside ``loader.py``).

Each entry of a dataset's ``public:`` and of the top-level ``data:`` is a path
(released at once to every registered participant, as before) or a mapping::

    public:
      - inputs/queries.tsv
      - {file: packs/eval1.tgz, release: 2018-05-14T00:00, audience: registered}
      - {file: refs/open-qrels.tsv, release: 2018-08-14, audience: phase}
      - {file: refs/holdout.tgz, audience: {phase: finalists}}     # or phase:finalists
    data:
      - {file: data/texts.zip, description: texts, release: 2019-01-10}

``release`` is an ISO date or date-time in the competition's ``time_zone``
unless it carries an offset; ``audience`` is ``registered`` (default),
``phase`` (the teams admitted to the dataset's own phase; not for ``data:``) or
``phase:<slug>`` / ``{phase: <slug>}`` (the teams admitted to that phase). The
rule that reads them is ``access/releases.py``.
"""
from __future__ import annotations

from shareval.platform.competitions.models.core import AUDIENCE_PHASE, AUDIENCE_REGISTERED

LINE = "__line__"                 # loader.LINE: the line each mapping was read from
PUBLIC_KEYS = ("file", "release", "audience")
DATA_KEYS = ("file", "name", "description", "release", "audience")


def phase_slugs(doc: dict) -> set[str]:
    return {str(ph["slug"]) for ph in doc.get("phases") or []
            if isinstance(ph, dict) and ph.get("slug")}


def read_audience(r, node: dict, where: str, phases: set[str], own_phase: bool) -> str:
    """``registered``, ``phase`` or ``phase:<slug>``; problems go to ``r`` with the line."""
    v = node.get("audience", AUDIENCE_REGISTERED)
    if isinstance(v, dict):
        extra = sorted(str(k) for k in v if k not in ("phase", LINE))
        if extra or not v.get("phase"):
            r.err(node, f"{where}.audience", "a mapping {phase: <slug>} names one phase")
            return AUDIENCE_REGISTERED
        v = f"{AUDIENCE_PHASE}:{v['phase']}"
    v = str(v).strip()
    if v == AUDIENCE_REGISTERED:
        return v
    if v == AUDIENCE_PHASE:
        if own_phase:
            return v
        r.err(node, f"{where}.audience", "phase alone names no phase here: use "
                                         "phase:<slug> or registered")
        return AUDIENCE_REGISTERED
    kind, _, slug = v.partition(":")
    if kind != AUDIENCE_PHASE or not slug:
        r.err(node, f"{where}.audience", f"unknown audience {v!r}: registered, "
                                         + ("phase, " if own_phase else "") + "phase:<slug>")
        return AUDIENCE_REGISTERED
    if slug not in phases:
        r.err(node, f"{where}.audience", f"no phase {slug!r} in this bundle (phases: "
                                         f"{', '.join(sorted(phases)) or 'none'})")
        return AUDIENCE_REGISTERED
    return v


def read_entry(r, entry, where: str, line, phases: set[str], own_phase: bool,
               keys=PUBLIC_KEYS) -> dict | None:
    """One entry as a mapping with ``release`` (aware datetime or None) and
    ``audience`` checked; None when it is neither a path nor a mapping.
    ``line``: where a plain path sits (its list's mapping line)."""
    if isinstance(entry, (str, int, float)) and not isinstance(entry, bool):
        return {"file": str(entry), LINE: line, "release": None,
                "audience": AUDIENCE_REGISTERED}
    if not isinstance(entry, dict):
        r.err({LINE: line}, where, "a path or a mapping {file, release, audience}")
        return None
    for k in entry:
        if k != LINE and k not in keys:
            r.err(entry, f"{where}.{k}", f"unknown key; known: {', '.join(keys)}")
    out = dict(entry)
    out["release"] = r.when(entry, "release", where, required=False)
    out["audience"] = read_audience(r, entry, where, phases, own_phase)
    return out
