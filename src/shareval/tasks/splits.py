"""Public/private split of one evaluation set: which units each task family splits,
and the restriction of a loaded reference and submission to one part.

A split names its private units, either as a list (``{"units": [...]}``) or as a
seeded hash fraction (``{"fraction": 0.5, "seed": 13}``): a unit is private when
``sha256("seed:unit")`` read as a number in [0, 1) is below the fraction, so the
split is fixed by the seed, independent of file order, and anyone holding the
seed and the unit ids can recompute it.

The unit of each family (docs/records.md, "Public/private split"):

- ``classification``: the item;
- ``trec``: the query (topic); qrels and run lines are kept by their query id;
- ``svident-detection``, ``svident-disambiguation``: the document (``doc_id``):
  a document's sentences stay together, in both of its languages when it has two,
  and the part's score is averaged over documents, then languages, as usual;
- ``rcc-citations``, ``rcc-mentions``: the publication (``publication_id``);
- ``material-clir``, ``material-e2e``: the query (the pack's queries.tsv and the
  run's per-query files); the E2E judgments file is read whole (only the part's
  queries are looked up in it);
- ``material-domainid``, ``material-langid``: the collection document: per
  domain or language, X1-X4 are counted over the part's documents only (a split
  by domain or language would leave two or three units).

Restricting never re-reads a file, and it equals scoring files cut to the part's
lines on the command line (tests/tasks/test_splits.py checks it for every family).
These functions are pure: the platform (``platform/submissions/splits.py``)
calls them.
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Callable

import numpy as np

from ..formats.trec_table import take_ids

Keep = Callable[[str], bool]


def private_test(split: dict) -> Keep:
    """A function telling whether a unit id is in the private part."""
    if "units" in split:
        return frozenset(str(u) for u in split["units"]).__contains__
    seed, fraction = split["seed"], float(split["fraction"])

    def hashed(unit: str) -> bool:
        h = hashlib.sha256(f"{seed}:{unit}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2 ** 64 < fraction
    return hashed


@dataclasses.dataclass(frozen=True)
class Splitter:
    unit: str                                   # what a unit is, for messages and docs
    units: Callable                             # units(reference) -> [unit id]
    restrict: Callable                          # restrict(reference, submission, keep)


# -- classification ------------------------------------------------------------

def _labels(ref, sub, keep: Keep):
    items = {i for i in ref.labels if keep(i)}
    r = dataclasses.replace(ref, labels={i: v for i, v in ref.labels.items() if i in items},
                            lines={i: v for i, v in ref.lines.items() if i in items},
                            warnings=list(ref.warnings))
    s = dataclasses.replace(sub, labels={i: v for i, v in sub.labels.items() if i in items},
                            lines={i: v for i, v in sub.lines.items() if i in items},
                            warnings=list(sub.warnings))
    return r, s


# -- trec: queries -------------------------------------------------------------

def _ids(dictionary) -> list[str]:
    return dictionary if isinstance(dictionary, list) else dictionary.to_pylist()


def _compact(codes: np.ndarray, dictionary):
    """Codes and dictionary of the kept rows, ids in order of first appearance (as in a
    file holding only those rows)."""
    uniq, first = np.unique(codes, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    remap = np.zeros(len(dictionary), dtype=np.int64)
    remap[order] = np.arange(len(order), dtype=np.int64)
    return remap[codes], take_ids(dictionary, order)


def _trec_table(t, keep: Keep):
    ok = np.fromiter((keep(q) for q in _ids(t.q_dict)), dtype=bool, count=len(t.q_dict))
    rows = ok[t.q_codes] if len(t.q_codes) else np.zeros(0, dtype=bool)
    q_codes, q_dict = _compact(t.q_codes[rows], t.q_dict)
    d_codes, d_dict = _compact(t.d_codes[rows], t.d_dict)
    out = dataclasses.replace(t, q_codes=q_codes, q_dict=q_dict, d_codes=d_codes, d_dict=d_dict,
                              d_hashes=None,
                              value=t.value[rows], tags=list(t.tags), notes=list(t.notes))
    if hasattr(t, "warnings"):
        out.warnings = list(t.warnings)
    return out


def _trec(ref, sub, keep: Keep):
    return _trec_table(ref, keep), _trec_table(sub, keep)


def _trec_units(ref) -> list[str]:
    present = np.zeros(len(ref.q_dict), dtype=bool)
    present[ref.q_codes] = True
    ids = _ids(ref.q_dict)
    return [ids[i] for i in np.flatnonzero(present).tolist()]


# -- sv-ident: documents -------------------------------------------------------

def _svident(ref, sub, keep: Keep):
    sentences = {u: s for u, s in ref.sentences.items() if keep(s.doc_id)}
    r = dataclasses.replace(ref, sentences=sentences, warnings=list(ref.warnings))
    s = dataclasses.replace(sub, values={u: v for u, v in sub.values.items() if u in sentences},
                            lines={u: v for u, v in sub.lines.items() if u in sentences},
                            warnings=list(sub.warnings))
    return r, s


def _svident_units(ref) -> list[str]:
    return list(dict.fromkeys(s.doc_id for s in ref.sentences.values()))


# -- rcc: publications ---------------------------------------------------------

def _rcc(ref, sub, keep: Keep):
    pubs = None if ref.publications is None else [p for p in ref.publications if keep(p)]
    r = dataclasses.replace(ref, records=[c for c in ref.records if keep(c.publication_id)],
                            publications=pubs, warnings=list(ref.warnings))
    s = dataclasses.replace(sub, records=[c for c in sub.records if keep(c.publication_id)],
                            warnings=list(sub.warnings))
    return r, s


def _rcc_units(ref) -> list[str]:
    if ref.publications is not None:
        return list(ref.publications)
    return list(dict.fromkeys(c.publication_id for c in ref.records))


# -- material: queries (CLIR, E2E) or documents (DomainID, LangID) ---------------

def _material_queries(pack, sub, keep: Keep):
    queries = {q: v for q, v in pack.queries.items() if keep(q)}
    rows = [k for k, q in enumerate(sub.ids) if q in queries]
    p = dataclasses.replace(pack, queries=queries)
    s = dataclasses.replace(sub, ids=[sub.ids[k] for k in rows], decision=sub.decision[rows],
                            ticks=sub.ticks[rows], warnings=list(sub.warnings))
    return p, s


def _material_documents(pack, sub, keep: Keep):
    mask = np.fromiter((keep(d) for d in pack.doc_ids), dtype=bool, count=len(pack.doc_ids))
    if pack.scored is not None:
        mask &= pack.scored
    return (dataclasses.replace(pack, scored=mask),
            dataclasses.replace(sub, warnings=list(sub.warnings)))


def _material_query_units(pack) -> list[str]:
    return list(pack.queries)


def _material_doc_units(pack, scored_only: bool) -> list[str]:
    mask = np.ones(len(pack.doc_ids), dtype=bool) if pack.scored is None else pack.scored
    if scored_only:                           # DomainID scores no conversational document
        mask = mask & ~pack.conversational
    return [d for d, ok in zip(pack.doc_ids, mask.tolist()) if ok]


# plain functions rather than closures made when SPLITTERS is built: the choice is then
# made when a split is computed (and a mutation test's mutant of it takes effect)
def _domainid_units(pack) -> list[str]:
    return _material_doc_units(pack, scored_only=True)


def _langid_units(pack) -> list[str]:
    return _material_doc_units(pack, scored_only=False)


SPLITTERS: dict[str, Splitter] = {
    "classification": Splitter("item", lambda ref: list(ref.labels), _labels),
    "trec": Splitter("query", _trec_units, _trec),
    "svident-detection": Splitter("document", _svident_units, _svident),
    "svident-disambiguation": Splitter("document", _svident_units, _svident),
    "rcc-citations": Splitter("publication", _rcc_units, _rcc),
    "rcc-mentions": Splitter("publication", _rcc_units, _rcc),
    "material-clir": Splitter("query", _material_query_units, _material_queries),
    "material-e2e": Splitter("query", _material_query_units, _material_queries),
    "material-domainid": Splitter("document", _domainid_units, _material_documents),
    "material-langid": Splitter("document", _langid_units, _material_documents),
}


def supported(task_name: str) -> bool:
    return task_name in SPLITTERS


def units(task, reference) -> list[str]:
    """The reference's unit ids, in file order."""
    return SPLITTERS[task.name].units(task.reference(reference))


def restrict(task, reference, submission, split: dict, private: bool):
    """(reference, submission) of one part; either may be a path or a loaded object."""
    ref = task.reference(reference)
    sub = task.submission(submission, ref)
    test = private_test(split)
    return SPLITTERS[task.name].restrict(ref, sub, lambda u: test(str(u)) == private)


def score_parts(task, reference, submission, split: dict, options: dict):
    """(public result, private result) as dicts: both parts scored from one load."""
    splitter = SPLITTERS[task.name]
    ref = task.reference(reference)
    sub = task.submission(submission, ref)
    word = "queries" if splitter.unit == "query" else splitter.unit + "s"
    out = []
    for private in (False, True):
        r, s = restrict(task, ref, sub, split, private)
        res = task.score(r, s, **options).to_dict()
        res["conventions"]["split"] = (f"{'private' if private else 'public'} part of the "
                                       f"evaluation set: {len(splitter.units(r))} {word}")
        out.append(res)
    return out[0], out[1]
