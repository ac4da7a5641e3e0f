"""A kbp-relations competition written by hand for the automatic-assessment tests:
ten documents "NameI Surname was born in TownI . She lives in CityI .", whose
gold says place of birth (P19) and residence (P551) for both mentions of the
person; runs made of chosen true and false relation mentions, so every team's
true precision is known; simulated judges answer from the gold."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml

from shareval.formats.kbp import layout_text
from shareval.formats.kbp_runs import parse_item_key

from ..factories import Upload

DOCS = 10
RELATIONS = {"P19": "place of birth", "P551": "residence", "P17": "country"}
HEADER = "doc_id\tsubject\tsubject_start\tsubject_end\trelation\tobject\tobject_start\t" \
         "object_end\n"


def _m(sent, start, end, name):
    return {"sent_id": sent, "pos": [start, end], "name": name, "type": "PER"}


def documents(labels: bool = True) -> list[dict]:
    out = []
    for i in range(DOCS):
        out.append({"title": f"Doc {i}",
                    "sents": [[f"Name{i}", "Surname", "was", "born", "in", f"Town{i}", "."],
                              ["She", "lives", "in", f"City{i}", "."]],
                    "vertexSet": [[_m(0, 0, 2, f"Name{i} Surname"), _m(1, 0, 1, "She")],
                                  [_m(0, 5, 6, f"Town{i}")], [_m(1, 3, 4, f"City{i}")]],
                    "labels": [{"h": 0, "t": 1, "r": "P19"}, {"h": 0, "t": 2, "r": "P551"}]
                    if labels else []})
    return out


def _spans(i: int) -> dict[str, tuple[str, int, int]]:
    """Mention name -> (text, start, end) in document i's text."""
    text, starts = layout_text(documents()[i]["sents"])
    def span(sent, a, b):
        s = starts[sent][a]
        e = starts[sent][b - 1] + len(documents()[i]["sents"][sent][b - 1])
        return text[s:e], s, e
    return {"person": span(0, 0, 2), "she": span(1, 0, 1), "town": span(0, 5, 6),
            "city": span(1, 3, 4)}


# every candidate mention: (subject, relation, object, true?)
CANDIDATES = [("person", "P19", "town", True), ("she", "P19", "town", True),
              ("person", "P551", "city", True), ("she", "P551", "city", True),
              ("person", "P551", "town", False), ("she", "P551", "town", False),
              ("person", "P19", "city", False), ("she", "P19", "city", False),
              ("town", "P17", "city", False)]


def line(i: int, subj: str, rel: str, obj: str) -> str:
    sp = _spans(i)
    (st, s0, s1), (ot, o0, o1) = sp[subj], sp[obj]
    return f"Doc {i}\t{st}\t{s0}\t{s1}\t{rel}\t{ot}\t{o0}\t{o1}"


def run(true: int, false: int, docs=range(DOCS)) -> str:
    """``true`` true and ``false`` false mentions per listed document."""
    rows = []
    for i in docs:
        rows += [line(i, s, r, o) for s, r, o, ok in CANDIDATES if ok][:true]
        rows += [line(i, s, r, o) for s, r, o, ok in CANDIDATES if not ok][:false]
    return HEADER + "".join(r + "\n" for r in rows)


def truth_set() -> set[tuple]:
    out = set()
    for i in range(DOCS):
        sp = _spans(i)
        for s, r, o, ok in CANDIDATES:
            if ok:
                out.add((f"Doc {i}", sp[s][1], sp[s][2], r, sp[o][1], sp[o][2]))
    return out


TRUTH = truth_set()


def is_true(key: str) -> bool:
    """An item key in the contract's form (doc|s0-s1|REL|o0-o1) or a run line's."""
    parsed = parse_item_key(key)
    if parsed is not None:
        doc, (s0, s1), rel, (o0, o1) = parsed
        return (doc, s0, s1, rel, o0, o1) in TRUTH
    c = key.split("|")
    return (c[0], int(c[2]), int(c[3]), c[4], int(c[6]), int(c[7])) in TRUTH


def answer(item) -> dict:
    return {"answers": {"correct": "yes" if is_true(item.key) else "no"}}


CHAIN = {"chains": {"default": [{"id": "correct", "text": "Does the document say it?"}]},
         "gold_every": 0, "hourly_rate": 12.0, "seconds_per_judgment": 5.0,
         "auto": True, "pilot": 12, "half_width": 0.15}


def make_bundle(root: Path, metric: str = "judged_f1", labels: bool = True) -> Path:
    now = dt.datetime.now(dt.timezone.utc)
    iso = lambda t: t.replace(microsecond=0).isoformat()        # noqa: E731
    for name in ("dev", "eval"):
        folder = root / f"ref-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "documents.json").write_text(json.dumps(documents(labels)))
        (folder / "relations.json").write_text(json.dumps(RELATIONS))
    b = {"slug": "kbp", "title": "KBP", "time_zone": "UTC",
         "tasks": [{"slug": "rel", "task": "kbp-relations", "primary_metric": metric}],
         "phases": [
             {"slug": "dev", "title": "Development", "start": iso(now - dt.timedelta(days=3)),
              "end": iso(now + dt.timedelta(days=30)),
              "datasets": [{"slug": "dev", "task": "rel", "reference": "ref-dev"}]},
             {"slug": "eval", "title": "Evaluation", "start": iso(now - dt.timedelta(days=1)),
              "end": iso(now + dt.timedelta(days=7)), "blind": True,
              "datasets": [{"slug": "eval", "task": "rel", "reference": "ref-eval"}]}]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


def make_world(tmp_path, **kw) -> dict:
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123")
             for n in ("alice", "bob", "dave", "judge")}
    comp, _ = load_bundle(make_bundle(tmp_path / "bundle", **kw), org)
    teams = {}
    for name, lead in (("Team A", "alice"), ("Team B", "bob"), ("Team C", "dave")):
        t = Team.objects.create(competition=comp, name=name, lead=users[lead])
        Membership.objects.create(team=t, user=users[lead], status=Membership.APPROVED)
        teams[name] = t
    ds = {d.slug: d for ph in comp.phases.all() for d in ph.datasets.all()}
    return {"comp": comp, "org": org, "users": users, "teams": teams, "ds": ds}


def upload(w, team: str, text: str, ds: str = "dev", name: str = "run.tsv", **kw):
    from shareval.platform.submissions import service
    lead = {"Team A": "alice", "Team B": "bob", "Team C": "dave"}[team]
    return service.submit(w["users"][lead], w["teams"][team], w["ds"][ds],
                          Upload(name, text), **kw)
