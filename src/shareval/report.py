"""Render results as terminal tables (rich) or JSON."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .tasks.base import Result

if TYPE_CHECKING:
    from rich.console import Console

MAX_ROWS = 15


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        return f"{v:.4f}"
    if v is None:
        return "-"
    return str(v)


LARGE_JSON_ROWS = 1000


def result_json(result: Result) -> str:
    d = result.to_dict()
    if sum(len(t) for t in d["breakdowns"].values()) <= LARGE_JSON_ROWS:
        return json.dumps(d, indent=2, ensure_ascii=False)
    # indent=2 runs json's pure-Python encoder (1 s per 100,000 per-query rows): large
    # breakdowns are written one row per line by the C encoder, the rest as before
    token = "\x00breakdowns\x00"
    text = json.dumps({**d, "breakdowns": token}, indent=2, ensure_ascii=False)
    dump = json.JSONEncoder(ensure_ascii=False).encode     # one encoder for every row
    tables = []
    for name, table in d["breakdowns"].items():
        rows = ",\n".join(f"      {dump(str(k))}: {dump(v)}" for k, v in table.items())
        tables.append(f"    {dump(name)}: {{\n{rows}\n    }}")
    block = "{\n" + ",\n".join(tables) + "\n  }" if tables else "{}"
    return text.replace(json.dumps(token), block, 1)


def print_result(result: Result, console: Console, max_rows: int = MAX_ROWS,
                 show_conventions: bool = True) -> None:
    from rich.table import Table      # imported here: JSON output needs no rich (0.1 s)
    d = result.to_dict()
    t = Table(title=f"{d['task']} — {d['scorer_version']}", title_justify="left",
              show_header=True, header_style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k, v in d["metrics"].items():
        t.add_row(k, fmt(v))
    console.print(t)
    if d["counts"]:
        console.print("counts: " + ", ".join(f"{k}={fmt(v)}" for k, v in d["counts"].items()))
    for name, table in d["breakdowns"].items():
        print_breakdown(name, table, console, max_rows)
    for w in d["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    if show_conventions:
        console.print("[dim]conventions: " + "; ".join(
            f"{k}: {v}" for k, v in d["conventions"].items()) + "[/dim]", highlight=False)


def print_breakdown(name: str, table: dict, console: Console, max_rows: int) -> None:
    if not table:
        return
    cols: list[str] = []
    for row in table.values():
        for c in row:
            if c not in cols:
                cols.append(c)
    from rich.table import Table
    t = Table(title=name, title_justify="left", header_style="bold")
    t.add_column("key")
    for c in cols:
        t.add_column(c, justify="right")
    for i, (key, row) in enumerate(table.items()):
        if i >= max_rows:
            break
        t.add_row(str(key), *(fmt(row.get(c)) for c in cols))
    console.print(t)
    if len(table) > max_rows:
        console.print(f"[dim]({len(table) - max_rows} more rows in --format json)[/dim]")
