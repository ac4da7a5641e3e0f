"""Crowd batches (judging/crowd.py) for the ``exhaustive`` design.

Export, one row per document short of its k annotations:

* ``Input.title``; ``Input.tokens``: the document with numbered words, one
  sentence per line (``[1] Anna [2] Berg [3] was ...``, numbered 1, 2, ...
  through the whole document);
* ``Input.suggestions``: the systems' relations, one per line,
  ``1. Anna Berg (words 1-2) | place of birth | Oslo (word 6)``;
* ``Input.relations``: the relation labels to choose from (``place of birth (P19); ...``);
* empty ``Answer.accepted`` and ``Answer.added``.

Import: ``Answer.accepted`` = the numbers of the suggestions the document
states, separated by commas or spaces (the others are rejected; empty: none);
``Answer.added`` = one relation per line (or separated by ``;``):
``subject words | relation | object words``, words as a number (``6``) or
a range (``1-2``, both included), the relation as its label or id
(``1-2 | place of birth | 6``). Problems name the file, the line and the
column (``Answer.accepted``, ``Answer.added``), and nothing is stored when
there is one.
"""
from __future__ import annotations

import re

from shareval.formats.digits import is_digits
from shareval.platform.judging import exhaustive_answers
from shareval.platform.judging.designs import BadAnswer

_RANGE = re.compile(r"^(\d+)(?:\s*-\s*(\d+))?$")


def _tokens(payload: dict) -> list[tuple[int, int]]:
    return [(s, s + len(t)) for sent, offs in zip(payload.get("sentences", []),
                                                  payload.get("starts", []))
            for t, s in zip(sent, offs)]


def _words(span, toks: list[tuple[int, int]]) -> str:
    inside = [i + 1 for i, (s, e) in enumerate(toks) if s < span[1] and e > span[0]]
    if not inside:
        return "no word"
    return f"word {inside[0]}" if len(inside) == 1 else f"words {inside[0]}-{inside[-1]}"


def inputs(camp, item) -> dict[str, str]:
    p = item.payload
    toks, n, lines = _tokens(p), 0, []
    for sent in p.get("sentences", []):
        lines.append(" ".join(f"[{n + k + 1}] {t}" for k, t in enumerate(sent)))
        n += len(sent)
    sugg = [f"{k}. {g['subject_text']} ({_words(g['subject'], toks)}) | {g['label']} | "
            f"{g['object_text']} ({_words(g['object'], toks)})"
            for k, g in enumerate(p.get("suggestions", []), 1)]
    rels = sorted((p.get("relations") or {}).items(), key=lambda kv: kv[1].lower())
    return {"Input.item": item.key, "Input.instructions": str(
        p.get("instructions") or camp.config.get("instructions") or ""),
        "Input.title": str(p.get("title") or item.doc), "Input.tokens": "\n".join(lines),
        "Input.suggestions": "\n".join(sugg) or "(none)",
        "Input.relations": "; ".join(f"{label} ({rid})" for rid, label in rels)}


def _span(text: str, toks, where: str) -> list[int]:
    m = _RANGE.match(text.strip())
    a, b = (int(m.group(1)), int(m.group(2) or m.group(1))) if m else (0, 0)
    if not m or not 1 <= a <= b <= len(toks):
        raise BadAnswer(f"{where}: {text.strip()!r} is not a word number or range N-M of the "
                        f"document's words 1-{len(toks)}")
    return [toks[a - 1][0], toks[b - 1][1]]


def parse(item, row: dict, name: str, line: int, problems) -> dict | None:
    """The row's answer in the page's form (unlisted suggestions rejected), checked."""
    p = item.payload
    sugg = [g["key"] for g in p.get("suggestions", [])]
    raw = (row.get("Answer.accepted") or "").strip()
    accepted = []
    for part in (x for x in re.split(r"[,;\s]+", raw) if x):
        if not is_digits(part) or not 1 <= int(part) <= len(sugg):
            problems.add(name, line, "Answer.accepted",
                         f"{part!r} is not a suggestion number (1-{len(sugg)})" if sugg else
                         f"{part!r}: this document has no suggestions")
            return None
        accepted.append(sugg[int(part) - 1])
    toks, added = _tokens(p), []
    text = (row.get("Answer.added") or "").replace("\r", "")
    rel_lines = [x.strip() for x in re.split(r"[\n;]", text) if x.strip()]
    try:
        for k, rel in enumerate(rel_lines, 1):
            parts = [x.strip() for x in rel.split("|")]
            if len(parts) != 3:
                raise BadAnswer(f"added relation {k}: {rel!r} is not 'subject words | relation | "
                                f"object words'")
            added.append({"subject": _span(parts[0], toks, f"added relation {k}: subject"),
                          "relation": parts[1],
                          "object": _span(parts[2], toks, f"added relation {k}: object")})
        answer = {"accepted": sorted(set(accepted)), "added": added}
        exhaustive_answers.clean(item.doc, p, answer)
    except BadAnswer as e:
        problems.add(name, line, "Answer.added", str(e))
        return None
    return answer
