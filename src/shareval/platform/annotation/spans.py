"""A reference captured by selecting it in the publication's stored text: the
offsets are checked against the text, and the name and the passage (the
sentence or sentences around the selection, bounded) are derived from them on
the server, never taken from what the browser sends.

Offsets are Python str indices (code points) into ``FullText.text``, end
exclusive; the capture page's script counts code points too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shareval.platform.workbench.sources import browser_text as clean_text  # noqa: F401

MAX_SELECTION = 500          # Reference.name's length: select the name, not the passage
AROUND = 300                 # at most this much text on either side of the selection
# a sentence ends at . ! ? (closing quotes or brackets may follow) before white space
# and a capital, digit or opening bracket, but not after an initial or a common
# abbreviation; a blank line ends one too
SENTENCE_END = re.compile(
    r"(?<!\b[A-Za-z])(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bFig)(?<!\bNo)(?<!\bvs)(?<!\bcf)"
    r"[.!?][\"'”’)\]]*\s+(?=[A-Z0-9\"“(\[])|\n[ \t]*\n\s*")
SPACE = re.compile(r"\s+")


class SpanError(ValueError):
    """Offsets that do not fit the text; ``field`` is the form field to blame."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class Passage:
    begin: int              # the selection, trimmed of surrounding white space
    end: int
    before: str             # the passage is before + selected + after
    selected: str
    after: str

    @property
    def name(self) -> str:
        return self.selected.strip()

    @property
    def context(self) -> str:
        return self.before + self.selected + self.after




def check(text: str, begin, end) -> tuple[int, int]:
    """Offsets inside the text, non-empty, at most MAX_SELECTION long; returns
    them trimmed of white space. Raises SpanError naming the field."""
    for field, v in (("begin", begin), ("end", end)):
        if v is None or isinstance(v, bool) or not isinstance(v, int):
            raise SpanError(field, "a character offset into the text (a whole number) is "
                                   "needed: select the reference in the text")
    n = len(text)
    if begin < 0 or begin >= n:
        raise SpanError("begin", f"{begin} is outside the text (0 to {n - 1})")
    if end > n:
        raise SpanError("end", f"{end} is past the end of the text ({n} characters)")
    if end <= begin:
        raise SpanError("end", f"{end} must be after begin ({begin})")
    while begin < end and text[begin].isspace():
        begin += 1
    while end > begin and text[end - 1].isspace():
        end -= 1
    if begin == end:
        raise SpanError("begin", "the selection is only white space")
    if end - begin > MAX_SELECTION:
        raise SpanError("end", f"the selection is {end - begin} characters, at most "
                               f"{MAX_SELECTION}: select the data's name, the passage "
                               f"around it is stored with it")
    return begin, end


def flat(s: str) -> str:
    return SPACE.sub(" ", s)


def derive(text: str, begin: int, end: int) -> Passage:
    """The selection and the sentence(s) around it, cut at sentence ends within
    AROUND characters (else at a word, marked with …), white space flattened."""
    begin, end = check(text, begin, end)
    lo = max(0, begin - AROUND)
    # one character past begin: the look-ahead must see a sentence that starts there
    ends = [m.end() for m in SENTENCE_END.finditer(text, lo, min(len(text), begin + 1))
            if m.end() <= begin]
    if ends:
        start, lead = ends[-1], ""
    elif lo == 0:
        start, lead = 0, ""
    else:
        space = text.find(" ", lo, begin)
        start, lead = (space + 1 if space >= 0 else lo), "…"
    hi = min(len(text), end + AROUND)
    m = SENTENCE_END.search(text, end, hi)
    if m:
        stop, tail = m.start() + len(m.group(0).rstrip()), ""
    elif hi == len(text):
        stop, tail = hi, ""
    else:
        space = text.rfind(" ", end, hi)
        stop, tail = (space if space > end else hi), "…"
    return Passage(begin, end, lead + flat(text[start:begin]).lstrip(),
                   flat(text[begin:end]), flat(text[end:stop]).rstrip() + tail)


def marked(text: str | None, ref) -> tuple[str, str, str] | None:
    """(before, selection, after) of a reference's passage for the pages that
    show it, when it was captured by selection and its passage is still the one
    derived from the selection (a reviewer may have revised it: then None)."""
    if not text or ref.begin is None or ref.end is None:
        return None
    try:
        p = derive(text, ref.begin, ref.end)
    except SpanError:
        return None
    return (p.before, p.selected, p.after) if p.context.strip() == ref.context.strip() else None
