"""Problems found in input files, reported as ``file:line: field: message``.

Parsers never stop at the first problem: they add every problem to a
:class:`Problems` collector (up to a cap) and raise :class:`InvalidInput`
once the whole file has been read, so a participant fixes everything in one go.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_PROBLEMS = 100


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}"


class InvalidInput(Exception):
    """Raised with every problem found; the CLI prints them and exits 2."""

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = problems
        self.total = len(problems) if total is None else total
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(p) for p in self.problems]
        if self.total > len(self.problems):
            lines.append(f"... and {self.total - len(self.problems)} more problems "
                         f"(only the first {len(self.problems)} are listed)")
        elif len(self.problems) >= MAX_PROBLEMS:
            lines.append(f"... reading stopped after {MAX_PROBLEMS} problems; there may be more "
                         f"problems further on")
        return "\n".join(lines)


class Problems:
    """Collects problems for one or more files, keeping the first ``cap``."""

    def __init__(self, cap: int = MAX_PROBLEMS):
        self.cap = cap
        self.items: list[Problem] = []
        self.total = 0

    def add(self, file: str | Path, line: int | None, field: str, message: str) -> None:
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(Problem(str(file), line, field, message))

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
    """Read a UTF-8 file; a missing or undecodable file is a problem, not a crash."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        problems.add(p, None, "file", "does not exist")
        return None
    except IsADirectoryError:
        problems.add(p, None, "file", "is a directory, expected a file")
        return None
    except OSError as e:
        problems.add(p, None, "file", f"cannot be read ({e.strerror})")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        problems.add(p, line, "encoding", f"not valid UTF-8 (byte {e.start})")
        return None
    return text.removeprefix("\ufeff")
