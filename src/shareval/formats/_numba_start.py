"""numba for the MATERIAL scanner, without numba's BLAS probe (issue 41).

On its first compile or cache load, numba's CPU target imports
``numba.np.arraymath``, which imports ``scipy.linalg`` only to learn whether
``np.dot`` and friends can be compiled: 0.1 to 0.3 s of every ``validate`` and
``score`` of MATERIAL output, whose scanner uses no linear algebra. Here that
module is imported while ``scipy.linalg`` cannot be, so numba records "no BLAS"
and goes on; ``scipy.linalg`` imports normally afterwards. The price: in a
process that loaded the scanner first, numba-compiled code cannot call
``np.dot``/``np.linalg`` (numba says "scipy 0.16+ is required for linear
algebra"); no compiled function of shareval does (tests/formats/test_numba_start.py).
Only done while the process has one thread (the command line): in a server another
thread could import ``scipy.linalg`` while it is hidden.
"""
from __future__ import annotations

import sys
import threading

import numba as nb

__all__ = ["nb"]


def _skip_blas_probe() -> None:
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return                              # probed already, or scipy.linalg is paid for
    if threading.active_count() > 1:
        return          # another thread could import scipy.linalg meanwhile (a server)
    sys.modules["scipy.linalg"] = None      # type: ignore[assignment]  # import fails fast
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules["scipy.linalg"]


_skip_blas_probe()
