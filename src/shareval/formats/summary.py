"""MATERIAL E2E summary metadata (plan 7.2.4.2-7.2.4.5) and judges' decisions
(one row per query, document, system and judge: judgments are keyed by system, since
two systems' summaries of one document are judged apart).

The metadata JSON is checked against the plan's schema (7.2.4.3): required
fields, no other fields, types, patterns, a date-time, 1 to 100 list items and
at most 100 words in total (section 3). The team list is the pack's
``teams`` setting; without one, any alphanumeric team id is accepted (the
plan's 2018 list is not hard-coded).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .errors import Problems
from .table import read_table

REQUIRED = ("team_id", "sys_label", "uuid", "query_id", "document_id", "run_name",
            "run_date_time", "image_filename", "content_list")
OPTIONAL = ("instructions",)
ALNUM = re.compile(r"^[a-zA-Z0-9]+$")
UUID = re.compile(r"^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$")
SYSTEM = re.compile(r"^[a-zA-Z0-9]+\.[a-zA-Z0-9]+$")     # <TeamID>.<SysLabel>
IMAGE_NAME = re.compile(r"\.(jpg|png)$")
MAX_WORDS = 100


def metadata_name(team: str, sys_label: str, query_id: str, doc_id: str) -> str:
    return f"{team}.{sys_label}.{query_id}.{doc_id}.json"


def parse_metadata_name(name: str, query_id: str, doc_id: str) -> tuple[str, str] | None:
    """(team, sys_label) of ``<TeamID>.<SysLabel>.<QueryID>.<DocID>.json``, else None."""
    suffix = f".{query_id}.{doc_id}.json"
    if not name.endswith(suffix):
        return None
    head = name[: -len(suffix)].split(".")
    if len(head) != 2 or not all(ALNUM.match(h) for h in head):
        return None
    return head[0], head[1]


def _datetime(text: str) -> bool:
    """RFC 3339 date-time: a date, 'T', a time and a zone (Z or +hh:mm)."""
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return True


def check_metadata(obj, expected: dict, teams: list[str] | None) -> list[tuple[str, str]]:
    """(field, message) for every way ``obj`` breaks the schema or the expectations.

    ``expected``: query_id, document_id, team_id, sys_label and the basename
    (metadata file name without .json) the image must be named after.
    """
    if not isinstance(obj, dict):
        return [("json", "expected a JSON object")]
    out = []
    for key in REQUIRED:
        if key not in obj:
            out.append((key, "missing (required)"))
    for key in obj:
        if key not in REQUIRED and key not in OPTIONAL:
            out.append((key, "not allowed (the schema has additionalProperties: false)"))
    strings = ("team_id", "sys_label", "uuid", "query_id", "document_id", "run_name",
               "run_date_time", "image_filename")
    for key in strings:
        if key in obj and not isinstance(obj[key], str):
            out.append((key, f"must be a string, found {type(obj[key]).__name__}"))
    get = {k: obj[k] for k in strings if isinstance(obj.get(k), str)}
    if "team_id" in get:
        if teams and get["team_id"] not in teams:
            out.append(("team_id", f"{get['team_id']!r} is not one of {', '.join(teams)}"))
        elif not teams and not ALNUM.match(get["team_id"]):
            out.append(("team_id", "must be alphanumeric"))
        elif get["team_id"] != expected["team_id"]:
            out.append(("team_id", f"{get['team_id']!r} differs from the file name's "
                                   f"{expected['team_id']!r}"))
    if "sys_label" in get:
        if not ALNUM.match(get["sys_label"]):
            out.append(("sys_label", "must match ^[a-zA-Z0-9]+$"))
        elif get["sys_label"] != expected["sys_label"]:
            out.append(("sys_label", f"{get['sys_label']!r} differs from the file name's "
                                     f"{expected['sys_label']!r}"))
    if "uuid" in get and not UUID.match(get["uuid"]):
        out.append(("uuid", f"{get['uuid']!r} is not a UUID"))
    for key in ("query_id", "document_id"):
        if key in get and get[key] != expected[key]:
            out.append((key, f"{get[key]!r} but the line is for {expected[key]!r}"))
    if "run_date_time" in get and not _datetime(get["run_date_time"]):
        out.append(("run_date_time", f"{get['run_date_time']!r} is not an ISO-8601/RFC-3339 "
                                     f"date-time (e.g. 2018-03-27T13:51:00-05:00)"))
    if "image_filename" in get:
        name = get["image_filename"]
        if not IMAGE_NAME.search(name):
            out.append(("image_filename", f"{name!r} must end in .jpg or .png"))
        elif name.rsplit(".", 1)[0] != expected["basename"]:
            out.append(("image_filename", f"{name!r} must be named after the metadata file: "
                                          f"{expected['basename']}.jpg or .png"))
    if "content_list" in obj:
        items = obj["content_list"]
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            out.append(("content_list", "must be a list of strings"))
        elif not 1 <= len(items) <= 100:
            out.append(("content_list", f"must hold 1 to 100 items, found {len(items)}"))
        else:
            words = sum(len(x.split()) for x in items)
            if words > MAX_WORDS:
                out.append(("content_list", f"{words} words: a summary is limited to "
                                            f"{MAX_WORDS} words (plan section 3)"))
    if "instructions" in obj:
        ins = obj["instructions"]
        ok = isinstance(ins, str) or (isinstance(ins, dict) and
                                      all(isinstance(v, str) for v in ins.values()))
        if not ok:
            out.append(("instructions", "must be a string or an object of strings"))
    return out


JUDGMENT_HEADER = ("query_id", "doc_id", "system", "judge", "relevant")


@dataclass
class JudgmentFile:
    """A judgments file read: votes per system (``None``: the 4-column form, whose rows
    apply to every system), then per (query, document)."""
    path: Path
    has_system: bool
    votes: dict[str | None, dict[tuple[str, str], list[bool]]]

    def systems(self) -> list[str]:
        return sorted(s for s in self.votes if s is not None)

    def for_system(self, system: str | None) -> dict[tuple[str, str], list[bool]] | None:
        """The votes that score ``system``; None when the file has a system column and
        no row for it (or no system is named)."""
        if not self.has_system:
            return self.votes.get(None, {})
        return self.votes.get(system) if system else None


def read_judgment_file(path: Path, problems: Problems) -> JudgmentFile | None:
    """Judges' decisions on summaries: header query_id, doc_id, system, judge, relevant
    (Y/N); ``system`` is <TeamID>.<SysLabel>. Without the system column (the older
    4-column form) every row applies to every system."""
    table = read_table(path, problems, ("query_id", "doc_id", "judge", "relevant"),
                       aliases={"doc_id": ("document_id",), "relevant": ("decision", "answer")})
    if table is None:
        return None
    header, rows = table
    has_system = "system" in header
    out: dict[str | None, dict[tuple[str, str], list[bool]]] = {}
    seen: dict[tuple, int] = {}
    yes, no = {"y", "yes", "1", "true", "relevant"}, {"n", "no", "0", "false", "not relevant"}
    for line, row in rows:
        key = (row["query_id"].strip(), row["doc_id"].strip())
        system = row["system"].strip() if has_system else None
        judge = row["judge"].strip()
        value = row["relevant"].strip().lower()
        if has_system and not SYSTEM.match(system):
            problems.add(path, line, "system", f"{row['system']!r} is not <TeamID>.<SysLabel> "
                                               f"(letters and digits, one point)")
            continue
        if value not in yes | no:
            problems.add(path, line, "relevant", f"expected Y or N, found {row['relevant']!r}")
            continue
        if (system, *key, judge) in seen:
            problems.add(path, line, "judge", f"judge {judge!r} judged this pair twice "
                                              f"(first at line {seen[(system, *key, judge)]})")
            continue
        seen[(system, *key, judge)] = line
        out.setdefault(system, {}).setdefault(key, []).append(value in yes)
    return JudgmentFile(Path(path), has_system, out)


def read_judgments(path: Path, problems: Problems, system: str | None = None
                   ) -> dict[tuple[str, str], list[bool]] | None:
    """The votes per (query, document) that score ``system``: every row of a 4-column
    file, only the system's rows of a file with a system column (a problem naming the
    systems the file has when there is none)."""
    f = read_judgment_file(path, problems)
    if f is None:
        return None
    votes = f.for_system(system)
    if votes is None:
        has = ", ".join(f.systems()) or "none"
        if system:
            problems.add(path, None, "system", f"no judgment for system {system}; the file "
                                               f"has systems {has}")
        else:
            problems.add(path, None, "system", f"the file has a system column (systems "
                                               f"{has}): name the system to score")
    return votes
