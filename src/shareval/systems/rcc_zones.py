"""The reference list of a publication's text: where a dataset's name is no evidence
that the publication uses it.

A PDF's text keeps the whole reference list, and its entries name surveys and data
collections that the paper only cites (a survey's documentation, another study that
used it). ``reference_start`` finds where the list begins, so that the RCC features can
say how many of a candidate's matches fall inside it (``rcc_features``):

* the last heading line ("References", "Bibliography", "Literature Cited", "Works
  Cited", "Notes and References", numbered or not) in the second half of the text, or
  else
* the first of a dense run of reference-like lines in the second half: at least
  ``DENSE`` of ``WINDOW`` consecutive lines that open like an entry ("Kessler RC,",
  "Smith, J. A.", "12. Brown", "[3] Lee") or hold an author-year citation ("et al."
  with a year, "(2004).").

The list ends at an "Appendix" heading after it, or at the end of the text. Nothing
is removed from the text: the model learns from the share of matches in the zone how
much they count (trained on the processed JSON texts, where 37% of the publications
keep a reference heading and part of their entries).
"""
from __future__ import annotations

import re

_HEADING = re.compile(
    r"^[ \t]*(?:\d{1,2}\.?|[IVX]{1,4}\.)?[ \t]*(?:notes and |cited |selected )?"
    r"(?:references?(?: cited| list)?|bibliography|literature cited|works cited|"
    r"literature)[ \t]*:?[ \t]*$", re.I | re.M)
_APPENDIX = re.compile(r"^[ \t]*(?:appendix|appendices|supplementary (?:material|data))\b"
                       r"[^\n]{0,60}$", re.I | re.M)
_ENTRY = re.compile(
    r"^[ \t]*(?:\[\d{1,3}\]|\d{1,3}[.)]?)?[ \t]*"
    r"(?:[A-Z][A-Za-z'\u2019-]+(?: [A-Z][A-Za-z'\u2019-]+)?,? (?:[A-Z]\.? ?){1,3}[,.]"
    r"|[A-Z][A-Za-z'\u2019-]+, [A-Z][a-z]+[,.])")
_CITED = re.compile(r"et al\.?,? \(?(?:19|20)\d\d|\((?:19|20)\d\d[a-z]?\)\.|"
                    r"(?:19|20)\d\d;\s?\d+|\b(?:19|20)\d\d\)?\. [A-Z]")
WINDOW = 10
DENSE = 6


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def reference_zone(text: str) -> tuple[int, int] | None:
    """Character span ``(start, end)`` of the reference list, or None."""
    half = len(text) // 2
    start = None
    for m in _HEADING.finditer(text, half):
        start = m.start()
    if start is None:
        starts = _line_starts(text)
        lines = [i for i, s in enumerate(starts) if s >= half]
        flags = []
        for i in lines:
            end = starts[i + 1] if i + 1 < len(starts) else len(text)
            line = text[starts[i]:end]
            flags.append(bool(_ENTRY.match(line) or _CITED.search(line)))
        for k in range(len(flags)):
            if flags[k] and sum(flags[k:k + WINDOW]) >= DENSE:
                start = starts[lines[k]]
                break
    if start is None:
        return None
    appendix = _APPENDIX.search(text, start)
    return start, appendix.start() if appendix else len(text)
