"""Text helpers shared by the reference systems: reading inputs, normalizing, sentences."""
from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)|(\w)- (?=[a-z])")
_TOKEN = re.compile(r"[^\W_]+")
YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
MAX_N = 6      # longest word n-gram of a catalog index (rcc, rcc_patterns)

STOPWORDS = frozenset("""a an and are as at be by for from has have in is it its of on or that the
their this to was were which with we our these those than then there into over under between
about after all also any both but can each et al i ii iii if more most no not other s such
use used using study data survey""".split())


def normalize(text: str) -> str:
    """NFKC, ligatures resolved, words split across lines ("con- ducted") joined."""
    text = unicodedata.normalize("NFKC", text)
    return _HYPHEN_BREAK.sub(lambda m: (m.group(1) or m.group(3)) + (m.group(2) or ""), text)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits)."""
    return [t.lower() for t in _TOKEN.findall(text)]


def sentences(text: str) -> list[str]:
    """Sentences by syntok (English and German rules)."""
    from syntok import segmenter
    out = []
    for paragraph in segmenter.process(text):
        for sentence in paragraph:
            s = "".join(t.spacing + t.value for t in sentence).strip()
            if s:
                out.append(s)
    return out


_PAGE_NUMBER = re.compile(r"(?i)^\W*(page\s*)?\d{1,4}(\s*(of|/)\s*\d{1,4})?\W*$")
_EDGE = 2           # lines at each end of a page where headers and footers are looked for


def _edge_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.strip().lower())


def strip_page_furniture(pages: list[str]) -> str:
    """The pages joined without their running headers and footers: among the first and
    last ``_EDGE`` non-empty lines of each page, a page number ("12", "Page 3 of 20",
    "- 4 -") and a line that recurs (digits aside) at the edge of at least three pages
    and a third of them. A body line is never dropped; fewer than three pages are
    joined as they are."""
    if len(pages) < 3:
        return "\n".join(pages)
    split = [p.split("\n") for p in pages]
    edges = []
    for lines in split:
        full = [i for i, ln in enumerate(lines) if ln.strip()]
        edges.append(set(full[:_EDGE] + full[-_EDGE:]))
    seen: dict[str, int] = {}
    for lines, edge in zip(split, edges):
        for key in {_edge_key(lines[i]) for i in edge}:
            seen[key] = seen.get(key, 0) + 1
    recurring = {k for k, n in seen.items() if n >= 3 and n >= len(pages) / 3}
    out = []
    for lines, edge in zip(split, edges):
        out.append("\n".join(ln for i, ln in enumerate(lines) if i not in edge or not (
            _PAGE_NUMBER.match(ln.strip()) or _edge_key(ln) in recurring)))
    return "\n".join(out)


def read_document(path: Path) -> str:
    """Text of a PDF (pypdfium2), a JSON text file (all string fields) or plain text. The
    pages of a PDF, and of a text with form feeds between pages (``pdftotext``), lose
    their running headers, footers and page numbers (``strip_page_furniture``)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        import pypdfium2 as pdfium
        pdf = pdfium.PdfDocument(str(path))
        try:
            return strip_page_furniture([page.get_textpage().get_text_range() for page in pdf])
        finally:
            pdf.close()
    raw = path.read_text(encoding="utf-8", errors="replace")
    if "\f" in raw and suffix != ".json":
        return strip_page_furniture(raw.split("\f"))
    if suffix == ".json":
        value = json.loads(raw)
        if isinstance(value, dict):
            return "\n".join(v for v in value.values() if isinstance(v, str))
        if isinstance(value, str):
            return value
        raise ValueError("expected a JSON object of text fields or a JSON string")
    return raw


@lru_cache(maxsize=4)
def language_identifier(langs: tuple[str, ...] | None = None):
    """A py3langid identifier (probabilities normalized), loaded once per language set."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    if langs:
        ident.set_languages(list(langs))
    return ident
