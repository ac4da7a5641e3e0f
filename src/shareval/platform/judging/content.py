"""What judges see, in human terms, per task family.

A run's units (what is sampled and judged) and the content around them come
from the campaign's dataset: its reference (a file or a folder) and its
public files. Resources are found by name there:

* SV-Ident: the sentences (a TSV with ``uuid``, ``doc_id`` and ``sentence``
  or ``text`` columns: the reference or a public sentences file) and, for
  disambiguation, a vocabulary TSV (``id, label, question``; a file whose name
  starts with ``vocabulary``). A sentence is shown with its neighbours in the
  document, a variable as its label and question, never a bare id.
* RCC: ``publications.json`` (titles), ``texts/<publication_id>.json`` (full
  text: ``abstract``, ``reduced_content``) and a catalog
  (``dataset_text_dict.json``: id -> title and known mentions, or
  ``data_sets.json``). A publication is its title, the passages around each
  mention the teams output (the mention marked) and a link to its full text;
  a dataset is its catalog title.
* KBP relations (``kbp-relations``): a relation mention, shown in its
  document (judging/kbp_items.py): the provenance sentences first, subject and
  object marked by their offsets, the whole document one click away.
* Other tasks: one unit per run line, shown as the line.

Views are plain data (``kind`` plus fields) that the judging page renders;
text is split into segments so the page marks mentions without HTML.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from django.conf import settings

from shareval.assessment.outputs import SEP, output_rows
from shareval.formats.errors import Problems
from shareval.formats.kbp import KbpReference, read_reference, reference_paths
from shareval.formats.rcc import read_citations, read_mentions
from shareval.formats.svident import read_detection, read_disambiguation

PASSAGE = 220            # characters either side of a mention
MAX_PASSAGES = 4         # per mention string
TOP_VARIABLES = 3        # disambiguation units: a sentence's top-ranked variables
MAX_LINE = 500           # an item key is at most 500 characters (models.Item.key)


@dataclass
class Unit:
    doc: str             # document (recall sampling, grouping)
    group: str           # what side-by-side shows at once (a sentence, a publication)
    text: str            # the output in human terms
    mentions: tuple[str, ...] = ()
    evidence: tuple[int, ...] = ()     # sentence ids a run gave as evidence (KBP)


@lru_cache(maxsize=4)
def _kbp_reference(path: str, mtime_ns: int) -> KbpReference | None:
    """A KBP reference read once per file version (pages and on-demand draws reuse it)."""
    problems = Problems()
    try:
        ref = read_reference(path, problems)
    except (OSError, ValueError):
        return None
    return ref if ref is not None and not problems else None


class Resources:
    """The files of a dataset that content may come from, loaded on first use."""

    def __init__(self, dataset=None):
        self.roots: list[Path] = []
        self.reference: Path | None = None
        self.task = ""
        if dataset is None:
            return
        self.task = dataset.task.task_name
        ref = dataset.reference_file
        if ref is not None and ref.exists():
            self.roots.append(ref)
            self.reference = ref
        for pf in dataset.public_files.all():
            p = Path(settings.PUBLIC_DIR) / pf.path
            if p.exists():
                self.roots.append(p)

    def find(self, *names: str, prefix: str | None = None) -> Path | None:
        """A file or folder named one of ``names`` (or starting with ``prefix``):
        a root itself, or directly inside a root folder."""
        for root in self.roots:
            cands = [root] + (sorted(root.iterdir()) if root.is_dir() else [])
            for p in cands:
                if p.name in names or (prefix and p.name.lower().startswith(prefix)):
                    return p
        return None

    def tables(self):
        for root in self.roots:
            for p in [root] + (sorted(root.iterdir()) if root.is_dir() else []):
                if p.is_file() and p.suffix in (".tsv", ".csv"):
                    yield p

    # KBP -------------------------------------------------------------------------
    @cached_property
    def kbp(self) -> KbpReference | None:
        """The dataset's KBP reference; None when the task is not kbp-relations or the
        reference does not read cleanly."""
        ref = getattr(self, "reference", None)
        if ref is None or getattr(self, "task", "") != "kbp-relations":
            return None
        try:
            version = sum(p.stat().st_mtime_ns for p in reference_paths(ref))
        except OSError:
            return None
        return _kbp_reference(str(ref), version)

    # SV-Ident --------------------------------------------------------------------
    @cached_property
    def sentences(self) -> dict[str, dict]:
        """uuid -> {doc, lang, text, pos}; documents' sentences in file order."""
        out: dict[str, dict] = {}
        for p in self.tables():
            if p.name.lower().startswith("vocabulary"):
                continue
            with open(p, encoding="utf-8", errors="replace", newline="") as f:
                r = csv.DictReader(f, delimiter="\t" if p.suffix == ".tsv" else ",")
                cols = set(r.fieldnames or [])
                if not {"uuid", "doc_id"} <= cols or not cols & {"sentence", "text"}:
                    continue
                for row in r:
                    u = row.get("uuid")
                    if u and u not in out:
                        out[u] = {"doc": row["doc_id"], "lang": row.get("lang") or "",
                                  "text": row.get("sentence") or row.get("text") or ""}
        by_doc: dict[str, list[str]] = {}
        for u, s in out.items():
            by_doc.setdefault(s["doc"], []).append(u)
        for doc, us in by_doc.items():
            for i, u in enumerate(us):
                out[u]["pos"], out[u]["doc_uuids"] = i, us
        return out

    @cached_property
    def vocabulary(self) -> dict[str, dict]:
        """variable id -> {label, question}; ids also without their leading 'v'."""
        p = self.find(prefix="vocabulary")
        if p is not None and p.is_dir():
            p = next((q for q in sorted(p.iterdir()) if q.suffix == ".tsv"), None)
        out: dict[str, dict] = {}
        if p is None:
            return out
        with open(p, encoding="utf-8", errors="replace", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                vid = (row.get("id") or "").strip()
                if not vid:
                    continue
                v = {"label": (row.get("label") or "").strip(),
                     "question": (row.get("question") or "").strip()}
                out[vid] = v
                if vid.startswith("v"):
                    out.setdefault(vid[1:], v)
        return out

    # RCC -------------------------------------------------------------------------
    @cached_property
    def titles(self) -> dict[str, str]:
        p = self.find("publications.json")
        if p is None or not p.is_file():
            return {}
        try:
            return {str(x["publication_id"]): str(x.get("title") or "")
                    for x in json.loads(p.read_text(encoding="utf-8"))}
        except (ValueError, KeyError, TypeError):
            return {}

    @cached_property
    def catalog(self) -> dict[str, str]:
        p = self.find("dataset_text_dict.json", "data_sets.json")
        if p is None or not p.is_file():
            return {}
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            return {}
        if isinstance(data, dict):
            return {str(k): str(v) for k, v in data.items()}
        return {str(d.get("data_set_id")): str(d.get("title") or d.get("name") or "")
                for d in data if isinstance(d, dict)}

    def text_of(self, pub: str) -> str | None:
        folder = self.find("texts")
        if folder is None or not folder.is_dir() or not re.fullmatch(r"[\w.-]+", pub):
            return None
        p = folder / f"{pub}.json"
        if not p.is_file():
            p = folder / f"{pub}.txt"
            return p.read_text(encoding="utf-8", errors="replace") if p.is_file() else None
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            return None
        if isinstance(obj, dict):
            return "\n\n".join(str(obj[k]) for k in ("abstract", "reduced_content", "text")
                               if obj.get(k))
        return str(obj)


def dataset_title(res: Resources, dsid: str, limit: int = 90) -> str:
    """A catalog dataset in words: its title (the catalog text's start), never only its id."""
    text = " ".join(res.catalog.get(str(dsid), "").split())
    if not text:
        return f"a dataset not in the catalog (id {dsid})"
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def variable_text(res: Resources, vid: str) -> str:
    v = res.vocabulary.get(vid) or res.vocabulary.get(vid.lstrip("v"))
    if not v:
        return f"a variable not in the vocabulary ({vid})"
    q = f" — asked: “{v['question']}”" if v["question"] else ""
    return f"{v['label'] or vid}{q}"


# units of a run ------------------------------------------------------------------------

def run_units(task_name: str, path, res: Resources | None = None) -> dict[str, Unit]:
    """item key -> Unit for one run, in human terms."""
    problems = Problems()
    res = res or Resources()
    if task_name == "kbp-relations":
        from shareval.platform.judging.kbp_items import kbp_units    # it builds on Unit
        return kbp_units(path, res)
    if task_name == "rcc-citations":
        recs = read_citations(path, problems, submission=True)
        return {f"{r.publication_id}|{r.data_set_id}": Unit(
            r.publication_id, r.publication_id, dataset_title(res, r.data_set_id),
            tuple(m for m in r.mentions if isinstance(m, str)))
            for r in (recs.records if recs else [])}
    if task_name == "rcc-mentions":
        recs = read_mentions(path, problems)
        return {f"{r.publication_id}|{r.mention}": Unit(r.publication_id, r.publication_id,
                                                         f"“{r.mention}”", (r.mention,))
                for r in (recs.records if recs else [])}
    if task_name == "svident-detection":
        pred = read_detection(path, problems)
        sents = res.sentences
        return {u: Unit(sents.get(u, {}).get("doc", u), u, "mentions a survey variable")
                for u, v in (pred.values.items() if pred else []) if v == 1}
    if task_name == "svident-disambiguation":
        pred = read_disambiguation(path, problems)
        sents, out = res.sentences, {}
        for u, ranking in (pred.values.items() if pred else []):
            top = sorted(ranking.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_VARIABLES]
            for vid, _ in top:
                out[f"{u}|{vid}"] = Unit(sents.get(u, {}).get("doc", u), u,
                                         variable_text(res, vid))
        return out
    return _line_units(task_name, path)


def _line_units(task_name, path) -> dict[str, Unit]:
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.lstrip()[:1] in (b"{", b"[") or head[:2] == b"\x1f\x8b" or head[:4] == b"PK\x03\x04" \
            or b"\x00" in head:
        # a JSON document or an archive is not one unit per line: read as lines, one
        # "unit" would be a whole run file, shown to every judge of that item
        raise ValueError(f"{task_name} runs are not one item per line: build this campaign "
                         f"from an items file")
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for _, cols in output_rows(f):                  # as `assess sample` reads them
            key = SEP.join(cols)
            if len(key) > MAX_LINE:
                raise ValueError(f"a {task_name} run has an item of {len(key)} characters "
                                 f"(at most {MAX_LINE} per item): build this campaign from "
                                 f"an items file")
            out[key] = Unit(cols[0], cols[0], " ".join(cols))
    return out


# views: the content around a unit -------------------------------------------------------

def _flexible(needle: str) -> str:
    """A mention as a pattern that spans line breaks, hyphens and spacing between words."""
    toks = re.findall(r"\w+", needle)
    if not toks:
        return re.escape(needle)
    return r"\W+".join(re.escape(t) for t in toks)


def marked(text: str, needles) -> list[dict]:
    """``text`` as segments [{"t": str, "m": bool}], occurrences of ``needles`` marked."""
    needles = sorted({n for n in needles if n and n.strip()}, key=len, reverse=True)
    if not needles:
        return [{"t": text, "m": False}]
    pat = re.compile("|".join(_flexible(n) for n in needles), re.I)
    out, at = [], 0
    for m in pat.finditer(text):
        if m.start() > at:
            out.append({"t": text[at:m.start()], "m": False})
        out.append({"t": m.group(0), "m": True})
        at = m.end()
    if at < len(text):
        out.append({"t": text[at:], "m": False})
    return out


def passages(text: str, mentions, width: int = PASSAGE, most: int = MAX_PASSAGES) -> list[dict]:
    """Passages around each mention's occurrences, merged when they overlap."""
    spans = []
    for m in {x for x in mentions if x and len(x.strip()) > 1}:
        for k, hit in enumerate(re.finditer(_flexible(m), text, re.I)):
            if k >= most:
                break
            spans.append([max(0, hit.start() - width), min(len(text), hit.end() + width), m])
    spans.sort()
    merged: list[list] = []
    for s, e, m in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
            merged[-1][2].add(m)
        else:
            merged.append([s, e, {m}])
    out = []
    for s, e, ms in merged[:3 * most]:
        if s > 0:                                   # whole words at both ends
            s = next((k + 1 for k in range(s, min(s + 30, e)) if text[k].isspace()), s)
        if e < len(text):
            e = next((k for k in range(e, max(e - 30, s), -1) if text[k].isspace()), e)
        seg = marked(" ".join(text[s:e].split()), ms)
        out.append({"segments": seg, "cut_start": s > 0, "cut_end": e < len(text)})
    return out


def sentence_view(res: Resources, uuid: str, neighbours: int = 2) -> dict:
    s = res.sentences.get(uuid)
    if s is None:
        return {"kind": "sentence", "sentence": f"(sentence {uuid} is not in the dataset's "
                                                f"files)", "before": [], "after": []}
    us, i = s["doc_uuids"], s["pos"]
    text = lambda u: res.sentences[u]["text"]          # noqa: E731
    return {"kind": "sentence", "sentence": s["text"], "doc": s["doc"], "lang": s["lang"],
            "before": [text(u) for u in us[max(0, i - neighbours):i]],
            "after": [text(u) for u in us[i + 1:i + 1 + neighbours]]}


def publication_view(res: Resources, pub: str, mentions) -> dict:
    text = res.text_of(pub)
    return {"kind": "publication", "title": res.titles.get(pub) or f"Publication {pub}",
            "has_text": text is not None,
            "passages": passages(text, mentions) if text else [],
            "mentions": sorted({m for m in mentions if m})}


def view_for(task_name: str, res: Resources, group: str, units: list[Unit]) -> dict:
    """The content judges read before the outputs: one sentence, one publication."""
    if task_name.startswith("svident"):
        return sentence_view(res, group)
    if task_name.startswith("rcc"):
        return publication_view(res, group, [m for u in units for m in u.mentions])
    return {"kind": "text", "text": group}


def empty_output(task_name: str) -> str:
    """A team's output for a shown document when it output nothing there, in words."""
    return {"svident-detection": "no survey variable mentioned",
            "svident-disambiguation": "no variable proposed",
            "rcc-citations": "no dataset cited",
            "rcc-mentions": "no data mention found"}.get(task_name, "nothing output here")


def item_view(design: str, payload: dict) -> dict:
    """The view of an item: built from runs (``view``), else from an items file's
    payload: a MATERIAL summary, a KBP-style relation with its provenance, or text."""
    v = payload.get("view")
    if isinstance(v, dict) and v.get("kind"):
        return v
    if design == "summary_relevance" or "query" in payload:
        summary = payload.get("summary")
        return {"kind": "summary", "query": str(payload.get("query") or ""),
                "domain": str(payload.get("domain") or ""),
                "summary": [str(w) for w in summary] if isinstance(summary, list) else [],
                "image": payload.get("image")}
    rel = payload.get("relation")
    if isinstance(rel, dict):
        subj, obj = str(rel.get("subject") or ""), str(rel.get("object") or "")
        prov = str(payload.get("provenance") or payload.get("sentence") or "")
        return {"kind": "relation", "subject": subj, "relation": str(rel.get("relation") or ""),
                "object": obj, "provenance": marked(prov, [subj, obj]) if prov else [],
                "source": str(payload.get("source") or "")}
    return {"kind": "text", "text": str(payload.get("text") or "")}


def summary_line(view: dict, limit: int = 160) -> str:
    """One line of an item's content, for the organizers' pages."""
    kind = view.get("kind")
    text = {"sentence": view.get("sentence"), "publication": view.get("title"),
            "summary": f"query: {view.get('query', '')}",
            "relation": f"{view.get('subject')} — {view.get('relation')} — "
                        f"{view.get('object')}",
            "relation_doc": f"“{view.get('subject')}” — {view.get('relation')} — "
                            f"“{view.get('object')}” (in {view.get('title')})",
            }.get(kind) or view.get("text") or ""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def paragraphs(text: str, size: int = 900) -> list[str]:
    """Readable paragraphs of an extracted text: hard line breaks joined (a hyphen at
    a line end joins the word), blank lines kept as breaks, long runs cut after a
    sentence end near ``size`` characters."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = re.sub(r"-\n(?=[a-z])", "", block)
        block = " ".join(block.split())
        while len(block) > 2 * size:
            cut = block.find(". ", size)
            if cut < 0:
                break
            out.append(block[:cut + 1])
            block = block[cut + 2:]
        if block:
            out.append(block)
    return out
