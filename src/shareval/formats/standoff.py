"""The neutral document model every annotation format reads into and writes from.

A :class:`Doc` is one annotated text: spans over it (character offsets, Python ``str``
indices, end exclusive) with a label and an optional linked entry key (``target``),
relations between spans (by span id), sentence bounds, per-document answers to yes/no
questions and a free ``meta`` dict. Sentence-level links (an SV-Ident sentence linked to
survey variables) are the list ``meta["variables"]`` (:data:`LINKS`): a document can
have several, where ``answers`` holds one value per question.

Helpers shared by the format modules: :func:`check_spans` (offsets inside the text,
relations between known spans), :func:`check_text` (a file's text against the unit's),
:func:`token_sentences` (sentences and tokens whose boundaries include every span edge,
so token-based formats round-trip spans exactly), UTF-16 offsets (INCEpTION counts in
Java chars) and :func:`annotation_key` (what a round trip must keep, ids aside).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import Problems

LINKS = "variables"          # Doc.meta key: sentence-level links (entry keys)


@dataclass
class Span:
    begin: int
    end: int
    label: str
    target: str = ""         # the linked entry key ("" when not linked)
    id: str = ""


@dataclass
class Relation:
    head: str                # span ids
    tail: str
    label: str


@dataclass
class Doc:
    id: str
    text: str
    spans: list[Span] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


def check_spans(doc: Doc, problems: Problems, path, line: int | None = None) -> bool:
    """Problems for spans outside the text or empty, duplicate span ids, and relations
    naming unknown spans; True when there are none."""
    before = problems.total
    n = len(doc.text)
    seen: set[str] = set()
    for i, s in enumerate(doc.spans):
        name = f"document {doc.id!r} span {s.id or i}"
        if not (0 <= s.begin < s.end <= n):
            problems.add(path, line, "offsets", f"{name}: [{s.begin}, {s.end}) is not a "
                                                f"non-empty range inside the text (0-{n})")
        if s.id:
            if s.id in seen:
                problems.add(path, line, "id", f"{name}: duplicate span id")
            seen.add(s.id)
    for r in doc.relations:
        for role, ref in (("head", r.head), ("tail", r.tail)):
            if ref not in seen:
                problems.add(path, line, role, f"document {doc.id!r} relation {r.label!r}: "
                                               f"no span with id {ref!r}")
    for b, e in doc.sentences:
        if not 0 <= b <= e <= n:
            problems.add(path, line, "sentences", f"document {doc.id!r}: sentence [{b}, {e}) "
                                                  f"is outside the text (0-{n})")
    return problems.total == before


def check_text(found: str, expected: str, problems: Problems, path, field_name: str,
               line_of=None) -> bool:
    """A problem when a file's text differs from the unit's, at the first difference
    (``line_of(offset)`` gives its line in the file, when the format can tell)."""
    if found == expected:
        return True
    i = next((k for k, (a, b) in enumerate(zip(found, expected)) if a != b),
             min(len(found), len(expected)))
    problems.add(path, None if line_of is None else line_of(i), field_name,
                 f"text differs from the unit's text at character {i}: the file has "
                 f"{found[i:i + 20]!r}, the unit has {expected[i:i + 20]!r} (lengths "
                 f"{len(found)} and {len(expected)})")
    return False


def named_spans(doc: Doc) -> dict[str, Span]:
    """Span id -> span, with ids made up (``_1``, ``_2``...) for spans that have none."""
    out: dict[str, Span] = {}
    for i, s in enumerate(doc.spans):
        out[s.id or f"_{i + 1}"] = s
    return out


def annotation_key(doc: Doc):
    """What a round trip must keep, ids aside: the text, the spans, the relations by
    their spans' extents, the answers and the links."""
    spans = named_spans(doc)

    def extent(ref):
        s = spans.get(ref)
        return None if s is None else (s.begin, s.end, s.label, s.target)

    return (doc.id, doc.text,
            sorted((s.begin, s.end, s.label, s.target) for s in doc.spans),
            sorted((extent(r.head), extent(r.tail), r.label) for r in doc.relations),
            sorted(doc.answers.items()), sorted(doc.meta.get(LINKS, [])))


# --- sentences and tokens ---------------------------------------------------------

WORD = re.compile(r"\w+|[^\w\s]")       # a run of word characters, or one other mark
NON_SPACE = re.compile(r"\S+")


def line_sentences(text: str) -> list[tuple[int, int]]:
    """One sentence per non-blank line, without its surrounding white space."""
    out, pos = [], 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            b = pos + line.index(stripped)
            out.append((b, b + len(stripped)))
        pos += len(line) + 1
    return out


def token_sentences(doc: Doc, words: re.Pattern = WORD) -> list[list[tuple[int, int]]]:
    """Sentences as lists of tokens (begin, end). Sentences are ``doc.sentences`` or the
    text's lines; sentences a span crosses are merged (token formats cannot split a span
    between sentences). Tokens are ``words`` matches, cut at every span edge; white space
    where a span begins or ends becomes a token too, so each span is a run of whole tokens."""
    cuts = {p for s in doc.spans for p in (s.begin, s.end)}
    sentences = sorted(doc.sentences)
    if not sentences or _uncovered(doc.text, sentences):
        sentences = line_sentences(doc.text)
    # sentences must hold every span: add the spans' own extents, then merge overlaps
    bounds = sorted(sentences + [(s.begin, s.end) for s in doc.spans])
    merged: list[list[int]] = []
    for b, e in bounds:
        if merged and b < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    starts = {s.begin for s in doc.spans}
    ends = {s.end for s in doc.spans}
    out = []
    for b, e in merged:
        pieces = [(m.start(), m.end()) for m in words.finditer(doc.text, b, e)]
        filled, pos = [], b
        for pb, pe in pieces + [(e, e)]:
            if pos < pb:                                 # a white-space gap
                filled.extend(_gap_tokens(pos, pb, cuts, starts, ends))
            if pb < pe:
                filled.append((pb, pe))
            pos = pe
        tokens = [t for tb, te in filled for t in _cut(tb, te, cuts)]
        if tokens:
            out.append(tokens)
    return out


def _uncovered(text: str, sentences: list[tuple[int, int]]) -> bool:
    """True when some non-space character is in no sentence (it would be lost)."""
    pos = 0
    for b, e in sentences + [(len(text), len(text))]:
        if b > pos and text[pos:b].strip():
            return True
        pos = max(pos, e)
    return False


def _cut(b: int, e: int, cuts: set[int]) -> list[tuple[int, int]]:
    points = [b] + sorted(p for p in cuts if b < p < e) + [e]
    return list(zip(points, points[1:]))


def _gap_tokens(b, e, cuts, starts, ends) -> list[tuple[int, int]]:
    """The pieces of a white-space gap that a span begins or ends at."""
    return [(pb, pe) for pb, pe in _cut(b, e, cuts) if pb in starts or pe in ends]


# --- UTF-16 offsets (Java strings: INCEpTION, WebAnno TSV) -------------------------

def utf16_offsets(text: str) -> list[int]:
    """For each str index 0..len(text), the offset in UTF-16 code units."""
    out, pos = [0], 0
    for ch in text:
        pos += 2 if ord(ch) > 0xFFFF else 1
        out.append(pos)
    return out


def from_utf16(text: str) -> dict[int, int]:
    """UTF-16 offset -> str index, for the offsets that fall between characters."""
    return {u: i for i, u in enumerate(utf16_offsets(text))}
