"""The tie order of ranx 0.2.8, which SV-Ident's official Task 2 script ranks with.

ranx 0.2.8 ranks a query (``ranx.utils.descending_sort``, also
``data_structures.common.sort_dict_by_value``) by taking the float64 scores in the
order the run lists its documents, calling ``np.argsort`` on them inside a
``numba.njit`` function and reversing the result. Compiled by numba, ``np.argsort``
is numba's own quicksort (``numba/misc/quicksort.py``: median-of-three partitions
while a range holds 16 or more items, then insertion sort), not numpy's C sort. So:

* a query with at most 15 documents is insertion-sorted, which is stable: tied
  documents come out in the run's order read backwards;
* in a longer one, the partitions move tied documents, and their order is whatever
  that quicksort makes of the input order. It depends on numba's algorithm, not on
  numpy: numpy's own ``np.argsort`` orders ties otherwise (on a CPU with AVX-512,
  numpy 1.26 and 2.x sort with x86-simd-sort, which is not stable even for 5 items).

This module calls the same numba function ranx calls, so the order is ranx's as long
as numba's quicksort stays as it is (numba 0.60 and 0.68 have the same one). It is
imported only when a run has tied scores: importing numba costs a third of a second.

Two queries, rows 0-2 and 3-4; ties come out in the run's order read backwards:

>>> import numpy as np
>>> reversed_argsort_groups(np.array([0.5, 0.5, 0.9, 0.1, 0.1]), np.array([0, 3])).tolist()
[2, 1, 0, 4, 3]
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def reversed_argsort_groups(score, starts):
    """For rows grouped by query (``starts``: each group's first row, ascending), the
    row order that ranks each group as ranx 0.2.8 does: ``np.argsort(group)[::-1]``."""
    n = score.shape[0]
    out = np.empty(n, dtype=np.int64)
    for g in range(starts.shape[0]):
        lo = starts[g]
        hi = starts[g + 1] if g + 1 < starts.shape[0] else n
        idx = np.argsort(score[lo:hi])[::-1]
        for i in range(hi - lo):
            out[lo + i] = lo + idx[i]
    return out
