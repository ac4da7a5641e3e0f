"""MATERIAL evaluation files (plan sections 7 and 8.2).

A **reference pack** is a folder (layout in docs/material.md)::

    pack.yaml          optional settings: language, eval_period, dataset_name, queryset,
                       docid_pattern, beta, teams, limits
    documents.tsv      the collection: doc_id[<TAB>genre[<TAB>mode]]; genre CS = conversational
                       speech; mode text|speech (default: from the genre, MODE_OF_GENRE)
    queries.tsv        header query_id<TAB>query[<TAB>status][<TAB>attributes...],
                       query = QueryString:Domain, status open|closed (empty = closed)
    clir/<QueryID>.tsv        DocID<TAB>Y|N   (documents not listed are N)
    domainid/<DomainID>.tsv   DocID<TAB>Y|N
    langid/<LangID>.tsv       DocID<TAB>Y|N
    e2e/judgments.tsv         query_id, doc_id, system, judge, relevant (Y/N): judges'
                              summary decisions (system = <TeamID>.<SysLabel>)

A **submission** is a folder or a ``.tgz`` archive of ``<ID>.tsv`` files
(``DocID<TAB>Y|N<TAB>confidence``, one line per document), or for E2E one
folder per query with its ``.tsv``, the summary JSON files and images.
"""
from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from .docids import DocIds, Labels
from .errors import Problems, read_text
from .strhash import hashes_at
from .table import read_table

CONFIDENCE = re.compile(r"^[0-9]\.[0-9]{1,5}$")
QUERY_STRING = re.compile(r'^[",“” a-zA-Z0-9()+:<>\[\]_]+$')
DOMAIN = re.compile(r"^[A-Z][a-zA-Z]*(-[A-Z][a-zA-Z]*)*(,[A-Z][a-zA-Z]*(-[A-Z][a-zA-Z]*)*)*$")
DOCID = r"^MATERIAL_{period}-{lang}_[0-9]{{8}}$"
FILE_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")
CS_GENRES = {"cs", "conversational", "conversational-speech", "speech-conversational"}
# the plan's genres (6.2): conversational speech, news broadcast, topical broadcast are
# speech; news text, topical text, blog are text; a genre naming the mode is that mode
MODE_OF_GENRE = {"cs": "speech", "nb": "speech", "tb": "speech", "speech": "speech",
                 "nw": "text", "tx": "text", "bc": "text", "text": "text"}
MODES = ("text", "speech")
STATUSES = ("open", "closed")

# Plan Table 1: beta per language for CLIR and E2E (CLIR+S).
DEFAULT_BETA = {"clir": {"1A": 20.0, "1B": 20.0, "1S": 40.0},
                "e2e": {"1A": 59.9, "1B": 59.9, "1S": 40.0}}


@dataclass
class Query:
    query_id: str
    text: str
    query_string: str
    domain: str
    attributes: dict[str, str]
    status: str = "closed"               # open queries are never in the official AQWV


@dataclass
class Pack:
    root: Path
    settings: dict
    doc_ids: DocIds                       # a list of str is converted
    conversational: np.ndarray            # bool per document
    queries: dict[str, Query] = field(default_factory=dict)
    genres: Labels = field(default_factory=lambda: Labels.of([]))  # per document ("" = none)
    modes: Labels = field(default_factory=lambda: Labels.of([]))   # text, speech or ""
    _table: object = field(default=None, repr=False)
    # bool per document: the documents one part of a split scores (DomainID, LangID;
    # tasks/splits.py); None scores every document
    scored: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.doc_ids, DocIds):
            self.doc_ids = DocIds.of(self.doc_ids)
        for name in ("genres", "modes"):
            if not isinstance(getattr(self, name), Labels):
                setattr(self, name, Labels.of(getattr(self, name)))

    @property
    def doc_index(self) -> dict[str, int]:
        """id -> position, built on first use: only the line validators need it."""
        return self.doc_ids.index()

    @property
    def language(self) -> str | None:
        lang = self.settings.get("language")
        if lang:
            return str(lang)
        return language_of(self.doc_ids[0]) if len(self.doc_ids) else None

    def beta(self, task: str) -> float | None:
        b = self.settings.get("beta")
        if isinstance(b, dict) and task in b:
            return float(b[task])
        if isinstance(b, (int, float)):
            return float(b)
        return DEFAULT_BETA[task].get(self.language or "")

    def table(self):
        """The documents' lookup table for the output scanner (built once)."""
        if self._table is None:
            from .scan import doc_table
            self._table = doc_table(self.doc_ids)
        return self._table

    @property
    def doc_pattern(self) -> str | None:
        return docid_pattern(self.settings, self.language)


def language_of(doc_id: str) -> str | None:
    """The language of a plan DocID (MATERIAL_<period>-<lang>_<number>)."""
    m = re.match(r"^MATERIAL_[^-]+-([^_]+)_", doc_id)
    return m.group(1) if m else None


def docid_pattern(settings: dict, language: str | None) -> str | None:
    """The plan's DocID pattern when pack.yaml asks for it (docid_pattern)."""
    if not settings.get("docid_pattern"):
        return None
    return DOCID.format(period=re.escape(str(settings.get("eval_period", "[A-Z0-9]+"))),
                        lang=re.escape(str(language or "[A-Z0-9]+")))


def parse_query(text: str) -> tuple[str, str] | str:
    """(query_string, domain) from ``QueryString:Domain``, or a message."""
    if ":" not in text:
        return "expected QueryString:Domain"
    qs, domain = text.rsplit(":", 1)
    if not qs:
        return "empty query string"
    if not QUERY_STRING.match(qs):
        bad = sorted({c for c in qs if not QUERY_STRING.match(c)})
        return f"query string has characters outside the plan's set (7.1): {''.join(bad)!r}"
    if not DOMAIN.match(domain):
        return (f"domain {domain!r} must be capitalised words joined by hyphens, "
                f"e.g. Physical-And-Mental-Health")
    return qs, domain


def read_pack(root, problems: Problems) -> Pack | None:
    root = Path(root)
    if not root.is_dir():
        problems.add(root, None, "pack", "reference pack must be a folder (see docs/material.md)")
        return None
    settings = {}
    if (root / "pack.yaml").exists():
        text = read_text(root / "pack.yaml", problems)
        try:
            settings = yaml.safe_load(text or "") or {}
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            problems.add(root / "pack.yaml", mark.line + 1 if mark else None, "yaml", str(e))
        if not isinstance(settings, dict):
            problems.add(root / "pack.yaml", 1, "yaml", "expected a mapping of settings")
            settings = {}
    docs_path = root / "documents.tsv"
    docs = _read_documents(docs_path, settings, problems)
    ids, cs, genres, modes = docs or (DocIds.of([]), np.zeros(0, dtype=bool), Labels.of([]),
                                      Labels.of([]))
    pack = Pack(root, settings, ids, cs, genres=genres, modes=modes)
    if (root / "queries.tsv").exists():
        pack.queries = read_queries(root / "queries.tsv", problems)
    return pack


def _read_documents(path: Path, settings: dict, problems: Problems):
    """(ids, conversational, genres, modes) of documents.tsv, or None when it cannot
    be read. The ids go
    straight into one buffer (no str kept per document, no dict: issue 41), so a
    repeated id is found afterwards by hash and confirmed; the problems are those,
    in the order, that checking line by line with a dict of the ids gave."""
    text = read_text(path, problems)
    if text is None:
        return None
    # sized once (ids' bytes <= the text's, records <= lines): growing buffers side
    # by side left the freed copies as holes the process kept (~35 MB for 485 k ids)
    rows = text.count("\n") + 1
    data = bytearray((len(text) if text.isascii() else len(text.encode("utf-8"))) + 8)
    into = memoryview(data)
    ends, lines = array("q", [0]) * rows, array("i", [0]) * rows
    genre_codes, mode_codes = array("i", [0]) * rows, array("i", [0]) * rows
    genre_names: dict[str, int] = {}
    mode_names: dict[str, int] = {}
    found: list[tuple[int, int, str, str]] = []    # (line, document, field, message)
    rx = pattern = None
    unmatched: list[tuple[int, str]] = []          # (document, id) not matching the pattern
    k = end = 0
    for i, line in enumerate(_split_lines(text), 1):
        if not line.strip() or (i == 1 and line.split("\t")[0] == "doc_id"):
            continue
        parts = line.rstrip("\r").split("\t")
        doc = parts[0].strip()
        genre = parts[1].strip() if len(parts) > 1 else ""
        mode = parts[2].strip().lower() if len(parts) > 2 else ""
        if mode and mode not in MODES:
            found.append((i, k, "mode", f"expected text or speech, found {parts[2]!r}"))
        if not k:                  # the language of the first id, unless pack.yaml says
            pattern = docid_pattern(settings, str(settings.get("language") or "") or
                                    language_of(doc))
            rx = re.compile(pattern) if pattern else None
        if rx is not None and not rx.match(doc):
            unmatched.append((k, doc))
        raw = doc.encode("utf-8")
        into[end:end + len(raw)] = raw
        end += len(raw)
        ends[k], lines[k] = end, i
        genre_codes[k] = genre_names.setdefault(genre, len(genre_names))
        mode = mode or MODE_OF_GENRE.get(genre.lower(), "")
        mode_codes[k] = mode_names.setdefault(mode, len(mode_names))
        k += 1
    into.release()
    del data[end + 8:], text      # zeros after the ids (DocIds.words); the text is not
    #                               held while the ids are hashed
    offsets = np.zeros(k + 1, dtype=np.int64)
    offsets[1:] = np.frombuffer(ends, dtype=np.int64, count=k)
    del ends
    ids = DocIds(np.frombuffer(data, dtype=np.uint8), offsets)
    genres = Labels(_small(genre_codes, k, len(genre_names)), list(genre_names))
    modes = Labels(_small(mode_codes, k, len(mode_names)), list(mode_names))
    del genre_codes, mode_codes
    keep = _first_of_each(ids)
    if keep is not None:                            # a document listed twice or more
        found = [f for f in found if keep[f[1]]] + [
            (lines[k], k, "doc_id", f"duplicate document {ids[k]!r}")
            for k in np.flatnonzero(~keep).tolist()]
        found.sort()
        unmatched = [(k, doc) for k, doc in unmatched if keep[k]]
        ids = _only(ids, keep)
        genres, modes = (Labels(x.codes[keep], x.names) for x in (genres, modes))
    for i, _, name, message in found:
        problems.add(path, i, name, message)
    if not len(ids):
        problems.add(path, None, "file", "no documents")
    for _, doc in unmatched:
        problems.add(path, None, "doc_id", f"{doc!r} does not match {pattern}")
    cs = np.array([g.lower() in CS_GENRES for g in genres.names] or [False], dtype=bool)
    return ids, cs[genres.codes], genres, modes


def _small(codes: array, n: int, names: int) -> np.ndarray:
    """The first ``n`` codes, as uint8 when there are few names (genres, modes)."""
    out = np.frombuffer(codes, dtype=np.int32, count=n)
    return out.astype(np.uint8) if names <= 256 else out.copy()


def _first_of_each(ids: DocIds) -> np.ndarray | None:
    """None when the ids differ; else True for each id's first listing (a shared hash
    is confirmed by comparing the ids). Uses, and so builds, the ids' lookup."""
    hashes, order = ids.lookup()[:2]
    same = hashes[1:] == hashes[:-1]
    if not same.any():
        return None
    keep = np.ones(len(ids), dtype=bool)
    first: dict[str, int] = {}
    for k in np.unique(np.concatenate([order[1:][same], order[:-1][same]])).tolist():
        if first.setdefault(ids[k], k) != k:        # k ascending: the first listing wins
            keep[k] = False
    return keep if not keep.all() else None


def _only(ids: DocIds, keep: np.ndarray) -> DocIds:
    lengths = np.diff(ids.offsets)
    offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(lengths[keep])
    return DocIds(np.concatenate([ids.data[np.repeat(keep, lengths)],
                                  np.zeros(8, dtype=np.uint8)]), offsets)


def _split_lines(text: str):
    """``text.split("\n")``, one line at a time: a list of a large collection's lines
    held ~2.5x documents.tsv at read_pack's peak (uploads' memory, issue 41)."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def read_queries(path: Path, problems: Problems) -> dict[str, Query]:
    table = read_table(path, problems, ("query_id", "query"))
    out: dict[str, Query] = {}
    if table is None:
        return out
    header, rows = table
    for line, row in rows:
        qid = row["query_id"].strip()
        parsed = parse_query(row["query"].strip())
        if not qid or not FILE_ID.match(qid):
            problems.add(path, line, "query_id", f"invalid query id {qid!r}")
            continue
        if qid in out:
            problems.add(path, line, "query_id", f"duplicate query {qid!r}")
            continue
        if isinstance(parsed, str):
            problems.add(path, line, "query", parsed)
            continue
        status = (row.get("status") or "").strip().lower() or "closed"
        if status not in STATUSES:
            problems.add(path, line, "status", f"expected open or closed (empty = closed), "
                                               f"found {row['status']!r}")
            continue
        attrs = {k: v.strip() for k, v in row.items()
                 if k not in ("query_id", "query", "status")}
        out[qid] = Query(qid, row["query"].strip(), parsed[0], parsed[1], attrs, status)
    return out


def read_judgment_file(path: Path, pack: Pack, problems: Problems) -> np.ndarray | None:
    """A reference ``<ID>.tsv`` (DocID<TAB>Y|N) as a bool per collection document."""
    from .scan import scan_file
    try:
        data = path.read_bytes()
    except OSError as e:
        problems.add(path, None, "file", f"cannot be read ({e.strerror})")
        return None
    fast = scan_file(data, pack.table(), np.ones(len(pack.doc_ids), dtype=bool), 2,
                     require_all=False)
    if fast is not None:
        return fast.decision
    return read_judgment_lines(path, pack, problems)


def read_judgment_lines(path: Path, pack: Pack, problems: Problems) -> np.ndarray | None:
    """The line-by-line reader of a reference file: every problem gets its line."""
    text = read_text(path, problems)
    if text is None:
        return None
    rel = np.zeros(len(pack.doc_ids), dtype=bool)
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        parts = line.rstrip("\r").split("\t")
        if len(parts) < 2 or parts[1] not in ("Y", "N"):
            problems.add(path, i, "line", "expected DocID<TAB>Y|N")
            continue
        j = pack.doc_index.get(parts[0])
        if j is None:
            problems.add(path, i, "DocID", f"unknown document {parts[0]!r} (not in documents.tsv)")
            continue
        rel[j] = parts[1] == "Y"
    return rel


# ---------------------------------------------------------------------------
# System output files

@dataclass
class OutputFile:
    """One validated ``<ID>.tsv``: values per collection document, in collection order."""
    name: str
    decision: np.ndarray         # bool per collection document
    ticks: np.ndarray            # int32 per document: confidence in units of 1e-5 (exact)
    listed: np.ndarray           # bool per collection document (False: not in the file)
    metadata: list[str] | None = None   # E2E 4th column, per collection document


def confidence_ticks(text: str) -> int:
    """'0.840' -> 84000: a plan-7.4 confidence as an exact integer number of 1e-5."""
    whole, frac = text.split(".")
    return int(whole) * 100_000 + int(frac.ljust(5, "0"))


def read_output_file(path: Path, data: bytes, pack: Pack, problems: Problems, columns: int,
                     expected_docs: np.ndarray, display: str | None = None) -> OutputFile | None:
    """Validate one system output file given its bytes.

    ``expected_docs``: bool per collection document that must appear (others must
    not). Well-formed files are decoded in one pass (``scan``); a file with any
    problem is re-read line by line so that every problem has its line number.
    """
    from .scan import scan_file
    name = display or str(path)
    fast = scan_file(data, pack.table(), expected_docs, columns)
    if fast is None:
        return read_output_lines(name, data, pack, problems, columns, expected_docs)
    return OutputFile(name, fast.decision, fast.ticks, fast.seen, fast.meta)


def read_output_lines(name, data: bytes, pack: Pack, problems: Problems, columns: int,
                      expected_docs: np.ndarray) -> OutputFile | None:
    """The line-by-line validator of an output file: every problem gets its line."""
    n = len(pack.doc_ids)
    decision = np.zeros(n, dtype=bool)
    ticks = np.zeros(n, dtype=np.int32)
    listed = np.zeros(n, dtype=bool)
    first_line = np.zeros(n, dtype=np.int64)
    meta = [""] * n if columns == 4 else None
    ok = True
    pattern = pack.doc_pattern
    rx = re.compile(pattern) if pattern else None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        problems.fatal(name, None, "file", "empty")
        return None
    shape = "DocID<TAB>Y|N<TAB>confidence" + ("<TAB>metadata" if columns == 4 else "")
    for i, raw in enumerate(lines, 1):
        if problems.full:
            return None
        if raw.endswith(b"\r"):
            problems.add(name, i, "line", "ends with CR: lines must end with LF only")
            ok = False
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.add(name, i, "encoding", "not valid UTF-8")
            ok = False
            continue
        parts = line.split("\t")
        if len(parts) != columns:
            report = problems.fatal if i == 1 else problems.add   # the first line: wrong layout
            report(name, i, "line", f"expected {columns} tab-separated fields ({shape}), "
                                    f"found {len(parts)}")
            if i == 1:
                return None
            ok = False
            continue
        doc, dec, conf = parts[0], parts[1], parts[2]
        j = pack.doc_index.get(doc)
        if j is None:
            what = f"does not match {pattern}" if rx and not rx.match(doc) else \
                "unknown document (not in the collection)"
            problems.add(name, i, "DocID", f"{doc!r}: {what}")
            ok = False
        elif not expected_docs[j]:
            problems.add(name, i, "DocID", f"{doc!r}: conversational speech documents are not "
                                           f"scored and must not appear here (plan 7.2.2)")
            ok = False
        elif listed[j]:
            problems.add(name, i, "DocID", f"{doc!r}: duplicate (first at line {first_line[j]})")
            ok = False
        if dec not in ("Y", "N"):
            problems.add(name, i, "HardDecision", f"expected Y or N, found {dec!r}")
            ok = False
        if not CONFIDENCE.match(conf):
            problems.add(name, i, "ConfidenceFactor",
                         f"{conf!r}: one digit, a point and 1 to 5 digits, no exponent (plan 7.4)")
            ok = False
        elif float(conf) > 1.0:
            problems.add(name, i, "ConfidenceFactor", f"{conf!r} is above 1.0")
            ok = False
        if j is not None and not listed[j]:
            listed[j] = True
            first_line[j] = i
            decision[j] = dec == "Y"
            if CONFIDENCE.match(conf):
                ticks[j] = confidence_ticks(conf)
            if meta is not None:
                meta[j] = parts[3]
    missing = np.flatnonzero(expected_docs & ~listed)
    if missing.size:
        ok = False
        why = " (one line per document is required)"
        problems.summarize(name, "DocID", [pack.doc_ids[k] for k in missing],
                           "{n} collection document is missing" + why,
                           "{n} collection documents are missing" + why)
    if not ok:
        return None
    return OutputFile(name, decision, ticks, listed, meta)
