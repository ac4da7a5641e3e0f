"""JSON files whose top-level records carry the line they start on.

The standard ``json`` module loses positions once parsed; submissions are lists
of records or objects keyed by id, so we decode the top level ourselves and let
``raw_decode`` parse each element, remembering where it started. The text is
read a window at a time (``textstream``), with the positions of the whole text.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from .errors import Problems
from .textstream import TextWindow, check_utf8

_WS = re.compile(r"\s*")
_PLAIN_KEY = re.compile(r"[\w.\-/]+")
_decoder = json.JSONDecoder()


def keyed_record(kind: str, key) -> str:
    """What a problem calls a record of an object keyed by id (``uuid 35a4-…``): a file
    written by a plain ``json.dump`` has every record on line 1, so its line is no name."""
    text = str(key)
    return f"{kind} {text}" if _PLAIN_KEY.fullmatch(text) else f"{kind} {text!r}"


MARGIN = 64      # characters past a value its parse may depend on (a number's exponent)


class _BadJson(Exception):
    def __init__(self, msg: str, pos: int):
        super().__init__(msg)
        self.msg, self.pos = msg, pos


class _Cursor:
    """A position in the file's text (``textstream.TextWindow``), read as it goes."""

    def __init__(self, f):
        self.text = TextWindow(f)
        self.pos = 0

    def skip_ws(self) -> None:
        t = self.text
        while True:
            end = _WS.match(t.buf, self.pos - t.base).end()
            self.pos = t.base + end
            if end < len(t.buf) or not t.more():
                return

    def peek(self) -> str:
        self.text.fill(self.pos + 1)
        i = self.pos - self.text.base
        return self.text.buf[i: i + 1]

    def line(self, pos: int | None = None) -> int:
        return self.text.line(self.pos if pos is None else pos)

    def where(self, pos: int | None = None) -> tuple[int, int]:
        """(line, column), both 1-based, of ``pos`` (default: the cursor)."""
        return self.text.where(self.pos if pos is None else pos)

    def value(self) -> Any:
        """The value at the cursor, as ``raw_decode`` parses the whole text: a parse
        that ends or fails near the window's end (where the text may go on), or
        fails in an unterminated string, is tried again with more text."""
        t = self.text
        t.drop_before(self.pos)
        while True:
            start = self.pos - t.base
            try:
                obj, end = _decoder.raw_decode(t.buf, start)
            except json.JSONDecodeError as e:
                if not t.eof and (e.pos >= len(t.buf) - MARGIN
                                  or e.msg.startswith("Unterminated string")):
                    self._longer(start)
                    continue
                raise _BadJson(e.msg, t.base + e.pos) from None
            if end > len(t.buf) - MARGIN and not t.eof:
                self._longer(start)
                continue
            self.pos = t.base + end
            return obj

    def _longer(self, start: int) -> None:
        """At least a chunk more, and twice what the value has taken (a value of many
        chunks is parsed a few times, not once per chunk)."""
        t = self.text
        t.fill(t.base + 2 * len(t.buf) - start + 1)


def iter_records(path: str | Path, problems: Problems, expect: str, key_name: str = "key"
                 ) -> Iterator[tuple[int, Any, Any]] | None:
    """Yield ``(line, key, value)`` for each element of the top-level container.

    ``expect`` is ``"array"`` (key is the index) or ``"object"`` (key is the
    member name, what ``key_name`` calls it: a repeated one is a problem). A syntax
    error or the wrong top-level container is a fatal problem with its line and
    column. Returns None when the file cannot be read. The file is read a chunk at
    a time (``textstream``): the records, not the text, are what a reader keeps.
    """
    if not check_utf8(path, problems):
        return None
    return _iter(Path(path), problems, expect, key_name)


def _iter(path: Path, problems: Problems, expect: str, key_name: str):
    with open(path, "rb") as f:
        yield from _records(path, _Cursor(f), problems, expect, key_name)


def _records(path: Path, cur: _Cursor, problems: Problems, expect: str, key_name: str):
    open_, close = ("[", "]") if expect == "array" else ("{", "}")
    cur.skip_ws()
    if cur.peek() != open_:
        kind = "a JSON array of records" if expect == "array" else "a JSON object"
        found = {"[": "an array", "{": "an object", "": "nothing"}.get(cur.peek(),
                                                                      repr(cur.peek()))
        _syntax(problems, path, cur, f"expected {kind} starting with '{open_}', found {found}")
        return
    cur.pos += 1
    index = 0
    seen_keys: dict[str, tuple[int, int]] = {}       # key -> (line, index) of its first
    while True:
        cur.skip_ws()
        if cur.peek() == close:
            cur.pos += 1
            break
        if index:
            if cur.peek() != ",":
                _syntax(problems, path, cur, f"expected ',' or '{close}'")
                return
            cur.pos += 1
            cur.skip_ws()
        line = cur.line()
        try:
            if expect == "object":
                if cur.peek() != '"':
                    _syntax(problems, path, cur, "expected a quoted member name")
                    return
                key = cur.value()
                cur.skip_ws()
                if cur.peek() != ":":
                    _syntax(problems, path, cur, "expected ':' after member name")
                    return
                cur.pos += 1
                cur.skip_ws()
                value = cur.value()
                if key in seen_keys:
                    first_line, first_index = seen_keys[key]
                    first = f"line {first_line}" if first_line != line else f"record {first_index}"
                    problems.in_record(path, line, keyed_record(key_name, key), key_name,
                                       f"duplicate (first at {first})")
                    index += 1
                    continue
                seen_keys[key] = line, index
            else:
                key = index
                value = cur.value()
        except _BadJson as e:
            _syntax(problems, path, cur, e.msg, e.pos)
            return
        except RecursionError:
            problems.fatal(path, line, "json", "nesting too deep")
            return
        yield line, key, value
        index += 1
    cur.skip_ws()
    if cur.peek() != "":
        _syntax(problems, path, cur, "unexpected content after the top-level value")


def _syntax(problems: Problems, path, cur: _Cursor, message: str, pos: int | None = None):
    """A JSON syntax or layout error: fatal, at its line and column."""
    line, column = cur.where(pos)
    problems.fatal(path, line, "json", message, column=column)


def sniff_container(path: str | Path) -> str | None:
    """'array', 'object' or None, from the first non-blank character."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    except OSError:
        return None
    if head.startswith(b"["):
        return "array"
    if head.startswith(b"{"):
        return "object"
    return None


def json_object_line(name, lineno: int, line: str, problems: Problems) -> dict | None:
    """One JSONL line as an object, or None with the problem recorded."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        problems.add(name, lineno, "json", f"not JSON: {e.msg}", column=e.colno)
        return None
    if not isinstance(obj, dict):
        problems.add(name, lineno, "json", "each line must be a JSON object")
        return None
    return obj
