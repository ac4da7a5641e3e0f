"""One entry point per direction over every workbench format.

``write_export(docs, fmt, dest)`` writes ``dest`` (a zip for the multi-document formats;
for ``rcc`` a folder, or a zip of it when ``dest`` ends in ``.zip``; for ``redocred`` the
documents file with relations.json beside it, or a zip of both).
``read_import(path, fmt, expected, problems)`` reads documents back; ``expected`` (unit
key -> text) is checked against the file's text, and gives the text where the format
has none:

* ``rcc``: each mention of a citation becomes a span at every place the unit's text holds
  it, linked to the citation's data set (a ``pub|ds`` unit takes only that data set's);
* ``svident``: a row is a sentence unit (its uuid), links in ``meta["variables"]``;
* ``redocred``: the file's text; an entity's mentions are spans linked to ``e<index>`` (the
  format has no entity ids), relations between the entities' first mentions.
"""
from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path

from . import kbp, rcc, svident
from .brat import read_brat, write_brat
from .errors import Problems
from .gold import write_rcc_gold, write_redocred, write_svident_tsv
from .standoff import LINKS, Doc, Relation, Span, check_text
from .webanno_tsv import read_webanno_tsv, write_webanno_tsv
from .xmi import read_xmi, write_xmi
from .zipped import file_names, read_files, write_zip

FORMATS = ("xmi", "webanno", "brat", "rcc", "svident", "redocred")


def write_export(docs: list[Doc], fmt: str, dest: Path, relations: dict[str, str] | None = None
                 ) -> Path:
    dest = Path(dest)
    if fmt == "xmi":
        return write_xmi(docs, dest)
    if fmt == "webanno":
        names = file_names([d.id for d in docs], ".tsv")
        return write_zip(dest, {n: write_webanno_tsv(d) for n, d in zip(names, docs)})
    if fmt == "brat":
        return write_brat(docs, dest)
    if fmt == "svident":
        return write_svident_tsv(docs, dest)
    if fmt in ("rcc", "redocred"):
        if dest.suffix.lower() != ".zip":
            return write_rcc_gold(docs, dest) if fmt == "rcc" else \
                write_redocred(docs, dest, relations)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            if fmt == "rcc":
                write_rcc_gold(docs, folder)
            else:
                write_redocred(docs, folder / kbp.DOCUMENTS, relations)
            files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        return write_zip(dest, files)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def read_import(path: Path, fmt: str, expected: dict[str, str] | None, problems: Problems
                ) -> list[Doc] | None:
    path = Path(path)
    if fmt == "xmi":
        return read_xmi(path, problems, expected)
    if fmt == "webanno":
        return read_webanno_tsv(path, problems, expected)
    if fmt == "brat":
        return read_brat(path, problems, expected)
    if fmt in ("rcc", "svident", "redocred"):
        with _unzipped(path) as local:
            return {"rcc": _rcc, "svident": _svident, "redocred": _redocred}[fmt](
                local, expected, problems)
    problems.fatal(path, None, "format", f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    return None


class _unzipped:
    """A zip's JSON/TSV files in a temporary folder (the readers take paths)."""

    def __init__(self, path: Path):
        self.path, self.tmp = path, None

    def __enter__(self) -> Path:
        if not zipfile.is_zipfile(self.path):
            return self.path
        files = read_files(self.path, Problems(), (".json", ".tsv"))
        self.tmp = Path(tempfile.mkdtemp())
        for name, data in (files or {}).items():
            target = self.tmp / Path(name).name
            target.write_bytes(data)
        return self.tmp

    def __exit__(self, *exc):
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _need_expected(path, expected, problems, fmt) -> bool:
    if expected is None:
        problems.fatal(path, None, "format", f"{fmt} files hold no full text: import them "
                                             f"into a project whose units have it")
        return False
    return True


def _rcc(path: Path, expected, problems: Problems) -> list[Doc] | None:
    if not _need_expected(path, expected, problems, "RCC"):
        return None
    cites = rcc.read_citations(path, problems, False)
    if cites is None:
        return None
    by_pub: dict[str, list[str]] = {}
    for key in expected:
        by_pub.setdefault(key.split("|", 1)[0], []).append(key)
    docs = {key: Doc(key, text) for key, text in expected.items()}
    for c in cites.records:
        keys = [k for k in by_pub.get(c.publication_id, [])
                if "|" not in k or k.split("|", 1)[1] == c.data_set_id]
        if not keys:
            problems.in_record(cites.path, c.line, f"record {c.index} (publication "
                                                   f"{c.publication_id})", "publication_id",
                               "not a unit of the project")
        for key in keys:
            doc = docs[key]
            for m in dict.fromkeys(c.mentions):
                at = doc.text.find(m) if m else -1
                while at >= 0:
                    doc.spans.append(Span(at, at + len(m), "dataset", c.data_set_id,
                                          f"T{len(doc.spans) + 1}"))
                    at = doc.text.find(m, at + len(m))
    return None if problems else list(docs.values())


def _svident(path: Path, expected, problems: Problems) -> list[Doc] | None:
    if not _need_expected(path, expected, problems, "SV-Ident"):
        return None
    if path.is_dir():
        path = next(iter(sorted(path.glob("*.tsv"))), path / "train.tsv")
    ref = svident.read_reference(path, problems)
    if ref is None:
        return None
    docs = []
    for uuid, s in ref.sentences.items():
        if uuid not in expected:
            problems.add(path, s.line, "uuid", f"{uuid!r} is not a unit of the project")
            continue
        meta = {"doc_id": s.doc_id, "lang": s.lang, "uuid": uuid, LINKS: list(s.variables)}
        docs.append(Doc(uuid, expected[uuid], answers={"is_variable": "yes" if s.is_variable
                                                       else "no"}, meta=meta))
    return None if problems else docs


def _redocred(path: Path, expected, problems: Problems) -> list[Doc] | None:
    ref = kbp.read_reference(path, problems)
    if ref is None:
        return None
    docs = []
    for title, d in ref.documents.items():
        spans, first = [], {}
        for e, mentions in enumerate(d.entities):
            for b, end in sorted(mentions):
                sid = f"T{len(spans) + 1}"
                first.setdefault(e, sid)
                spans.append(Span(b, end, d.types[e] if e < len(d.types) else "", f"e{e}", sid))
        rels = [Relation(first[h], first[t], r) for h, t, r in sorted(d.labels)]
        sentences = [d.token_span(i, 0, len(t)) for i, t in enumerate(d.sentences) if t]
        doc = Doc(title, d.text, spans, rels, sentences)
        if expected is not None:
            if title not in expected:
                problems.add(ref.path, None, "title", f"{title!r} is not a unit of the project")
                continue
            if not check_text(d.text, expected[title], problems, ref.path, "sents"):
                continue
        docs.append(doc)
    return None if problems else docs
