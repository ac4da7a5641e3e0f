"""Memory a call allocates, as the memory-bound tests measure it."""
from __future__ import annotations

import tracemalloc
from typing import Any, Callable


def python_peak(call: Callable[[], Any], warm: bool = True) -> tuple[int, Any]:
    """(peak bytes Python and numpy allocate during ``call()``, its result); with
    ``warm``, ``call()`` runs once before, unmeasured, so imports and caches do not
    count. pyarrow's own pool is not traced (check ``pa.total_allocated_bytes()``)."""
    if warm:
        call()
    tracemalloc.start()
    try:
        result = call()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()
