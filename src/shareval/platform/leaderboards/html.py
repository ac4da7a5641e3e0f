"""The leaderboard page's table body (``leaderboard.html``), built a row at a time.

Rendering 500 rows through the template takes 0.2-0.3 s, so the body is kept
under the board's cache key (``cache.board``) until the next change, and
each row's cells after the rank are kept in-process, keyed by everything they
show: after a change, only the rows whose content changed are rendered again,
and the rank cells (which shift when one team moves) are written here.
"""
from __future__ import annotations

import re

from django.core.cache import caches
from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from shareval.platform.labels import value_with_interval

from shareval.platform.leaderboards.cache import TIMEOUT

ROW = "shareval/leaderboard_row.html"
EMPTY = '<tr><td colspan="9">No scored submissions yet.</td></tr>\n'
MEMO_MAX = 20000                 # rows kept in-process (500 teams x a few boards)
_memo: dict[tuple, str] = {}


def page_rows(board: dict) -> list[dict]:
    """The page's rows of a board payload (``payloads.leaderboard_payload``): each row with
    ``values`` (each metric cell's value and its text), ``dist`` (an unranked board's
    most frequent values, else None) and ``eff`` (efficiency cells with their digits)."""
    digits = board["precision"]
    return [dict(r, values=[(r["metrics"].get(k), value_with_interval(k, r["metrics"], digits.get(k, 4)))
                            for k in board["columns"]],
                 dist=_distribution(r) if not board["ranked"] and board["scores"] == "shown"
                 else None,
                 eff=[((r.get("efficiency") or {}).get(e["key"]), e["digits"])
                      for e in board["efficiency_columns"]])
            for r in board["rows"]]


RUN_CELL = re.compile(r'<span class="run-name">(.*?)</span>', re.S)


def link_runs(body: str, rows: list[dict]) -> SafeString:
    """The body with a link to each run the viewer may open (the rows that kept
    their ``id``): the cached body is everyone's, so it holds no run ids."""
    parts = body.split("<tr ")
    if len(parts) != len(rows) + 1 or not any(r.get("id") for r in rows):
        return mark_safe(body)
    out = [parts[0]]
    for html, r in zip(parts[1:], rows):
        if r.get("id"):
            href = escape(reverse("submission", args=[r["id"]]))
            html = RUN_CELL.sub(lambda m: f'<a class="run-name" href="{href}">{m.group(1)}</a>',
                                html, count=1)
        out.append(html)
    return mark_safe("<tr ".join(out))


def _distribution(r: dict) -> str:
    """An unranked board's values cell: the run's most frequent values with their records."""
    if r.get("distribution") is None:
        return ""
    shown = " · ".join(f"{v} ({n})" for v, n in r["distribution"])
    more = r.get("distinct", 0) - len(r["distribution"])
    return shown + (f" · {more} more" if more > 0 else "")


def body(rows: list[dict], key: str | None, ranked: bool = True) -> SafeString:
    """The ``<tbody>`` rows of ``rows`` (page rows: a board row with ``values``
    and ``eff``, the formatted metric and efficiency cells); cached under ``key``."""
    cache = caches["boards"]
    if key:
        hit = cache.get("body:" + key)
        if hit is not None:
            return mark_safe(hit)
    html = "".join(_row(r, ranked) for r in rows) if rows else EMPTY
    if key:
        cache.set("body:" + key, html, TIMEOUT)
    return mark_safe(html)


def _row(r: dict, ranked: bool = True) -> str:
    k = (r["team"], r["baseline"], r["run"], r.get("run_name"), r.get("run_file"),
         r.get("method"), r["runs"],
         r["submitted"], tuple(r["values"]), tuple(r["eff"]), repr(r.get("human")),
         r.get("dist"), r.get("note"))
    cells = _memo.get(k)
    if cells is None:
        if len(_memo) >= MEMO_MAX:
            _memo.clear()
        cells = _memo[k] = get_template(ROW).render({"r": r})
    rank = "" if r["rank"] is None else escape(r["rank"])
    # data-team: the page marks the viewer's own team's rows (views.leaderboard)
    return (f'<tr class="{"baseline" if r["baseline"] else ""}" data-team="{escape(r["team"])}">'
            + (f'<td class="num">{rank}</td>\n' if ranked else "") + cells)
