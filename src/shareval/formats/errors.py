"""Problems found in input files, reported as ``file:line[:column]: field: message``.

Parsers do not stop at the first problem: they add every problem to a
:class:`Problems` collector (up to a cap) and raise :class:`InvalidInput`
once the whole file has been read, so a participant fixes everything in one go.

Two kinds of problems would otherwise bury the cause under its consequences:

* a **fatal** problem (missing or unreadable file, syntax error, wrong
  layout) makes every later check of that file meaningless: it is reported
  alone for its file (:meth:`Problems.fatal`), and checks that need the whole
  file (coverage against a reference) are skipped;
* a **coverage** problem shared by many ids ("no prediction for ...") is one
  summarized problem with the count and the first few ids
  (:meth:`Problems.summarize`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

MAX_PROBLEMS = 100
FIRST_IDS = 3          # ids quoted in a summarized problem


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str
    message: str
    column: int | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}" + ("" if self.column is None else f":{self.column}")
        return f"{where}: {self.field}: {self.message}"


def listing(problems: list[Problem], total: int, cap: int = MAX_PROBLEMS) -> list[str]:
    """The problems as lines, plus one line saying what is not listed (CLI, web, API)."""
    lines = [str(p) for p in problems]
    if total > len(problems):
        lines.append(f"... and {total - len(problems)} more problems "
                     f"(only the first {len(problems)} are listed)")
    elif len(problems) >= cap:
        lines.append(f"... reading stopped after {cap} problems; there may be more "
                     f"problems further on")
    return lines


class InvalidInput(Exception):
    """Raised with every problem found; the CLI prints them and exits 2."""

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = problems
        self.total = len(problems) if total is None else total
        super().__init__(self.render())

    def lines(self) -> list[str]:
        return listing(self.problems, self.total)

    def render(self) -> str:
        return "\n".join(self.lines())


class Problems:
    """Collects problems for one or more files, keeping the first ``cap``."""

    def __init__(self, cap: int = MAX_PROBLEMS):
        self.cap = cap
        self.items: list[Problem] = []
        self.total = 0
        self._per_file: Counter = Counter()
        self.stopped: set[str] = set()       # files with a fatal problem

    def add(self, file: str | Path, line: int | None, field: str, message: str,
            column: int | None = None) -> None:
        f = str(file)
        if f in self.stopped:                # consequences of a fatal problem: not news
            return
        self.total += 1
        self._per_file[f] += 1
        if len(self.items) < self.cap:
            self.items.append(Problem(f, line, field, message, column))

    def fatal(self, file: str | Path, line: int | None, field: str, message: str,
              column: int | None = None) -> None:
        """A problem that makes the rest of ``file`` meaningless (missing, unreadable,
        syntax error, wrong layout): it replaces the file's other problems, later
        ones are ignored, and whole-file checks are skipped (:attr:`has_fatal`)."""
        f = str(file)
        if f in self.stopped:
            return
        self.items = [p for p in self.items if p.file != f]
        self.total -= self._per_file.pop(f, 0) - 1
        self._per_file[f] = 1
        self.items.append(Problem(f, line, field, message, column))   # even past the cap
        self.stopped.add(f)

    def summarize(self, file: str | Path, field: str, ids, one: str, many: str,
                  lines=None) -> None:
        """One problem for ids sharing a fault, e.g. ``412 sentences have no
        prediction, first: 'a', 'b', 'c'``. ``one``/``many`` hold ``{n}``;
        ``lines`` (parallel to ``ids``) puts the first id's line on the problem."""
        ids = list(ids)
        if not ids:
            return
        n = len(ids)
        shown = ", ".join(repr(str(i)) for i in ids[:FIRST_IDS])
        if lines is not None:
            lines = list(lines)
            if n > 1:                        # one id: its line is the problem's own
                shown += " (lines " + ", ".join(str(x) for x in lines[:FIRST_IDS]) + ")"
        text = (one if n == 1 else many).format(n=n)
        text += (", first: " if n > FIRST_IDS else ": ") + shown
        self.add(file, None if lines is None else lines[0], field, text)

    @property
    def has_fatal(self) -> bool:
        return bool(self.stopped)

    @property
    def full(self) -> bool:
        """True once the cap is reached: parsers may stop looking for more."""
        return self.total >= self.cap

    def __bool__(self) -> bool:
        return self.total > 0

    def raise_if_any(self) -> None:
        if self.total:
            raise InvalidInput(list(self.items), self.total)


def read_text(path: str | Path, problems: Problems) -> str | None:
    """Read a UTF-8 file; a missing or undecodable file is a fatal problem, not a crash."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        problems.fatal(p, None, "file", "does not exist")
        return None
    except IsADirectoryError:
        problems.fatal(p, None, "file", "is a directory, expected a file")
        return None
    except OSError as e:
        problems.fatal(p, None, "file", f"cannot be read ({e.strerror})")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        not_utf8(problems, p, data, e)
        return None
    return text.removeprefix("\ufeff")


def not_utf8(problems: Problems, path, data: bytes, e: UnicodeDecodeError) -> None:
    """The fatal encoding problem at the bad byte's line and column (in bytes)."""
    line_start = data.rfind(b"\n", 0, e.start) + 1
    problems.fatal(path, data.count(b"\n", 0, e.start) + 1, "encoding",
                   f"not valid UTF-8 (byte {e.start})", column=e.start - line_start + 1)


def locate_not_utf8(problems: Problems, path) -> None:
    """The fatal encoding problem of a file too big to hold, found line by line
    (a newline byte never occurs inside a UTF-8 sequence)."""
    offset = 0
    with open(path, "rb") as f:
        for line, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                problems.fatal(path, line, "encoding", f"not valid UTF-8 (byte {offset + e.start})",
                               column=e.start + 1)
                return
            offset += len(raw)
