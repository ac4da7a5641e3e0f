"""MATERIAL-style reference systems: CLIR, DomainID, LangID and E2E summaries.

Input folder (``shareval run material-* IN OUT``)::

    IN/documents/<DocID>.txt    one text per document, any language the encoder covers
    IN/queries.tsv              query_id<TAB>query (QueryString:Domain), header line
    IN/domains.json             optional {DomainID: description, or a plan domain name or
                                code}; default: the plan's eight domains (section 9),
                                described in a sentence each
    IN/documents.tsv            optional DocID<TAB>genre; CS documents are left out of
                                DomainID output (plan 7.2.2)

CLIR scores each (query, document) pair by fusing two signals, both on an
absolute scale so that one threshold serves every query:

* lexical: BM25 (bm25s, English stemming) of the query words in the document,
  squashed to [0, 1) as s / (s + 5); it only helps documents in English or
  sharing names and numbers with the query;
* dense: the best cosine between the query and the document's passages
  (about 60 words each) in the multilingual encoder, which crosses languages.

The confidence is ``LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * dense`` and a
document is retrieved (Y) when it reaches the detection threshold. ``tune_threshold``
picks the threshold maximizing AQWV (Eq. 3) on a development pack; the shipped
defaults (``DEFAULT_THRESHOLD``, ``DOMAIN_THRESHOLD``) are untuned placeholders,
because no MATERIAL development data is public. ``shareval train-system material
--input DEV_IN --pack DEV_PACK`` tunes both on a development pack and writes
``models/material_thresholds.json`` (or ``--out``), which ``thresholds`` reads.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DOMAINS_PATH = Path(__file__).with_name("models") / "material_domains.json"
THRESHOLDS_PATH = Path(__file__).with_name("models") / "material_thresholds.json"
LEXICAL_WEIGHT = 0.5
DEFAULT_THRESHOLD = 0.45
DOMAIN_THRESHOLD = 0.3
PASSAGE_WORDS = 60
LANGUAGES = {"1A": "sw", "1B": "tl", "1S": "so"}     # plan Table 4: Swahili, Tagalog, Somali
_OPERATORS = {"example", "of", "syn", "hyp", "evf"}


@dataclass
class Collection:
    doc_ids: list[str]
    texts: list[str]


def read_collection(folder: str | Path) -> Collection:
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".txt", ""))
    if not files:
        raise ValueError(f"{folder}: no documents (<DocID>.txt files)")
    return Collection([p.stem for p in files],
                      [p.read_text(encoding="utf-8", errors="replace") for p in files])


def conversational(path: Path) -> set[str]:
    """DocIDs marked conversational speech (genre CS) in an optional documents.tsv."""
    if not path.exists():
        return set()
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) > 1 and cols[1].strip().lower() in ("cs", "conversational"):
            out.add(cols[0].strip())
    return out


def read_queries(path: str | Path) -> dict[str, tuple[str, str]]:
    """query_id -> (query string, domain); the query is split at its last colon."""
    path = Path(path)
    out = {}
    with path.open(encoding="utf-8", newline="") as f:
        for line, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if not row or (line == 1 and row[0].lower() in ("query_id", "queryid")):
                continue
            if len(row) < 2 or ":" not in row[1]:
                raise ValueError(f"{path}:{line}: query: expected query_id<TAB>QueryString:Domain")
            string, domain = row[1].rsplit(":", 1)
            out[row[0].strip()] = (string, domain)
    if not out:
        raise ValueError(f"{path}: no queries")
    return out


def query_words(query_string: str) -> str:
    """The words of a query string without the query language's operators and brackets."""
    words = re.findall(r"[^\W_]+", query_string)
    return " ".join(w for w in words if w.lower() not in _OPERATORS) or query_string


def passages(text: str, size: int = PASSAGE_WORDS) -> list[str]:
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, max(len(words), 1), size)] or [""]


class ClirIndex:
    """BM25 and passage embeddings of a collection, built once, queried many times."""

    def __init__(self, collection: Collection):
        from .embed import embed
        from .lexical import Bm25
        self.collection = collection
        self.bm25 = Bm25(collection.texts, "en")
        self.passages: list[str] = []
        self.owner: list[int] = []
        for d, text in enumerate(collection.texts):
            for p in passages(text):
                self.passages.append(p)
                self.owner.append(d)
        self.owner_arr = np.asarray(self.owner)
        self.vectors = embed(self.passages)

    def scores(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(confidence, best passage index) per query and document."""
        from .embed import embed
        n_docs = len(self.collection.doc_ids)
        lexical = self.bm25.scores(queries)
        lexical = lexical / (lexical + 5.0)
        sims = embed(queries) @ self.vectors.T                 # queries x passages
        dense = np.full((len(queries), n_docs), -1.0)
        best = np.zeros((len(queries), n_docs), dtype=int)
        order = np.lexsort((sims, np.broadcast_to(self.owner_arr, sims.shape)), axis=1)
        # after sorting by (document, similarity) the last passage of each document is its best
        last = np.r_[np.flatnonzero(np.diff(self.owner_arr[order[0]])), len(self.owner) - 1]
        for qi in range(len(queries)):
            idx = order[qi, last]
            dense[qi, self.owner_arr[idx]] = sims[qi, idx]
            best[qi, self.owner_arr[idx]] = idx
        conf = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * np.clip(dense, 0, 1)
        return np.clip(conf, 0.0, 1.0), best


def decision_lines(doc_ids: list[str], conf: np.ndarray, threshold: float,
                   extra: list[str] | None = None) -> str:
    """A MATERIAL output file: one ``DocID<TAB>Y|N<TAB>confidence`` line per document."""
    lines = []
    for i, (d, c) in enumerate(zip(doc_ids, conf)):
        row = [d, "Y" if c >= threshold else "N", f"{min(max(c, 0.0), 1.0):.5f}"]
        if extra is not None:
            row.append(extra[i])
        lines.append("\t".join(row))
    return "\n".join(lines) + "\n"


def clir(collection: Collection, queries: dict[str, tuple[str, str]],
         threshold: float = DEFAULT_THRESHOLD, index: ClirIndex | None = None,
         ) -> dict[str, np.ndarray]:
    """Confidence per document for each query (query_id -> array in collection order)."""
    index = index or ClirIndex(collection)
    ids = list(queries)
    conf, _ = index.scores([query_words(queries[q][0]) for q in ids])
    return {q: conf[i] for i, q in enumerate(ids)}


def tune_threshold(conf: dict[str, np.ndarray], relevant: dict[str, np.ndarray],
                   beta: float) -> tuple[float, float]:
    """The global threshold maximizing AQWV (Eq. 3) and that AQWV, from confidences and
    relevance (both query_id -> array in collection order)."""
    from ..metrics.detection import sweep
    ids = list(conf)
    n = len(next(iter(conf.values())))
    q = np.repeat(np.arange(len(ids)), n)
    rel = np.concatenate([relevant[i] for i in ids]).astype(bool)
    c = np.concatenate([conf[i] for i in ids])
    n_rel = np.array([relevant[i].sum() for i in ids])
    n_total = np.full(len(ids), n)
    s = sweep(q, rel, c, n_rel, n_total, beta)
    best = int(np.argmax(s.qwv))
    return float(s.thresholds[best]), float(s.qwv[best])


def tune_domain_threshold(scores: dict[str, np.ndarray], relevant: dict[str, np.ndarray],
                          ) -> tuple[float, float]:
    """The global DomainID threshold maximizing F1 of the detections pooled over domains
    (the plan reports four counts per domain and no single score; F1 balances misses
    against false alarms), and that F1. 0.5 and F1 0 when no document is relevant."""
    from ..metrics.classification import best_f1_threshold
    r = np.concatenate([relevant[d] for d in scores]).astype(bool)
    if not r.any():
        return 0.5, 0.0
    return best_f1_threshold(np.concatenate([scores[d] for d in scores]), r)


def thresholds(path: str | Path | None = None, clir: float | None = None,
               domainid: float | None = None) -> dict:
    """The CLIR and DomainID thresholds: ``clir`` / ``domainid`` when given, else from
    ``path``, else from the tuned ``models/material_thresholds.json`` when
    ``train-system material`` wrote it, else the untuned placeholders. ``source`` says
    where the file values came from."""
    path = Path(path) if path else (THRESHOLDS_PATH if THRESHOLDS_PATH.exists() else None)
    if path is None:
        out = {"clir": DEFAULT_THRESHOLD, "domainid": DOMAIN_THRESHOLD,
               "source": "untuned placeholders (no development pack)"}
    else:
        value = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(value, dict) or not all(
                isinstance(value.get(k), (int, float)) for k in ("clir", "domainid")):
            raise ValueError(f"{path}: expected {{\"clir\": threshold, \"domainid\": threshold}}")
        out = {"clir": float(value["clir"]), "domainid": float(value["domainid"]),
               "source": str(path)}
    if clir is not None:
        out["clir"] = clir
    if domainid is not None:
        out["domainid"] = domainid
    return out


# ---------------------------------------------------------------------------
# DomainID and LangID

CODES = {"GOV": "Government-And-Politics", "LIF": "Lifestyle", "BUS": "Business-And-Commerce",
         "LAW": "Law-And-Order", "HEA": "Physical-And-Mental-Health", "MIL": "Military",
         "SPO": "Sports", "REL": "Religion"}          # plan section 6.2


def load_domains(path: str | Path | None = None) -> dict[str, str]:
    """{DomainID: description}. In a user's file a value may also be one of the plan's
    domain names or codes (GOV, MIL, ...), which stands for its shipped description."""
    defaults = json.loads(DOMAINS_PATH.read_text(encoding="utf-8"))
    if path is None:
        return defaults
    value = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{path}: expected {{DomainID: description}}")
    return {k: defaults.get(CODES.get(v, v), v) for k, v in value.items()}


def domain_scores(collection: Collection, domains: dict[str, str],
                  index: ClirIndex | None = None) -> dict[str, np.ndarray]:
    """Per domain: the mean of each document's three best passage similarities to the
    domain's description (a domain must be more than a passing mention)."""
    from .embed import embed
    index = index or ClirIndex(collection)
    names = list(domains)
    sims = embed([domains[d] for d in names]) @ index.vectors.T
    # passages are stored in document order, so each document is one contiguous block
    starts = np.flatnonzero(np.r_[True, np.diff(index.owner_arr) != 0])
    blocks = np.split(np.arange(len(index.owner)), starts[1:])
    out = {}
    for k, name in enumerate(names):
        per_doc = np.array([np.sort(sims[k, b])[::-1][:3].mean() for b in blocks])
        out[name] = np.clip(per_doc, 0, 1)
    return out


def languages(collection: Collection) -> list[tuple[str, float]]:
    """(ISO 639-1 code, probability) per document by py3langid."""
    from .text import language_identifier
    ident = language_identifier()
    return [(lang, float(p)) for lang, p in (ident.classify(t) for t in collection.texts)]


# ---------------------------------------------------------------------------
# E2E: summaries of query-relevant snippets (plan 7.2.4)

MAX_SUMMARY_WORDS = 100


def summary_snippets(query: str, doc_passages: list[str], max_words: int = MAX_SUMMARY_WORDS) -> list[str]:
    """The document's sentences closest to the query, best first, at most ``max_words``
    words in total (a sentence that does not fit is cut at the limit)."""
    from .embed import embed
    from .text import sentences
    sents = [s for p in doc_passages for s in sentences(p)] or [" ".join(doc_passages)]
    sims = embed(sents) @ embed([query])[0]
    words_for_query = set(query.lower().split())
    bonus = np.array([len(words_for_query & set(s.lower().split())) for s in sents])
    out, used = [], 0
    for i in np.argsort(-(sims + 0.05 * bonus), kind="stable"):
        words = sents[i].split()
        room = max_words - used
        if room <= 0:
            break
        if not words:
            continue
        out.append(" ".join(words[:room]))
        used += min(len(words), room)
        if len(out) == 3:
            break
    return out or ["(empty document)"]


def render_summary(query: str, snippets: list[str], path: Path) -> None:
    """A PNG exactly 1024 px wide and at most 768 px high (plan 7.2.4.5)."""
    import textwrap
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lines = [f"Query: {query}", ""]
    for s in snippets:
        lines += textwrap.wrap("\u2022 " + s, width=95) + [""]
    height = min(768, 40 + 22 * len(lines))
    fig = plt.figure(figsize=(10.24, height / 100), dpi=100)
    fig.text(0.02, 1 - 20 / height, "\n".join(lines), va="top", ha="left", family="DejaVu Sans",
             fontsize=11, linespacing=1.4, wrap=False)
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)


def write_e2e(out: Path, collection: Collection, queries: dict[str, tuple[str, str]],
              conf: dict[str, np.ndarray], threshold: float, index: ClirIndex,
              team: str = "shareval", sys_label: str = "baseline", run_name: str = "primary",
              ) -> int:
    """The E2E submission folders (plan 8.2.2); returns the number of summaries."""
    import uuid
    from datetime import datetime, timezone
    from ..formats.summary import metadata_name
    stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    count = 0
    for qid, (qstring, _domain) in queries.items():
        folder = out / qid
        folder.mkdir(parents=True, exist_ok=True)
        names = []
        words = query_words(qstring)
        for d, doc_id in enumerate(collection.doc_ids):
            if conf[qid][d] < threshold:
                names.append("")
                continue
            name = metadata_name(team, sys_label, qid, doc_id)
            own = np.flatnonzero(index.owner_arr == d)
            snippets = summary_snippets(words, [index.passages[i] for i in own])
            image = name[:-len(".json")] + ".png"
            render_summary(words, snippets, folder / image)
            meta = {"team_id": team, "sys_label": sys_label, "uuid": str(uuid.uuid4()),
                    "query_id": qid, "document_id": doc_id, "run_name": run_name,
                    "run_date_time": stamp, "image_filename": image, "content_list": snippets}
            (folder / name).write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
                                       encoding="utf-8")
            names.append(name)
            count += 1
        (folder / f"{qid}.tsv").write_text(
            decision_lines(collection.doc_ids, conf[qid], threshold, names), encoding="utf-8")
    return count
