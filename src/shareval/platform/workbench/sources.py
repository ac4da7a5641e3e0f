"""Filling a project: units from a corpus, entries from a catalog or a vocabulary
(with families), and the reference systems' suggestions.

* RCC (spec 000): publications from the shared ``texts/<id>.json`` layout
  ({abstract, reduced_content}), ``.txt`` or ``.pdf`` (pypdfium2); units are whole
  publications or publication–dataset pairs (from a citations file and/or the linker);
  the catalog ``{data_set_id: text}`` (or records with ``title``) gives the entries.
* SV-Ident (spec 001): sentences from a shared-task or trial TSV; the trial
  vocabulary (``id, label, topic, question, answer``) gives the entries.
* Re-DocRED: documents laid out as the kbp task does (``formats.kbp.layout_text``).
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from pathlib import Path

from django.db import transaction

from shareval.formats.digits import natural_key
from shareval.formats.kbp import layout_text

from .models import ANSWER, SPAN, Entry, Project, Suggestion, Unit
from .service import log

YEARISH = re.compile(r"^(1[89]\d\d|20\d\d)(-\d+)?$|^(wave|round|cycle|phase)$|^\d{1,2}$")
TITLE_WORDS = 10


class SourceError(ValueError):
    """A corpus file that cannot be read: the message names the file (and line)."""


# ---------------------------------------------------------------------------
# entries

def family_key(title: str) -> str:
    """A guessed family: the title's first words with years, waves and small numbers
    left out ("ANES 1952 Time Series Study" and "ANES 1956 Time Series Study" share
    "anes time series study"). Only a title holding a year starts a family."""
    words = re.findall(r"[\w-]+", title.lower())[:TITLE_WORDS]
    if not any(YEARISH.match(w) and w[:1] in "12" and len(w) >= 4 for w in words):
        return ""
    kept = [w for w in words if not YEARISH.match(w)]
    return " ".join(kept[:4])


def short_title(text: str) -> str:
    words = re.sub(r"\s+", " ", text).strip().split(" ")
    return " ".join(words[:TITLE_WORDS]) + (" …" if len(words) > TITLE_WORDS else "")


def read_catalog(path: Path) -> list[tuple[str, str, str]]:
    """(key, title, searchable text) from ``{id: text}``, ``{id: {title, mentions}}`` or
    a list of ``{data_set_id, title, mention_list}`` records."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SourceError(f"{path}: {e}") from None
    if not isinstance(data, (dict, list)):
        raise SourceError(f"{path}: expected an object {{data_set_id: text}} or a list of "
                          f"records, not {type(data).__name__}")
    items = data.items() if isinstance(data, dict) else (
        (r.get("data_set_id") if isinstance(r, dict) else None, r) for r in data)
    out = []
    for i, (key, v) in enumerate(items):
        if key is None:
            raise SourceError(f"{path}: record {i}: data_set_id missing")
        if isinstance(v, str):
            title, text = short_title(v), v
        elif isinstance(v, dict):
            title = str(v.get("title") or v.get("name") or "")
            more = v.get("mentions") or v.get("mention_list") or []
            text = " ".join([title, *(more if isinstance(more, list) else [str(more)])])
        else:
            raise SourceError(f"{path}: entry {key}: expected text or an object")
        out.append((str(key), title or str(key), text))
    return out


def read_families(path: Path) -> dict[str, str]:
    """CSV ``key,family`` (header optional): the organizer's own grouping."""
    out = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SourceError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    for line, row in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
        if not row or (line == 1 and row[0].strip().lower() in ("key", "data_set_id", "id")):
            continue
        if len(row) < 2 or not row[0].strip():
            raise SourceError(f"{path}:{line}: expected key,family")
        out[row[0].strip()] = row[1].strip()
    return out


def add_entries(project: Project, rows: list[tuple[str, str, str]],
                families: dict[str, str] | None = None) -> int:
    """Store entries; families from ``families`` if given, else guessed from titles
    (a guessed family needs two members)."""
    if families is None:
        guess = {k: family_key(t) for k, t, _ in rows}
        size = defaultdict(int)
        for f in guess.values():
            size[f] += bool(f)
        families = {k: f for k, f in guess.items() if f and size[f] > 1}
    Entry.objects.bulk_create([Entry(project=project, key=k, title=t[:500], text=x,
                                     family=families.get(k, "")) for k, t, x in rows],
                              batch_size=1000)
    return len(rows)


# ---------------------------------------------------------------------------
# RCC

def browser_text(text: str) -> str:
    """The text as the page's DOM holds it (HTML parsing makes CR LF and CR one LF and
    drops NUL, which PostgreSQL cannot store either), so offsets agree."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def publication_text(texts: Path, pid: str) -> str:
    """``<pid>.json`` ({abstract, reduced_content}: abstract, blank line, body),
    ``<pid>.txt`` or ``<pid>.pdf``, as :func:`browser_text`."""
    return browser_text(_raw_text(texts, pid))


def _raw_text(texts: Path, pid: str) -> str:
    base = Path(texts)
    j, t, p = base / f"{pid}.json", base / f"{pid}.txt", base / f"{pid}.pdf"
    if j.exists():
        try:
            d = json.loads(j.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SourceError(f"{j}: {e}") from None
        if not isinstance(d, dict):
            raise SourceError(f"{j}: expected an object with abstract and reduced_content")
        parts = [str(d.get(k) or "").strip() for k in ("abstract", "reduced_content", "text")]
        return "\n\n".join(x for x in parts if x)
    if t.exists():
        return t.read_text(encoding="utf-8", errors="replace")
    if p.exists():
        import pypdfium2 as pdfium
        try:
            pdf = pdfium.PdfDocument(str(p))
        except pdfium.PdfiumError as e:
            raise SourceError(f"{p}: not a readable PDF ({e})") from None
        try:
            return "\n\n".join(page.get_textpage().get_text_range() for page in pdf)
        finally:
            pdf.close()
    raise SourceError(f"{base}: no {pid}.json, {pid}.txt or {pid}.pdf")


def read_pairs(path: Path, publications: set[str]) -> dict[str, set[str]]:
    """Publication -> data set ids cited, from a ``data_set_citations.json``."""
    from shareval.formats.errors import Problems
    from shareval.formats.rcc import read_citations
    problems = Problems()
    cits = read_citations(path, problems, submission=False)
    if cits is None:
        raise SourceError("; ".join(str(p) for p in problems.items[:3]))
    out: dict[str, set[str]] = defaultdict(set)
    for c in cits.records:
        if c.publication_id in publications:
            out[c.publication_id].add(c.data_set_id)
    return out


def find_all(text: str, phrase: str) -> list[tuple[int, int]]:
    """Every occurrence of ``phrase`` in ``text``, case-insensitive, on word edges,
    any run of white space matching any other."""
    words = phrase.split()
    if not words:
        return []
    pat = r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)"
    return [(m.start(), m.end()) for m in re.finditer(pat, text, re.IGNORECASE)]


def rcc_suggestions(text: str, catalog, wanted: set[str] | None = None) -> list[dict]:
    """The RCC linker's proposals for a publication: each mention it outputs for a
    cited data set, at every place it occurs, with the citation's score."""
    from shareval.systems import rcc
    citations, _ = rcc.find_citations(text, catalog, "0")
    out, seen = [], set()
    for c in citations:
        if wanted is not None and c["data_set_id"] not in wanted:
            continue
        for m in c["mention_list"]:
            for b, e in find_all(text, m):
                key = (b, e, c["data_set_id"])
                if key not in seen:
                    seen.add(key)
                    out.append({"begin": b, "end": e, "target": c["data_set_id"],
                                "score": float(c["score"])})
    return out


def load_rcc(project: Project, texts: Path, publications: list[str], catalog: Path,
             citations: Path | None = None, families: Path | None = None,
             suggest: bool = True) -> dict:
    """Units, entries and suggestions of an RCC project (``rcc-pairs``: a unit per cited
    pair, from ``citations`` and the linker; ``rcc-publications``: a unit each)."""
    rows = read_catalog(catalog)
    add_entries(project, rows, read_families(families) if families else None)
    keys = {k for k, _, _ in rows}
    cited = read_pairs(citations, set(publications)) if citations else {}
    linker = None
    if suggest:
        from shareval.systems.rcc_catalog import Catalog
        linker = Catalog.load(catalog)
    units, suggestions, pos = [], [], project.units.count()
    for pid in publications:
        text = publication_text(texts, pid)
        proposals = rcc_suggestions(text, linker) if linker else []
        datasets = sorted(cited.get(pid, set()) | {s["target"] for s in proposals},
                          key=natural_key)
        datasets = [d for d in datasets if d in keys]
        if project.kind == "rcc-pairs":
            for ds in datasets:
                u = Unit(project=project, key=f"{pid}|{ds}", title=f"{pid} · {_title(rows, ds)}",
                         text=text, position=pos,
                         meta={"publication_id": pid, "data_set_id": ds, "cited": datasets})
                pos += 1
                units.append(u)
                suggestions.append([s for s in proposals if s["target"] == ds])
        else:
            u = Unit(project=project, key=pid, title=f"Publication {pid}", text=text,
                     position=pos, meta={"publication_id": pid, "cited": datasets})
            pos += 1
            units.append(u)
            suggestions.append(proposals)
    return _store(project, units, suggestions, "rcc-linker", SPAN, "dataset")


def _title(rows, key) -> str:
    for k, t, _ in rows:
        if k == key:
            return t
    return key


def _store(project, units, suggestions, source, kind, label) -> dict:
    if not units:
        raise SourceError("the corpus gives no unit (no publication with a text, sentence "
                          "or document)")
    with transaction.atomic():
        Unit.objects.bulk_create(units, batch_size=200)
        saved = {u.key: u for u in project.units.filter(key__in=[u.key for u in units])}
        rows = [Suggestion(unit=saved[u.key], kind=kind, begin=s.get("begin"), end=s.get("end"),
                           label=s.get("label", label), target=s["target"], score=s["score"],
                           source=source)
                for u, ss in zip(units, suggestions) for s in ss]
        Suggestion.objects.bulk_create(rows, batch_size=1000)
        log(project, "load", units=len(units), suggestions=len(rows), source=source)
    return {"units": len(units), "suggestions": len(rows),
            "entries": project.entries.count(),
            "families": project.entries.exclude(family="").values("family").distinct().count()}


# ---------------------------------------------------------------------------
# SV-Ident

def read_sentences(path: Path) -> list[dict]:
    """Rows of a shared-task (``sentence``) or trial (``text``) TSV with ``uuid``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SourceError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    if not {"uuid"} <= set(reader.fieldnames or ()) or not \
            {"sentence", "text"} & set(reader.fieldnames or ()):
        raise SourceError(f"{path}:1: header: expected the columns uuid and sentence "
                          f"(or text), found {', '.join(reader.fieldnames or []) or 'none'}")
    rows = []
    for line, r in enumerate(reader, start=2):
        text = browser_text(r.get("sentence") or r.get("text") or "").strip()
        uid = (r.get("uuid") or "").strip()
        if not text or not uid:
            raise SourceError(f"{path}:{line}: {'uuid' if text else 'sentence'}: missing")
        rows.append({"uuid": uid, "text": text, "doc_id": (r.get("doc_id") or "").strip(),
                     "lang": (r.get("lang") or Path(path).stem).strip(),
                     "research_data": (r.get("research_data") or "").strip()})
    if not rows:
        raise SourceError(f"{path}: no sentence in it")
    return rows


def load_svident(project: Project, sentences: Path, vocabulary: Path | None = None,
                 n: int | None = None, suggest: bool = True, k: int = 5) -> dict:
    from shareval.systems import svident
    rows = read_sentences(sentences)[:n] if n else read_sentences(sentences)
    variables = svident.read_vocabulary(vocabulary) if vocabulary else []
    add_entries(project, [(v.id, v.label or v.id, v.text()) for v in variables], {})
    pos = project.units.count()
    units = [Unit(project=project, key=r["uuid"], title=f"{r['doc_id']} · sentence {i + 1}",
                  text=r["text"], position=pos + i,
                  meta={k2: r[k2] for k2 in ("uuid", "doc_id", "lang", "research_data")})
             for i, r in enumerate(rows)]
    proposals = [[] for _ in units]
    if suggest and variables:
        ranked = svident.disambiguate([u.text for u in units], variables, k=k,
                                      langs=[u.meta["lang"] or None for u in units]
                                      if all(u.meta["lang"] in ("en", "de") for u in units)
                                      else None)
        proposals = [[{"target": v, "score": s, "label": "variable"} for v, s in r]
                     for r in ranked]
    return _store(project, units, proposals, "svident", ANSWER, "variable")


# ---------------------------------------------------------------------------
# Re-DocRED

def load_redocred(project: Project, path: Path, n: int | None = None) -> dict:
    try:
        docs = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SourceError(f"{path}: {e}") from None
    if not isinstance(docs, list):
        raise SourceError(f"{path}: expected a list of documents")
    pos = project.units.count()
    units = []
    for i, d in enumerate(docs[:n] if n else docs):
        if not isinstance(d, dict) or not isinstance(d.get("sents"), list):
            raise SourceError(f"{path}: document {i}: sents missing")
        text, starts = layout_text(d["sents"])
        units.append(Unit(project=project, key=str(d.get("title") or i), title=str(
            d.get("title") or f"document {i}"), text=text, position=pos + i,
            meta={"sents": d["sents"], "token_starts": starts}))
    return _store(project, units, [[] for _ in units], "none", SPAN, "")
