"""WebAnno TSV 3.3 (INCEpTION's column format): one document per ``.tsv`` file.

Layers written and read: spans as ``NamedEntity`` (columns ``identifier`` = the linked
entry key, ``value`` = label) and relations as ``webanno.custom.Relation`` (column
``label`` and the governor's token address; the relation sits on the dependent's first
token, ``[governor_dependent]`` disambiguation ids when either end needs one). Columns
of other layers are skipped when empty; an annotation in one is a problem (it would be
lost). Answers and sentence-level links have no place in the format.

Writing: sentences are ``Doc.sentences`` or the text's lines; tokens are words and single
punctuation marks, cut at every span edge, so spans are whole tokens and a round trip is
exact. Each sentence's ``#Text`` runs to the next sentence, so the white space between
sentences (paragraph breaks) is kept. Offsets count UTF-16 units, as Java's.

Reading rebuilds the text from the ``#Text`` lines placed at their first token's offset;
a gap (text before the first sentence) is filled with spaces, or from the unit's text
when that is white space there. Problems name the file, line and field.
"""
from __future__ import annotations

import bisect
import re
from pathlib import Path, PurePosixPath

from .errors import Problems
from .standoff import (Doc, Relation, Span, check_text, from_utf16, named_spans,
                       token_sentences, utf16_offsets)
from .zipped import document_id, member_path, read_files

FORMAT = "#FORMAT=WebAnno TSV 3.3"
NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
RELATION = "webanno.custom.Relation"
HEADER = (f"{FORMAT}\n#T_SP={NAMED_ENTITY}|identifier|value\n"
          f"#T_RL={RELATION}|label|BT_{NAMED_ENTITY}\n\n\n")

VALUE_ESCAPES = [("\\", "\\\\"), ("[", "\\["), ("]", "\\]"), ("|", "\\|"), ("_", "\\_"),
                 ("->", "\\->"), (";", "\\;"), ("\t", "\\t"), ("\n", "\\n"), ("*", "\\*")]
TEXT_ESCAPES = [("\\", "\\\\"), ("\t", "\\t"), ("\r", "\\r"), ("\f", "\\f"), ("\b", "\\b")]
TOKEN_ESCAPES = TEXT_ESCAPES + [("\n", "\\n")]   # a white-space token may hold a line break


def _escape(text: str, table) -> str:
    out, i = [], 0
    while i < len(text):
        for raw, esc in table:
            if text.startswith(raw, i):
                out.append(esc)
                i += len(raw)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def escape_value(v: str) -> str:
    return _escape(v, VALUE_ESCAPES)


def escape_text(t: str) -> str:
    return _escape(t, TEXT_ESCAPES)


def escape_token(t: str) -> str:
    return _escape(t, TOKEN_ESCAPES)


def _unescaper(table):
    pattern = re.compile("|".join(re.escape(esc) for _, esc in
                                  sorted(table, key=lambda p: -len(p[1]))))
    back = {esc: raw for raw, esc in table}
    return lambda s: pattern.sub(lambda m: back[m.group(0)], s)


unescape_value = _unescaper(VALUE_ESCAPES)
unescape_text = _unescaper(TEXT_ESCAPES)
unescape_token = _unescaper(TOKEN_ESCAPES)
STACK_SEP = re.compile(r"(?<!\\)\|")
SUFFIX_ID = re.compile(r"(?<!\\)\[(\d+)\]$")


# --- writing -----------------------------------------------------------------------

def write_webanno_tsv(doc: Doc) -> str:
    u16 = utf16_offsets(doc.text)
    sentences = token_sentences(doc)
    tokens = [(s, t, b, e) for s, toks in enumerate(sentences, 1)
              for t, (b, e) in enumerate(toks, 1)]
    starts = [b for _, _, b, _ in tokens]
    spans = named_spans(doc)
    covered = {sid: _covered(starts, tokens, s) for sid, s in spans.items()}
    on_token: dict[int, list[str]] = {}
    for sid, idx in covered.items():
        for k in idx:
            on_token.setdefault(k, []).append(sid)
    numbers: dict[str, int] = {}
    for sid, idx in covered.items():         # multi-token or stacked spans need an id
        if len(idx) > 1 or any(len(on_token[k]) > 1 for k in idx):
            numbers[sid] = len(numbers) + 1
    relations_on: dict[int, list[Relation]] = {}
    for r in doc.relations:
        relations_on.setdefault(covered[r.tail][0], []).append(r)
    out = [HEADER]
    for s, toks in enumerate(sentences, 1):
        end = sentences[s][0][0] if s < len(sentences) else len(doc.text)
        for line in doc.text[toks[0][0]:end].split("\n"):
            out.append(f"#Text={escape_text(line)}\n")
        for k in (i for i, tok in enumerate(tokens) if tok[0] == s):
            _, t, b, e = tokens[k]
            ids = on_token.get(k, [])
            ident = [_item(spans[i].target, numbers.get(i)) for i in ids]
            value = [_item(spans[i].label, numbers.get(i)) for i in ids]
            rels = relations_on.get(k, [])
            labels = [escape_value(r.label) or "*" for r in rels]
            bases = [_base(tokens[covered[r.head][0]], numbers.get(r.head, 0),
                           numbers.get(r.tail, 0)) for r in rels]
            cells = ["|".join(c) or "_" for c in (ident, value, labels, bases)]
            out.append("\t".join([f"{s}-{t}", f"{u16[b]}-{u16[e]}",
                                  escape_token(doc.text[b:e]), *cells]) + "\n")
        out.append("\n")
    return "".join(out)


def _covered(starts, tokens, span: Span) -> list[int]:
    k = bisect.bisect_left(starts, span.begin)
    out = []
    while k < len(tokens) and tokens[k][3] <= span.end:
        out.append(k)
        k += 1
    return out


def _item(value: str, number: int | None) -> str:
    return (escape_value(value) or "*") + (f"[{number}]" if number else "")


def _base(token, gov: int, dep: int) -> str:
    return f"{token[0]}-{token[1]}" + (f"[{gov}_{dep}]" if gov or dep else "")


# --- reading -----------------------------------------------------------------------

def read_webanno_tsv(path: str | Path, problems: Problems,
                     expected: dict[str, str] | None = None) -> list[Doc] | None:
    """Documents of a .tsv file, or of a zip or folder of them (id = the file's stem)."""
    files = read_files(path, problems, (".tsv",))
    if files is None:
        return None
    docs = []
    for name in sorted(files):
        where = member_path(path, name)
        doc_id = document_id(PurePosixPath(name).stem, expected)
        try:
            text = files[name].decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as e:
            problems.fatal(where, None, "encoding", f"not valid UTF-8 (byte {e.start})")
            continue
        doc = _TsvReader(where, problems).read(doc_id, text, expected)
        if doc is not None:
            docs.append(doc)
    return None if problems else docs


class _Column:
    def __init__(self, layer: str, kind: str, feature: str, line: int):
        self.layer, self.kind, self.feature, self.line = layer, kind, feature, line


class _TsvReader:
    ADDRESS = re.compile(r"^(\d+)-(\d+)(?:\.(\d+))?$")
    OFFSETS = re.compile(r"^(\d+)-(\d+)$")
    BASE = re.compile(r"^(\d+-\d+(?:\.\d+)?)(?:\[(\d+)_(\d+)\])?$")

    def __init__(self, where: str, problems: Problems):
        self.where, self.problems = where, problems
        self.columns: list[_Column] = []
        self.reported_layers: set[str] = set()

    def add(self, line, field_name, message):
        self.problems.add(self.where, line, field_name, message)

    def read(self, doc_id: str, text: str, expected: dict[str, str] | None) -> Doc | None:
        before = self.problems.total
        lines = text.split("\n")
        if not re.match(r"^#FORMAT=WebAnno TSV 3(\.\d+)?\s*$", lines[0] if lines else ""):
            self.problems.fatal(self.where, 1, "#FORMAT", "expected 'WebAnno TSV 3.x' on the "
                                                          "first line")
            return None
        n = self._header(lines)
        built = self._body(lines, n)
        if built is None:
            return None
        doc_text, gaps, text_lines, token_rows, sentences = built
        if expected is not None and doc_id in expected:
            doc_text = _fill(doc_text, gaps, expected[doc_id])
        doc = Doc(doc_id, doc_text)
        to_index = from_utf16(doc_text)
        placed = self._tokens(token_rows, doc_text, to_index)
        doc.sentences = [(placed[a][0], placed[b][1]) for a, b in sentences
                         if a in placed and b in placed]
        self._annotations(doc, token_rows, placed)
        if expected is not None:
            if doc_id not in expected:
                self.add(None, "file", f"{doc_id!r} is not a unit of the project")
            else:
                starts = [o for o, _ in text_lines]
                check_text(doc_text, expected[doc_id], self.problems, self.where, "#Text",
                           lambda i: text_lines[max(0, bisect.bisect_right(starts, i) - 1)][1]
                           if text_lines else None)
        return doc if self.problems.total == before else None

    def _header(self, lines: list[str]) -> int:
        n = 1
        while n < len(lines) and lines[n].startswith("#T_"):
            kind, _, rest = lines[n][1:].partition("=")
            fields = rest.split("|")
            layer, features = fields[0], fields[1:] or [""]
            for f in features:
                self.columns.append(_Column(layer, kind, f, n + 1))
            n += 1
        return n

    def _body(self, lines: list[str], n: int):
        """The text, its gaps, (text offset, line) of each #Text line, the token rows
        and each sentence's first and last token row."""
        parts, length16, gaps = [], 0, []
        text_lines: list[tuple[int, int]] = []
        pending: list[tuple[int, str]] = []      # #Text lines of the sentence being read
        rows, sentences = [], []
        pylen = 0
        for number, line in enumerate(lines[n:], n + 1):
            if line.startswith("#Text="):
                if rows and sentences and sentences[-1][1] is None:
                    sentences[-1][1] = len(rows) - 1
                pending.append((number, unescape_text(line[len("#Text="):])))
                continue
            if not line.strip() or line.startswith("#"):
                continue
            row = self._row(number, line)
            if row is None:
                continue
            if pending:                           # the sentence's first token: place its text
                b16 = row[2]
                if b16 < length16:
                    self.add(number, "offsets", f"the sentence starts at {b16}, inside the "
                                                f"text before it (which ends at {length16})")
                elif b16 > length16:
                    gaps.append((pylen, pylen + b16 - length16))
                    parts.append(" " * (b16 - length16))
                    pylen += b16 - length16
                    length16 = b16
                for k, (ln, t) in enumerate(pending):
                    text_lines.append((pylen, ln))
                    piece = t + ("\n" if k < len(pending) - 1 else "")
                    parts.append(piece)
                    pylen += len(piece)
                    length16 += utf16_offsets(piece)[-1]
                if sentences and sentences[-1][1] is None:
                    sentences[-1][1] = len(rows) - 1
                sentences.append([len(rows), None])
                pending = []
            elif not sentences:
                self.add(number, "#Text", "a token before any #Text line")
                continue
            rows.append(row)
        if sentences and sentences[-1][1] is None:
            sentences[-1][1] = len(rows) - 1
        if pending:
            self.add(pending[0][0], "#Text", "a sentence without tokens")
        return "".join(parts), gaps, text_lines, rows, [tuple(s) for s in sentences]

    def _row(self, number: int, line: str):
        fields = line.split("\t")
        if len(fields) == len(self.columns) + 4 and fields[-1] == "":
            fields = fields[:-1]                  # a trailing tab
        if len(fields) != len(self.columns) + 3:
            self.add(number, "columns", f"expected {len(self.columns) + 3} tab-separated "
                                        f"fields (3 + the header's {len(self.columns)} "
                                        f"columns), found {len(fields)}")
            return None
        address, offsets = self.ADDRESS.match(fields[0]), self.OFFSETS.match(fields[1])
        if address is None:
            self.add(number, "token id", f"expected sentence-token (1-3 or 1-3.1), "
                                         f"found {fields[0]!r}")
            return None
        if offsets is None or int(offsets.group(1)) >= int(offsets.group(2)):
            self.add(number, "offsets", f"expected begin-end with begin < end, found "
                                        f"{fields[1]!r}")
            return None
        return (number, fields[0], int(offsets.group(1)), int(offsets.group(2)),
                unescape_token(fields[2]), fields[3:])

    def _tokens(self, rows, text: str, to_index: dict[int, int]) -> dict[int, tuple]:
        placed = {}
        for k, (number, _, b16, e16, token, _) in enumerate(rows):
            b, e = to_index.get(b16), to_index.get(e16)
            if b is None or e is None:
                self.add(number, "offsets", f"{b16}-{e16} is outside the text rebuilt from "
                                            f"the #Text lines (UTF-16 length "
                                            f"{utf16_offsets(text)[-1]})")
                continue
            if text[b:e] != token:
                self.add(number, "token", f"{token!r}, but the text at {b16}-{e16} is "
                                          f"{text[b:e]!r}")
                continue
            placed[k] = (b, e)
        return placed

    def _annotations(self, doc: Doc, rows, placed) -> None:
        cols = self.columns
        ne = {c.feature: i for i, c in enumerate(cols)
              if c.kind == "T_SP" and c.layer == NAMED_ENTITY}
        rel = {c.feature: i for i, c in enumerate(cols)
               if c.kind == "T_RL" and c.layer == RELATION}
        base = next((i for i, c in enumerate(cols) if c.kind == "T_RL" and c.layer == RELATION
                     and c.feature.startswith("BT_")), None)
        known = set(ne.values()) | set(rel.values())
        spans: dict[tuple, list] = {}
        at: dict[tuple, set[str]] = {}          # the token addresses each span is on
        for k, (number, address, _, _, _, cells) in enumerate(rows):
            self._unknown(number, cells, known)
            if k not in placed:
                continue
            b, e = placed[k]
            values = self._stack(number, cells, ne.get("value"), "value")
            idents = self._stack(number, cells, ne.get("identifier"), "identifier")
            if values and idents and len(values) != len(idents):
                self.add(number, "identifier", f"{len(idents)} stacked items, but "
                                               f"{len(values)} in the value column")
                continue
            for j in range(max(len(values), len(idents))):
                v = values[j] if values else (None, None)
                t = idents[j] if idents else (None, None)
                if None not in (v[1], t[1]) and v[1] != t[1]:
                    self.add(number, "identifier", f"item {j + 1} is annotation [{t[1]}], "
                                                   f"the value column's is [{v[1]}]")
                    continue
                n_id = v[1] if v[1] is not None else t[1]
                key = ("id", n_id) if n_id is not None else ("tok", address, j)
                at.setdefault(key, set()).add(address)
                label, target = _null(v[0]), _null(t[0])
                if key not in spans:
                    spans[key] = [b, e, label, target, number]
                    continue
                s = spans[key]
                if (s[2], s[3]) != (label, target):
                    self.add(number, "value", f"annotation [{n_id}] is {label!r} ({target!r}) "
                                              f"here, {s[2]!r} ({s[3]!r}) at line {s[4]}")
                s[0], s[1] = min(s[0], b), max(s[1], e)
        ordered = sorted(spans.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][4]))
        ids = {key: str(i) for i, (key, _) in enumerate(ordered, 1)}
        doc.spans = [Span(s[0], s[1], s[2], s[3], ids[key]) for key, s in ordered]
        if base is not None:
            self._relations(doc, rows, rel.get("label"), base, ids, at)

    def _relations(self, doc: Doc, rows, label_col, base_col, ids, at) -> None:
        for number, address, _, _, _, cells in rows:
            bases = self._stack(number, cells, base_col, "BT", raw=True)
            labels = self._stack(number, cells, label_col, "label")
            if not bases:
                continue
            if labels and len(labels) != len(bases):
                self.add(number, "label", f"{len(labels)} relation labels for "
                                          f"{len(bases)} governors")
                continue
            for j, item in enumerate(bases):
                m = self.BASE.match(item)
                if m is None:
                    self.add(number, "BT", f"expected a token address like 1-3 or 1-3[2_1], "
                                           f"found {item!r}")
                    continue
                gov = ("id", int(m.group(2))) if m.group(2) and m.group(2) != "0" else \
                    ("tok", m.group(1), 0)
                dep = ("id", int(m.group(3))) if m.group(3) and m.group(3) != "0" else \
                    ("tok", address, 0)
                gov_ok = gov in ids and m.group(1) in at[gov]
                if not gov_ok or dep not in ids or address not in at[dep]:
                    self.add(number, "BT", f"{item!r}: no {'dependent' if gov_ok else 'governor'} "
                                           f"span there")
                    continue
                label = _null(labels[j][0]) if labels else ""
                doc.relations.append(Relation(ids[gov], ids[dep], label))

    def _stack(self, number, cells, col, field_name, raw=False) -> list:
        """The stacked items of a cell: (value, disambiguation id or None), or raw strings."""
        if col is None or cells[col] in ("_", ""):
            return []
        items = STACK_SEP.split(cells[col])
        if raw:
            return items
        out = []
        for item in items:
            m = SUFFIX_ID.search(item)
            value = item[:m.start()] if m else item
            out.append((None if value == "*" else unescape_value(value),   # * = no value
                        int(m.group(1)) if m else None))
        return out

    def _unknown(self, number, cells, known) -> None:
        for i, cell in enumerate(cells):
            c = self.columns[i]
            if i in known or cell in ("_", "") or c.layer in self.reported_layers:
                continue
            self.reported_layers.add(c.layer)
            self.add(number, c.layer, f"an annotation of a layer that is not read (declared "
                                      f"at line {c.line}; only {NAMED_ENTITY} and "
                                      f"{RELATION} are): it would be lost")


def _null(value: str | None) -> str:
    return value or ""


def _fill(text: str, gaps: list[tuple[int, int]], expected: str) -> str:
    """The unit's text where this one has filler spaces (or lacks a white-space end)."""
    if len(text) > len(expected):
        return text
    tail = expected[len(text):]
    if tail.strip():
        return text
    chars = list(text)
    for b, e in gaps:
        if expected[b:e].strip():
            return text
        chars[b:e] = expected[b:e]
    return "".join(chars) + tail
