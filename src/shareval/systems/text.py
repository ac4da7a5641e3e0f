"""Text helpers shared by the reference systems: reading inputs, normalizing, sentences."""
from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)|(\w)- (?=[a-z])")
_TOKEN = re.compile(r"[^\W_]+")
_DIGIT = re.compile(r"\d")
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


def drop_digit_lines(text: str, share: float = 0.1) -> str:
    """``text`` without the lines of which more than ``share`` of the characters are
    digits. The RCC training texts were made this way from the competition's PDF
    conversion (tables, reference entries with years and pages, page numbers gone), so
    the RCC system applies it to what it reads and sees the form it was trained on."""
    return "\n".join(line for line in text.split("\n")
                     if len(_DIGIT.findall(line)) <= share * len(line))


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


def read_document(path: Path) -> str:
    """Text of a PDF (pypdfium2), a JSON text file (all string fields) or plain text."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        import pypdfium2 as pdfium
        pdf = pdfium.PdfDocument(str(path))
        try:
            return "\n".join(page.get_textpage().get_text_range() for page in pdf)
        finally:
            pdf.close()
    raw = path.read_text(encoding="utf-8", errors="replace")
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
