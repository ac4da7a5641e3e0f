"""Progress bars for long runs: shown on a terminal, silent otherwise or when quiet.

``progress`` wraps an iterable (``assess simulate``); ``steps`` is a bar advanced
by hand, for commands made of a few long steps of different kinds (``demo``,
``compare``). Both draw on stderr, only when stderr is a terminal and ``QUIET``
(``--quiet``) is off, and vanish when done. While a bar is shown, what the
command prints to a terminal's stdout appears above it.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

QUIET = False


def shown() -> bool:
    return not QUIET and sys.stderr.isatty()


def _bar():
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    # stdout through the bar only when it is a terminal too: `cmd > file` keeps its output
    return Progress(*columns, console=Console(stderr=True), transient=True,
                    redirect_stdout=sys.stdout.isatty(), redirect_stderr=False)


def progress(iterable, total: int | None = None, what: str = "working"):
    """Wrap an iterable with a rich progress bar when stderr is a terminal."""
    if not shown():
        yield from iterable
        return
    with _bar() as bar:
        task = bar.add_task(what, total=total)
        for item in iterable:
            yield item
            bar.advance(task)


@contextmanager
def steps(total: float, what: str = "working") -> Iterator[Callable[..., None]]:
    """A bar of ``total`` steps; the body calls ``advance(n=1, what=None)`` after
    each (``what`` renames the bar: the step now running). Off a terminal or
    when quiet, ``advance`` does nothing."""
    if not shown():
        yield lambda n=1, what=None: None
        return
    with _bar() as bar:
        task = bar.add_task(what, total=total)

        def advance(n=1, what=None):
            bar.update(task, advance=n, **({"description": what} if what else {}))
        yield advance
        bar.update(task, completed=total)          # fractional steps may not add up exactly
