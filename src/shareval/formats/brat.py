"""brat standoff: a ``.txt`` and an ``.ann`` per document (id = the files' stem).

``.ann`` lines read and written:

* ``T1<TAB>Label begin end<TAB>text``: a span (character offsets into the ``.txt``, end
  exclusive). The text field must be the ``.txt`` slice, with line breaks as spaces
  (brat's own writing). Discontinuous spans (``b e;b e``) are refused: the workbench
  has none.
* ``N1<TAB>Reference T1 Catalog:KEY<TAB>title``: the span's linked entry (``KEY`` may
  hold further colons; the catalog name is not kept).
* ``R1<TAB>Label Arg1:T1 Arg2:T2``: a relation, Arg1 the head, Arg2 the tail.

``#`` annotator notes and ``A``/``M`` attributes are skipped (no place in the model);
events (``E``) and equivalences (``*``) are problems, since dropping them would lose
annotations. Answers and sentence-level links have no place in brat.
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from .errors import Problems
from .standoff import Doc, Relation, Span, check_text, named_spans
from .zipped import document_id, file_names, member_path, read_files, write_zip

CATALOG = "Catalog"
SPAN_LINE = re.compile(r"^(.+) (\d+) (\d+)$")
NORM_LINE = re.compile(r"^Reference (T\S+) ([^:\s]+):(\S.*)$")
REL_LINE = re.compile(r"^(.+) Arg1:(T\S+) Arg2:(T\S+)$")


def _shown(body: str, width: int = 80) -> str:
    """A bad line as quoted in a problem: at most ``width`` characters of it."""
    return repr(body if len(body) <= width else body[:width] + "…")


def _flat(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def write_ann(doc: Doc, titles: dict[str, str] | None = None) -> str:
    """The ``.ann`` text; ``titles`` (entry key -> title) fills the normalizations'
    third field."""
    out, tid = [], {}
    for n, (sid, s) in enumerate(named_spans(doc).items(), 1):
        tid[sid] = f"T{n}"
        out.append(f"T{n}\t{s.label or 'Span'} {s.begin} {s.end}\t"
                   f"{_flat(doc.text[s.begin:s.end])}\n")
    norms = [(tid[sid], s.target) for sid, s in named_spans(doc).items() if s.target]
    for n, (t, key) in enumerate(norms, 1):
        out.append(f"N{n}\tReference {t} {CATALOG}:{key}\t{_flat((titles or {}).get(key, key))}\n")
    for n, r in enumerate(doc.relations, 1):
        out.append(f"R{n}\t{r.label or 'Relation'} Arg1:{tid[r.head]} Arg2:{tid[r.tail]}\t\n")
    return "".join(out)


def write_brat(docs: list[Doc], dest: Path, titles: dict[str, str] | None = None) -> Path:
    """A zip of ``<id>.txt`` + ``<id>.ann`` pairs (ids made file-system safe)."""
    files: dict[str, str | bytes] = {}
    for name, doc in zip(file_names([d.id for d in docs], ""), docs):
        files[name + ".txt"] = doc.text.encode("utf-8")
        files[name + ".ann"] = write_ann(doc, titles)
    return write_zip(dest, files)


def read_brat(path: str | Path, problems: Problems, expected: dict[str, str] | None = None
              ) -> list[Doc] | None:
    """The documents of a zip or folder of .txt/.ann pairs, or of one .ann (with its .txt)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".ann":
        files = {}
        for p in (path, path.with_suffix(".txt")):
            if p.exists():
                files[p.name] = p.read_bytes()
        root = path.parent
    else:
        files = read_files(path, problems, (".ann", ".txt"))
        root = path
        if files is None:
            return None
    anns = sorted(n for n in files if n.endswith(".ann"))
    if not anns:
        problems.fatal(path, None, "file", "no .ann file found")
        return None
    docs = []
    for ann in anns:
        txt = ann[:-4] + ".txt"
        if txt not in files:
            problems.add(member_path(root, ann), None, "file", f"no {PurePosixPath(txt).name} "
                                                               f"beside it")
            continue
        doc = _read_pair(files, ann, txt, root, problems, expected)
        if doc is not None:
            docs.append(doc)
    return None if problems else docs


def _decode(data: bytes, where: str, problems: Problems) -> str | None:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        problems.fatal(where, data.count(b"\n", 0, e.start) + 1, "encoding",
                       f"not valid UTF-8 (byte {e.start})")
        return None


def _read_pair(files, ann, txt, root, problems: Problems, expected) -> Doc | None:
    where, txt_where = member_path(root, ann), member_path(root, txt)
    text, lines = _decode(files[txt], txt_where, problems), _decode(files[ann], where, problems)
    if text is None or lines is None:
        return None
    before = problems.total
    doc = Doc(document_id(PurePosixPath(ann).stem, expected), text)
    spans: dict[str, Span] = {}
    linked: dict[str, int] = {}
    relations = []
    for number, line in enumerate(lines.split("\n"), 1):
        if not line.strip():
            continue
        ident, _, rest = line.partition("\t")
        kind = ident[:1]
        body, _, quoted = rest.partition("\t")
        if kind == "T":
            span = _span(where, number, ident, body, quoted, text, problems)
            if span is not None:
                if ident in spans:
                    problems.add(where, number, "id", f"{ident} is defined twice")
                spans[ident] = span
        elif kind == "N":
            m = NORM_LINE.match(body)
            if m is None:
                problems.add(where, number, "normalization", f"expected 'Reference T1 "
                                                             f"Catalog:KEY', found {_shown(body)}")
            elif m.group(1) not in spans:
                problems.add(where, number, "Reference", f"{m.group(1)} is not a span "
                                                         f"defined above")
            elif m.group(1) in linked:
                problems.add(where, number, "Reference", f"{m.group(1)} is already linked "
                                                         f"at line {linked[m.group(1)]}")
            else:
                spans[m.group(1)].target = m.group(3).strip()
                linked[m.group(1)] = number
        elif kind == "R":
            m = REL_LINE.match(body)
            if m is None:
                problems.add(where, number, "relation", f"expected 'Label Arg1:T1 Arg2:T2', "
                                                        f"found {_shown(body)}")
            else:
                relations.append((number, m.group(1), m.group(2), m.group(3)))
        elif kind in ("#", "A", "M"):
            continue
        else:
            problems.add(where, number, "id", f"{ident!r}: only T, N and R annotations are "
                                              f"read (# notes and A/M attributes skipped)")
    for number, label, head, tail in relations:
        missing = [a for a in (head, tail) if a not in spans]
        if missing:
            problems.add(where, number, "Arg1" if head in missing else "Arg2",
                         f"{missing[0]} is not a span of the file")
            continue
        doc.relations.append(Relation(head, tail, label))
    doc.spans = sorted(spans.values(), key=lambda s: (s.begin, s.end))
    if expected is not None:
        if doc.id not in expected:
            problems.add(txt_where, None, "file", f"{doc.id!r} is not a unit of the project")
        else:
            check_text(text, expected[doc.id], problems, txt_where, "text",
                       lambda i: text.count("\n", 0, i) + 1)
    return doc if problems.total == before else None


def _span(where, number, ident, body, quoted, text, problems: Problems) -> Span | None:
    if ";" in body:
        problems.add(where, number, "offsets", f"{ident} is discontinuous ({_shown(body)}); only "
                                               f"continuous spans are read")
        return None
    m = SPAN_LINE.match(body)
    if m is None:
        problems.add(where, number, "span", f"expected 'Label begin end', found {_shown(body)}")
        return None
    b, e = int(m.group(2)), int(m.group(3))
    if not b < e <= len(text):
        problems.add(where, number, "offsets", f"{ident} [{b}, {e}) is outside the .txt "
                                               f"(length {len(text)}) or empty")
        return None
    if _flat(text[b:e]) != _flat(quoted):
        problems.add(where, number, "text", f"{ident} quotes {quoted!r}, but the .txt has "
                                            f"{text[b:e]!r} at [{b}, {e})")
        return None
    return Span(b, e, m.group(1), "", ident)
