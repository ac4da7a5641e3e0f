"""A UTF-8 file's text held a window at a time, with absolute positions (issue 41).

``jsonfile`` parses a JSON file's top-level records one by one; holding the whole
text (and an offset per newline) took twice the file's size, and an upload is
validated in a child whose memory must stay within a few times the file's size.
:class:`TextWindow` gives the same positions, lines and columns as the whole text
would: the file is checked for UTF-8 first (:func:`check_utf8`: the same fatal
problem, before anything else is read, as ``errors.read_text`` reports), then
decoded chunk by chunk; the text before the current record is dropped, and the
lines it held are counted as it goes.
"""
from __future__ import annotations

import codecs
from pathlib import Path

from .errors import Problems

CHUNK_BYTES = 1 << 20            # bytes read (and text kept before the cursor) at once


def check_utf8(path: str | Path, problems: Problems) -> bool:
    """True when ``path`` can be read and is UTF-8; else the fatal problem ``read_text``
    reports (missing, a directory, unreadable, or the first bad byte's line and column)."""
    p = Path(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = newlines = 0
    last_newline = -1                 # absolute byte offset of the last newline read
    try:
        with open(p, "rb") as f:
            while True:
                data = f.read(CHUNK_BYTES)
                pending = len(decoder.getstate()[0])
                try:
                    decoder.decode(data, final=not data)
                except UnicodeDecodeError as e:
                    start = offset - pending + e.start          # in the file
                    seen = e.object[:e.start]
                    at = seen.rfind(b"\n")
                    line_start = (offset - pending + at if at >= 0 else last_newline) + 1
                    problems.fatal(p, newlines + seen.count(b"\n") + 1, "encoding",
                                   f"not valid UTF-8 (byte {start})",
                                   column=start - line_start + 1)
                    return False
                if not data:
                    return True
                at = data.rfind(b"\n")
                if at >= 0:
                    last_newline = offset + at
                    newlines += data.count(b"\n")
                offset += len(data)
    except FileNotFoundError:
        problems.fatal(p, None, "file", "does not exist")
    except IsADirectoryError:
        problems.fatal(p, None, "file", "is a directory, expected a file")
    except OSError as e:
        problems.fatal(p, None, "file", f"cannot be read ({e.strerror})")
    return False


class TextWindow:
    """The text of an open binary file (checked UTF-8), a leading BOM removed, seen
    through a window: ``buf`` holds the text from absolute offset ``base`` on."""

    def __init__(self, f):
        self._f = f
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.base = 0
        self.eof = False
        self._started = False         # a first character read (the BOM is removed)
        self._lines_at_base = 0       # newlines before base
        self._last_newline = -1       # absolute offset of the last newline before base
        self._counted = (0, 0)        # (offset, newlines before it): lines go forward

    def more(self) -> bool:
        """Append the next chunk's text; False once the file is read."""
        if self.eof:
            return False
        data = self._f.read(CHUNK_BYTES)
        text = self._decoder.decode(data, final=not data)
        if not data:
            self.eof = True
        if text and not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        self.buf += text
        return True

    def fill(self, end: int) -> None:
        """Read until the text reaches absolute offset ``end`` (or the file ends)."""
        while self.base + len(self.buf) < end and self.more():
            pass

    def drop_before(self, pos: int) -> None:
        """Forget the text before absolute offset ``pos`` (never asked for again)
        once it is more than a chunk, keeping its line count."""
        k = pos - self.base
        if k <= CHUNK_BYTES:
            return
        at = self.buf.rfind("\n", 0, k)
        if at >= 0:
            self._last_newline = self.base + at
        self._lines_at_base = self._newlines_before(pos)
        self._counted = (pos, self._lines_at_base)
        self.buf = self.buf[k:]
        self.base = pos

    def _newlines_before(self, pos: int) -> int:
        done, count = self._counted
        if pos < done:                                 # behind: count from the window
            done, count = self.base, self._lines_at_base
        count += self.buf.count("\n", done - self.base, pos - self.base)
        self._counted = (pos, count)
        return count

    def line(self, pos: int) -> int:
        """The 1-based line of absolute offset ``pos`` (at or after ``base``)."""
        return self._newlines_before(pos) + 1

    def where(self, pos: int) -> tuple[int, int]:
        """(line, column), both 1-based, of absolute offset ``pos``."""
        at = self.buf.rfind("\n", 0, pos - self.base)
        last = self.base + at if at >= 0 else self._last_newline
        return self.line(pos), pos - (last + 1) + 1
