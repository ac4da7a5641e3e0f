"""Scores' ``result`` JSON, decoded once per server process.

A team's list of runs in the API (``present.list_payload``) shows each run's
whole result (per-query breakdowns: ~250 KB of JSON for a TREC run), and
decoding it was half of that request's CPU in a deadline rush
(docs/dev/i41-rush.md). A ``Score`` row is never changed after it is written
except its ``current`` flag (a re-score writes a new row and deletes the old),
so its decoded result is kept here under (score id, run id, created): a
database rebuilt or rolled back (tests) that reuses an id cannot bring back
another score's result. Only the stored value is cached; what a viewer may see
of it is decided on every request, as before. At most ``LIMIT_BYTES`` of JSON
text, least recently used out first (decoded, a result takes ~3x its text: a
680 KB TREC result 2.1 MB, so ~100 MB of the server's memory at most).
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict

from django.db.models import TextField
from django.db.models.functions import Cast

LIMIT_BYTES = 32 * 2 ** 20

_lock = threading.Lock()
_cache: OrderedDict = OrderedDict()          # key -> (result, size)
_size = 0


def _key(score) -> tuple:
    return (score.pk, score.submission_id, score.created)


def fill(scores: list) -> None:
    """Set ``result`` on ``scores`` (loaded with ``result`` deferred): from the
    cache, the others with one query."""
    global _size
    missing = {}
    with _lock:
        for s in scores:
            hit = _cache.get(_key(s))
            if hit is None:
                missing.setdefault(s.pk, []).append(s)
            else:
                _cache.move_to_end(_key(s))
                s.result = hit[0]
    if not missing:
        return
    from shareval.platform.submissions.models import Score
    rows = Score.objects.filter(pk__in=list(missing)).values_list(
        "pk", Cast("result", output_field=TextField()))
    for pk, text in rows:
        result = json.loads(text) if text is not None else None
        for s in missing[pk]:
            s.result = result
        size = len(text or "")
        if size > LIMIT_BYTES // 4:
            continue
        with _lock:
            key = _key(missing[pk][0])
            if key not in _cache:
                _cache[key] = (result, size)
                _size += size
            while _size > LIMIT_BYTES and _cache:
                _size -= _cache.popitem(last=False)[1][1]


def clear() -> None:
    global _size
    with _lock:
        _cache.clear()
        _size = 0
