"""Task options, declared once and checked in one place.

A task declares each option once (name, type, default, choices or range, help);
the command line builds its flags from the declaration, and the command line, the
competition bundle loader and ``Task.score`` all refuse a value with
``check_options``, so a value a scorer would reject is refused where it is written,
with the option named, rather than when the first submission is scored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..formats.errors import InvalidInput

_KINDS = {float: "a number", int: "an integer", str: "a string"}


class OptionError(InvalidInput, ValueError):
    """Option values a task refuses: InvalidInput (the command line exits 2, the server
    shows the problems) and a ValueError for Python callers."""


@dataclass(frozen=True)
class Option:
    """A task-specific scoring option, exposed as ``--name`` on the CLI."""
    name: str
    type: Callable | None
    default: Any
    help: str
    flag: bool = False           # a boolean switch without a value
    multiple: bool = False       # may be given several times / comma-separated
    choices: tuple = ()          # the allowed values, when only a few are
    low: float | None = None     # the allowed range, both ends included
    high: float | None = None
    refusal: str = ""            # the message for a value outside the choices, when its
    #                              wording is part of the task's documented behaviour;
    #                              formatted with value (repr) and choices

    def convert(self, value):
        """A number given as text (as the command line and Python callers may pass it)
        as the option's type; any other value as it is."""
        if isinstance(value, str) and self.type in (int, float) and not self.flag:
            try:
                return self.type(value)
            except ValueError:
                return value
        return value

    def problem(self, value) -> str | None:
        """Why ``value`` is not allowed, or None. None stands for "not set" and passes
        unless the option has choices or a range; numbers may be given as text."""
        value = self.convert(value)
        if value is None:
            return None if not (self.choices or self.bounded) else self._outside(value)
        wrong_type = self._type_problem(value)
        if wrong_type:
            return wrong_type
        if self.choices and value not in self.choices:
            return self._outside(value)
        if (self.low is not None and value < self.low) or \
                (self.high is not None and value > self.high):
            return self._outside(value)
        return None

    @property
    def bounded(self) -> bool:
        return self.low is not None or self.high is not None

    def allowed(self) -> str:
        """The allowed values, in words (for messages and --help)."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        if self.low is not None and self.high is not None:
            return f"between {self.low:g} and {self.high:g}"
        if self.low is not None:
            return f"at least {self.low:g}"
        if self.high is not None:
            return f"at most {self.high:g}"
        return "true or false" if self.flag else _KINDS.get(self.type, "any value")

    def _outside(self, value) -> str:
        if self.refusal:
            return self.refusal.format(value=repr(value),
                                       choices=", ".join(map(str, self.choices)))
        return f"must be {self.allowed()}, not {value!r}"

    def _type_problem(self, value) -> str | None:
        if self.multiple and isinstance(value, (list, tuple)):
            return next(filter(None, map(self._type_problem, value)), None)
        if self.flag:
            ok = isinstance(value, bool)
        elif self.type is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif self.type is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif self.type is str:
            ok = isinstance(value, str)
        else:
            ok = True
        if ok:
            return None
        kind = "true or false" if self.flag else _KINDS.get(self.type, "another type")
        return f"must be {kind}, not {value!r}"


def check_options(task: str, declared: tuple[Option, ...], values: dict,
                  unknown: bool = True) -> list[tuple[str, str]]:
    """(option name, why) for every value of ``values`` that ``declared`` refuses, in
    the order given; with ``unknown``, names that are no option of ``task`` too.

    >>> check_options("t", (Option("k", int, 10, "", low=1),), {"k": 0, "q": 1})
    [('k', 'must be at least 1, not 0'), ('q', 'not an option of t; allowed: k')]
    """
    by_name = {o.name: o for o in declared}
    out = []
    for name, value in values.items():
        if name in by_name:
            if (why := by_name[name].problem(value)) is not None:
                out.append((name, why))
        elif unknown:
            out.append((name, f"not an option of {task}; allowed: "
                              f"{', '.join(sorted(by_name)) or 'none'}"))
    return out
