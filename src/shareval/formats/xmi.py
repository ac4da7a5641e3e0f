"""UIMA CAS XMI, as INCEpTION exports and imports it ("UIMA CAS XMI (XML 1.0)"), through
the ``dkpro-cassis`` library.

Layout: a zip (or a folder) holding ``TypeSystem.xml`` and one ``.xmi`` per document; a
single ``.xmi`` is read with the ``TypeSystem.xml`` beside it. Types, as INCEpTION's:

* spans: ``de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity`` (``value`` = label,
  ``identifier`` = the linked entry key);
* relations: the custom relation layer ``webanno.custom.Relation`` (``Governor`` = head
  span, ``Dependent`` = tail span, ``label``); begin/end are the dependent's, as
  INCEpTION places a relation;
* sentences and tokens: DKPro ``Sentence`` and ``Token`` (tokens cut at every span edge);
* the document: ``DocumentMetaData`` (``documentId`` = the document id, which names the
  unit; ``documentTitle`` = ``meta["title"]``);
* answers: ``webanno.custom.DocumentAnswer`` (a document-level annotation, like
  INCEpTION's document metadata layers), features ``question`` and ``answer``; the
  question ``variable`` holds a sentence-level link (``meta["variables"]``), one each.

Offsets: XMI counts UTF-16 units (Java); cassis maps them to Python indices. Problems name
the member file, the annotation's line in it (from the XML) and xmi:id, and the field.
"""
from __future__ import annotations

import re
from functools import lru_cache
from io import BytesIO
from pathlib import Path, PurePosixPath

import cassis
from cassis.typesystem import TypeNotFoundError
from lxml import etree

from .errors import Problems
from .standoff import LINKS, Doc, Relation, Span, check_text, named_spans, token_sentences
from .zipped import file_names, member_path, read_files, write_zip

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
SENTENCE = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence"
TOKEN = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token"
METADATA = "de.tudarmstadt.ukp.dkpro.core.api.metadata.type.DocumentMetaData"
RELATION = "webanno.custom.Relation"
ANSWER = "webanno.custom.DocumentAnswer"
LINK_QUESTION = "variable"
TYPESYSTEM = "TypeSystem.xml"
XMI_ID = "{http://www.omg.org/XMI}id"


@lru_cache(maxsize=1)
def _typesystem_xml() -> str:
    """DKPro Core's types (shipped with cassis) plus DocumentMetaData and the custom
    relation and answer layers."""
    ts = cassis.load_dkpro_core_typesystem()
    meta = ts.create_type(METADATA, "uima.tcas.DocumentAnnotation")
    for name in ("documentTitle", "documentId", "documentUri", "collectionId",
                 "documentBaseUri"):
        ts.create_feature(meta, name, "uima.cas.String")
    ts.create_feature(meta, "isLastSegment", "uima.cas.Boolean")
    rel = ts.create_type(RELATION, "uima.tcas.Annotation")
    ts.create_feature(rel, "Governor", NAMED_ENTITY)
    ts.create_feature(rel, "Dependent", NAMED_ENTITY)
    ts.create_feature(rel, "label", "uima.cas.String")
    ans = ts.create_type(ANSWER, "uima.cas.AnnotationBase")
    ts.create_feature(ans, "question", "uima.cas.String")
    ts.create_feature(ans, "answer", "uima.cas.String")
    return ts.to_xml()


def typesystem() -> cassis.TypeSystem:
    return cassis.load_typesystem(_typesystem_xml())


# --- writing -----------------------------------------------------------------------

def to_cas(doc: Doc, ts: cassis.TypeSystem) -> cassis.Cas:
    cas = cassis.Cas(typesystem=ts)
    cas.sofa_string = doc.text
    cas.sofa_mime = "text/plain"
    n = len(doc.text)
    meta = {"documentId": doc.id}
    if doc.meta.get("title"):
        meta["documentTitle"] = str(doc.meta["title"])
    cas.add(ts.get_type(METADATA)(begin=0, end=n, **meta))
    Sentence, Token = ts.get_type(SENTENCE), ts.get_type(TOKEN)
    for tokens in token_sentences(doc):
        cas.add(Sentence(begin=tokens[0][0], end=tokens[-1][1]))
        for b, e in tokens:
            cas.add(Token(begin=b, end=e))
    NE = ts.get_type(NAMED_ENTITY)
    fs = {}
    for sid, s in named_spans(doc).items():
        fs[sid] = NE(begin=s.begin, end=s.end, value=s.label, identifier=s.target or None)
        cas.add(fs[sid])
    Rel = ts.get_type(RELATION)
    for r in doc.relations:
        dep = fs[r.tail]
        cas.add(Rel(begin=dep.begin, end=dep.end, Governor=fs[r.head], Dependent=dep,
                    label=r.label))
    Answer = ts.get_type(ANSWER)
    for q, a in doc.answers.items():
        cas.add(Answer(question=q, answer=a))
    for key in doc.meta.get(LINKS, []):
        cas.add(Answer(question=LINK_QUESTION, answer=key))
    return cas


def write_xmi(docs: list[Doc], dest: Path) -> Path:
    """A zip as INCEpTION's XMI export: TypeSystem.xml and one .xmi per document."""
    ts = typesystem()
    files: dict[str, bytes | str] = {TYPESYSTEM: _typesystem_xml()}
    for name, doc in zip(file_names([d.id for d in docs], ".xmi"), docs):
        files[name] = to_cas(doc, ts).to_xmi(pretty_print=True)
    return write_zip(dest, files)


# --- reading -----------------------------------------------------------------------

def read_xmi(path: str | Path, problems: Problems, expected: dict[str, str] | None = None,
             typesystem_path: str | Path | None = None) -> list[Doc] | None:
    """Documents of a zip, a folder or one .xmi (with ``typesystem_path`` or the
    TypeSystem.xml beside it). ``expected``: document id -> the unit's text."""
    path = Path(path)
    files = read_files(path, problems, (".xmi", ".xml"))
    if files is None:
        return None
    if path.is_file() and path.suffix.lower() == ".xmi":
        ts_file = Path(typesystem_path) if typesystem_path else path.parent / TYPESYSTEM
        if not ts_file.exists():
            problems.fatal(ts_file, None, "file", f"no type system: {path.name} needs "
                                                  f"{TYPESYSTEM} beside it")
            return None
        files[TYPESYSTEM] = ts_file.read_bytes()
        ts_name = str(ts_file)
    else:
        ts_name = None
    xmis = sorted(n for n in files if n.lower().endswith(".xmi"))
    if not xmis:
        problems.fatal(path, None, "file", "no .xmi document found")
        return None
    docs = []
    for name in xmis:
        ts_key = _typesystem_member(files, name)
        where = ts_name or (ts_key and member_path(path, ts_key))
        if ts_key is None:
            problems.add(member_path(path, name), None, "file",
                         f"no {TYPESYSTEM} beside it or at the top of the archive")
            continue
        ts = _load_typesystem(files[ts_key], where, problems)
        if ts is None:
            continue
        doc = _read_one(files[name], ts, member_path(path, name), name, problems, expected)
        if doc is not None:
            docs.append(doc)
    return None if problems else docs


def _typesystem_member(files: dict[str, bytes], name: str) -> str | None:
    folder = PurePosixPath(name).parent
    by_lower = {n.lower(): n for n in files}
    for candidate in (folder / TYPESYSTEM, PurePosixPath(TYPESYSTEM)):
        found = by_lower.get(str(candidate).lower())
        if found:
            return found
    return None


def _load_typesystem(data: bytes, where: str, problems: Problems):
    try:
        ts = cassis.load_typesystem(BytesIO(data))
    except etree.XMLSyntaxError as e:
        problems.fatal(where, e.lineno, "xml", e.msg)
        return None
    except Exception as e:                      # cassis raises plain errors on bad types
        problems.fatal(where, None, "typesystem", f"not a UIMA type system ({e})")
        return None
    if not ts.contains_type(NAMED_ENTITY):
        problems.fatal(where, None, "type", f"lacks {NAMED_ENTITY}: the spans' type")
        return None
    return ts


def _read_one(data: bytes, ts, where: str, name: str, problems: Problems,
              expected: dict[str, str] | None) -> Doc | None:
    try:
        cas = cassis.load_cas_from_xmi(BytesIO(data), typesystem=ts)
    except etree.XMLSyntaxError as e:
        problems.fatal(where, e.lineno, "xml", e.msg)
        return None
    except TypeNotFoundError as e:
        problems.fatal(where, None, "type", f"{e} in the type system")
        return None
    except KeyError as e:                       # a reference to an xmi:id the file lacks
        ref = str(e.args[0]) if e.args else "?"
        at = re.search(rf'="(?:[^"]* )?{re.escape(ref)}(?: [^"]*)?"'.encode(), data)
        problems.fatal(where, None if at is None else data.count(b"\n", 0, at.start()) + 1,
                       "xmi:id", f"an annotation points to xmi:id {ref}, which the file "
                                 f"does not hold")
        return None
    except Exception as e:
        problems.fatal(where, None, "xmi", f"not a UIMA CAS XMI document ({e})")
        return None
    lines = _Lines(data)
    text = cas.sofa_string or ""
    metas = list(cas.select(METADATA)) if ts.contains_type(METADATA) else []
    doc_id = (metas[0].documentId if metas and metas[0].documentId
              else PurePosixPath(name).stem)
    doc = Doc(doc_id, text)
    if metas and metas[0].documentTitle:
        doc.meta["title"] = metas[0].documentTitle
    before = problems.total
    for fs in cas.select(NAMED_ENTITY):
        if _inside(fs, text, where, lines, problems):
            doc.spans.append(Span(fs.begin, fs.end, fs.value or "", fs.identifier or "",
                                  str(fs.xmiID)))
    known = {s.id for s in doc.spans}
    if ts.contains_type(RELATION):
        for fs in cas.select(RELATION):
            ends = [getattr(fs, f, None) for f in ("Governor", "Dependent")]
            ids = [None if e is None else str(e.xmiID) for e in ends]
            for field_name, ref in zip(("Governor", "Dependent"), ids):
                if ref not in known:
                    problems.add(where, lines.of(fs.xmiID), field_name,
                                 f"{RELATION} xmi:id={fs.xmiID}: must point to a "
                                 f"{NAMED_ENTITY} of the document")
            if all(ref in known for ref in ids):
                doc.relations.append(Relation(ids[0], ids[1], getattr(fs, "label", "") or ""))
    for fs in cas.select(SENTENCE) if ts.contains_type(SENTENCE) else []:
        if _inside(fs, text, where, lines, problems):
            doc.sentences.append((fs.begin, fs.end))
    for fs in cas.select(ANSWER) if ts.contains_type(ANSWER) else []:
        q, a = fs.question or "", fs.answer or ""
        if q == LINK_QUESTION:
            doc.meta.setdefault(LINKS, []).append(a)
        else:
            doc.answers[q] = a
    if expected is not None:
        if doc.id not in expected:
            problems.add(where, None, "documentId", f"{doc.id!r} is not a unit of the project")
        else:
            check_text(text, expected[doc.id], problems, where, "sofaString",
                       lambda i: lines.of_sofa())
    return doc if problems.total == before else None


def _inside(fs, text: str, where, lines, problems: Problems) -> bool:
    if 0 <= fs.begin <= fs.end <= len(text) and (fs.begin < fs.end or
                                                  fs.type.name != NAMED_ENTITY):
        return True
    problems.add(where, lines.of(fs.xmiID), "begin/end",
                 f"{fs.type.name.rsplit('.', 1)[-1]} xmi:id={fs.xmiID}: [{fs.begin}, {fs.end}) "
                 f"is not a non-empty range inside the text (0-{len(text)})")
    return False


class _Lines:
    """The line of each xmi:id in the file, parsed only when a problem needs one."""

    def __init__(self, data: bytes):
        self.data = data
        self._map: dict[str, int] | None = None
        self._sofa: int | None = None

    def _parse(self) -> None:
        self._map = {}
        for _, el in etree.iterparse(BytesIO(self.data), events=("start",)):
            if el.get(XMI_ID) is not None:
                self._map[el.get(XMI_ID)] = el.sourceline
            if el.tag.endswith("}Sofa"):
                self._sofa = el.sourceline

    def of(self, xmi_id) -> int | None:
        if self._map is None:
            self._parse()
        return self._map.get(str(xmi_id))

    def of_sofa(self) -> int | None:
        if self._map is None:
            self._parse()
        return self._sofa
