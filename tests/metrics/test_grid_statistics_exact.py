"""grid_statistics visits only the ticks each query uses (issue 41). Its floats must be the
ones of the dense (query, tick) table it replaced, bit for bit: the reference below is that
table, written plainly, and the random inputs have many ties within a query, the edge
ticks 0 and 100000, and weights that make a different summation order show."""
import numpy as np
import pytest

from shareval.metrics.detection import GRID, grid_statistics, variant_weights


def dense_reference(relevant, ticks, n_total, beta, variant, chunk):
    """Column sums and summed best prefixes from a full (query, tick) table per chunk."""
    n_q = relevant.shape[0]
    w = variant_weights(relevant.sum(axis=1), n_total, variant)
    width = GRID + 1
    gain = np.where(relevant, w.w_miss[:, None], -beta * w.w_fa[:, None])
    total, best = np.zeros(width), 0.0
    for a in range(0, n_q, chunk):
        b = min(n_q, a + chunk)
        dense = np.zeros((b - a, width))
        for r in range(b - a):
            for d in range(ticks.shape[1]):                      # column order
                dense[r, ticks[a + r, d]] += gain[a + r, d]
        prefix = np.cumsum(dense[:, ::-1], axis=1)
        total += dense.sum(axis=0)
        best += float(np.maximum(prefix.max(axis=1), 0.0).sum())
    return total, float(1.0 - w.M + best)


def random_case(rng):
    n_q, n_d = int(rng.integers(1, 7)), int(rng.integers(1, 40))
    spread = int(rng.choice([1, 3, 8, 30]))                      # few distinct ticks: ties
    base = rng.choice([0, 50_000, GRID - spread])
    ticks = (base + rng.integers(0, spread + 1, (n_q, n_d))).clip(0, GRID)
    ticks[rng.random((n_q, n_d)) < 0.1] = GRID                   # edge thresholds
    ticks[rng.random((n_q, n_d)) < 0.1] = 0
    relevant = rng.random((n_q, n_d)) < rng.choice([0.0, 0.2, 0.6, 1.0])
    n_total = n_d + rng.integers(0, 2, n_q) * int(rng.integers(0, 10 ** 6))   # unscored docs
    return relevant, ticks.astype(np.int32), n_total


@pytest.mark.parametrize("seed", range(40))
def test_grid_statistics_are_bit_identical_to_the_dense_table(seed):
    rng = np.random.default_rng(seed)
    relevant, ticks, n_total = random_case(rng)
    for variant in ("all", "with_relevant", "primary"):
        for beta in (20.0, 1 / 3, 0.0):
            for chunk in (1, 2, 16):
                total, oracle = dense_reference(relevant, ticks, n_total, beta, variant, chunk)
                g = grid_statistics(relevant, ticks, n_total, beta, variant, chunk=chunk)
                assert g.oracle_qwv == oracle or (np.isnan(oracle) and np.isnan(g.oracle_qwv))
                if beta:                     # the sweep's false alarms come from these sums
                    w = variant_weights(relevant.sum(axis=1), n_total, variant)
                    miss = np.bincount(ticks[relevant], weights=np.broadcast_to(
                        w.w_miss[:, None], ticks.shape)[relevant], minlength=GRID + 1)
                    fa = np.cumsum(((miss - total) / beta)[::-1])[::-1]
                    levels = np.flatnonzero(np.bincount(ticks.ravel(), minlength=GRID + 1))
                    assert g.sweep.p_fa[1:].tolist() == fa[levels[::-1]].tolist()


def test_only_the_order_of_the_columns_within_a_tick_is_kept():
    """Two queries, all pairs on one tick: the per-query sums are taken in column order,
    then the column sum over queries in query order (the dense table's order)."""
    relevant = np.array([[True, False, False, True], [False, True, True, False]])
    ticks = np.full((2, 4), 77_777, dtype=np.int32)
    total, oracle = dense_reference(relevant, ticks, np.array([10, 7]), 3.0, "all", 16)
    g = grid_statistics(relevant, ticks, np.array([10, 7]), 3.0, "all")
    assert g.oracle_qwv == oracle
