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

A problem in a record of a JSON file names the record (``record 17
(publication 3735)``), since a file written by a plain ``json.dump`` has every
record on line 1; the same field and message in several records is one
problem with the count and the first few records (:meth:`Problems.in_record`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
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
    record: str | None = None       # the JSON record it is in: "record 17 (publication 3735)"

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}" + ("" if self.column is None else f":{self.column}")
        if self.record is not None:
            where += f": {self.record}"
        return f"{where}: {self.field}: {self.message}"


class _Repeated:
    """One field's problem in several records of a JSON file: listed once, with the
    count and the first few records (with their lines when these differ)."""

    def __init__(self, first: Problem):
        self.first = first
        self.file = first.file
        self.count = 1
        self.shown = [(first.line, first.record)]

    def again(self, line: int | None, record: str) -> None:
        self.count += 1
        if len(self.shown) < FIRST_IDS:
            self.shown.append((line, record))

    def problem(self) -> Problem:
        if self.count == 1:
            return self.first
        lines = {line for line, _ in self.shown}
        names = ", ".join(record + (f" at line {line}" if len(lines) > 1 else "")
                          for line, record in self.shown)
        first = ", first: " if self.count > FIRST_IDS else ": "
        return replace(self.first, record=None,
                       message=f"{self.first.message} in {self.count} records{first}{names}")


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
        self._items: list[Problem | _Repeated] = []
        self.total = 0
        self._per_file: Counter = Counter()
        self._repeated: dict[tuple[str, str, str], _Repeated] = {}
        self.stopped: set[str] = set()       # files with a fatal problem

    @property
    def items(self) -> list[Problem]:
        """The problems kept (the first ``cap``), repeated ones as one each."""
        return [p.problem() if isinstance(p, _Repeated) else p for p in self._items]

    def add(self, file: str | Path, line: int | None, field: str, message: str,
            column: int | None = None) -> None:
        self._add(Problem(str(file), line, field, message, column))

    def _add(self, item: Problem | _Repeated) -> None:
        if item.file in self.stopped:        # consequences of a fatal problem: not news
            return
        self.total += 1
        self._per_file[item.file] += 1
        if len(self._items) < self.cap:
            self._items.append(item)

    def in_record(self, file: str | Path, line: int | None, record: str, field: str,
                  message: str) -> None:
        """A problem in one record of a JSON file, named by ``record`` (``record 17
        (publication 3735)``, ``uuid 'a1b2'``). The same ``field`` and ``message`` in
        several records of the file is one problem: the count and the first records."""
        f = str(file)
        if f in self.stopped:
            return
        repeated = self._repeated.get((f, field, message))
        if repeated is not None:
            repeated.again(line, record)
            return
        repeated = self._repeated[f, field, message] = _Repeated(
            Problem(f, line, field, message, record=record))
        self._add(repeated)

    def fatal(self, file: str | Path, line: int | None, field: str, message: str,
              column: int | None = None) -> None:
        """A problem that makes the rest of ``file`` meaningless (missing, unreadable,
        syntax error, wrong layout): it replaces the file's other problems, later
        ones are ignored, and whole-file checks are skipped (:attr:`has_fatal`)."""
        f = str(file)
        if f in self.stopped:
            return
        self._items = [p for p in self._items if p.file != f]
        self.total -= self._per_file.pop(f, 0) - 1
        self._per_file[f] = 1
        self._items.append(Problem(f, line, field, message, column))  # even past the cap
        self.stopped.add(f)

    def summarize(self, file: str | Path, field: str, ids, one: str, many: str,
                  lines=None, records=None) -> None:
        """One problem for ids sharing a fault, e.g. ``412 sentences have no
        prediction, first: 'a', 'b', 'c'``. ``one``/``many`` hold ``{n}``;
        ``lines`` (parallel to ``ids``) puts the first id's line on the problem, and
        the shown ids' lines when they differ; ``records`` (parallel, the indices of
        JSON records) names the records where lines do not tell them apart."""
        ids = list(ids)
        if not ids:
            return
        n = len(ids)
        lines = None if lines is None else list(lines)
        shown = ", ".join(repr(str(i)) for i in ids[:FIRST_IDS])
        shown += _positions(lines, None if records is None else list(records))
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


def _positions(lines: list | None, records: list | None) -> str:
    """`` (lines 3, 9, 15)`` or `` (records 0, 1, 5)`` for the first ids of a summary: lines
    when they tell the ids apart, else records (a one-line JSON file); one id's line is the
    problem's own."""
    lines = None if lines is None else lines[:FIRST_IDS]
    if lines is not None and len(set(lines)) > 1:
        return " (lines " + ", ".join(str(x) for x in lines) + ")"
    if records is not None:
        records = records[:FIRST_IDS]
        return (" (record " if len(records) == 1 else " (records ") + \
            ", ".join(str(x) for x in records) + ")"
    return ""


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
