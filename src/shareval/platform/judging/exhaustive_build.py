"""Building an ``exhaustive`` (recall) campaign on a ``kbp-relations`` dataset.

Spec 002 samples the corpus: ``n`` documents are drawn uniformly (seeded) from
every document of the reference, whether or not a team output anything for
them. One item per document (``drawn_for = recall``, key and doc = its title)
whose payload is what the annotation page needs: the tokens and their
character offsets, the relation inventory, and as ``suggestions`` the pooled
relation mentions of every team's leaderboard run on that document (item keys
with spans, strings and relation; never who output them).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from shareval.formats.errors import Problems
from shareval.formats.kbp import Document, KbpReference, read_reference
from shareval.formats.kbp_runs import item_key, read_run

from shareval.platform.judging.models import Item

TASK = "kbp-relations"
MAX_DOC = 200              # models.Item.doc


def check_dataset(dataset) -> None:
    task = dataset.task.task_name
    if task != TASK:
        raise ValueError(f"exhaustive relation annotation needs a {TASK} dataset (documents "
                         f"and a relation inventory); {dataset.slug!r} is a {task} dataset")


def _mtime(path: Path) -> float:
    return max([path.stat().st_mtime] + [p.stat().st_mtime for p in path.glob("*.json")]) \
        if path.is_dir() else path.stat().st_mtime


@lru_cache(maxsize=4)
def _reference(path: str, mtime: float) -> KbpReference:
    problems = Problems()
    ref = read_reference(path, problems)
    if ref is None or problems.items:
        raise ValueError(f"the dataset's reference does not load: "
                         f"{problems.items[0] if problems.items else 'unreadable'}")
    return ref


def reference(dataset) -> KbpReference:
    """The dataset's documents and relations (read once per file version)."""
    check_dataset(dataset)
    path = dataset.reference_file
    if path is None or not path.exists():
        raise ValueError(f"dataset {dataset.slug!r} has no reference: no documents to annotate")
    return _reference(str(path), _mtime(path))


@lru_cache(maxsize=64)
def _mentions(path: str, mtime: float, ref_path: str, ref_mtime: float
              ) -> dict[str, dict[str, dict]]:
    run = read_run(path, Problems(), _reference(ref_path, ref_mtime))
    out: dict[str, dict[str, dict]] = {}
    for p in run.predictions if run else []:
        out.setdefault(p.doc, {})[item_key(p.doc, p.subject, p.relation, p.object)] = {
            "subject": list(p.subject), "subject_text": p.subject_text,
            "relation": p.relation, "object": list(p.object), "object_text": p.object_text}
    return out


def run_mentions(dataset, path) -> dict[str, dict[str, dict]]:
    """A run's relation mentions: document -> item key -> spans, strings and relation
    (a scored run: already valid; read once per file version)."""
    reference(dataset)
    ref = dataset.reference_file
    return _mentions(str(path), Path(path).stat().st_mtime, str(ref), _mtime(ref))


def document_payload(doc: Document, relations: dict[str, str], pooled: dict[str, dict]) -> dict:
    sugg = [{"key": k, "subject": m["subject"], "subject_text": m["subject_text"],
             "relation": m["relation"], "label": relations.get(m["relation"], m["relation"]),
             "object": m["object"], "object_text": m["object_text"]}
            for k, m in pooled.items()]
    sugg.sort(key=lambda s: (s["subject"], s["object"], s["relation"]))
    return {"title": doc.title, "sentences": doc.sentences, "starts": doc.token_starts,
            "relations": relations, "suggestions": sugg,
            "view": {"kind": "kbp_document", "title": doc.title,
                     "text": f"every relation stated in “{doc.title}”"}}


def build(campaign, runs: dict, n: int, seed: int = 0) -> int:
    """``runs``: team -> its leaderboard run (build.team_runs)."""
    ref = reference(campaign.dataset)
    titles = sorted(ref.documents)
    rng = np.random.default_rng(seed)
    pick = sorted(rng.choice(len(titles), size=min(n, len(titles)), replace=False)) \
        if titles else []
    runs = {team: run_mentions(campaign.dataset, s.path) for team, s in runs.items()}
    items = []
    for i in pick:
        doc = ref.documents[titles[i]]
        if len(doc.title) > MAX_DOC:
            raise ValueError(f"document title longer than {MAX_DOC} characters: "
                             f"{doc.title[:60]!r}…")
        pooled, teams = {}, []
        for team, mentions in sorted(runs.items()):
            mine = mentions.get(doc.title, {})
            pooled.update(mine)
            if mine:
                teams.append(team)
        items.append(Item(campaign=campaign, key=doc.title, doc=doc.title, drawn_for="recall",
                          payload=document_payload(doc, ref.relations, pooled),
                          inclusion=len(pick) / len(titles), submissions=teams))
    Item.objects.bulk_create(items, ignore_conflicts=True)
    return len(items)
