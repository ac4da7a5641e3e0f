"""Text cells a spreadsheet would run as formulas (OWASP "CSV injection").

A CSV cell starting with ``= + - @`` (or a tab or carriage return) is a formula
to Excel, LibreOffice and Google Sheets: a team named ``=HYPERLINK(...)`` in an
export would run in the organizer's spreadsheet. Writers prefix such text with
an apostrophe (the spreadsheets' own "this is text" mark); readers of shareval's
own exports drop it again, so the names round-trip.
"""
from __future__ import annotations

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def _formula_like(text: str) -> bool:
    # apostrophes skipped, so that text which itself starts with "'=" is escaped too
    # and unescaping stays exact
    return text.lstrip("'").startswith(FORMULA_START)


def escape_formula(value):
    """Text that starts like a formula gets a leading apostrophe; anything that
    is not text (a number, even a negative one; None) is returned unchanged."""
    if isinstance(value, str) and _formula_like(value):
        return "'" + value
    return value


def unescape_formula(text: str) -> str:
    """Undo :func:`escape_formula` exactly."""
    if text.startswith("'") and _formula_like(text):
        return text[1:]
    return text
