"""Progress bars for long runs: shown on a terminal, silent otherwise or when quiet."""
from __future__ import annotations

import sys

QUIET = False


def progress(iterable, total: int | None = None, what: str = "working"):
    """Wrap an iterable with a rich progress bar when stderr is a terminal."""
    if QUIET or not sys.stderr.isatty():
        yield from iterable
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.console import Console
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total)
        for item in iterable:
            yield item
            bar.advance(task)
