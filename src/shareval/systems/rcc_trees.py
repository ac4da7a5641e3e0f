"""Gradient-boosted trees stored as JSON (portable, no pickle), walked by compiled code
or by numpy.

Two walks give the same sums: ``rcc_walk.walk``, compiled by numba (importing numba and
loading the compiled code from its cache costs about 0.65 s of CPU per process), and
``_walk_numpy``, one tree level per step over all (row, tree) pairs (no start-up cost,
but several times slower on a publication's few hundred rows and 800 trees). A
process uses the numpy walk until ``warm()`` loads the compiled one: ``run rcc`` does
so for batches of more than ``COMPILED_FROM`` publications (measured: the numpy walk
takes about 40 ms more per publication than the compiled one, whose loading costs
0.65 s), services always.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

COMPILED_FROM = 16      # more publications than this: a run loads the compiled walk
_COMPILED = None


def _walk_numpy(X, feature, threshold, left, right, value, roots):
    """The same sums as the compiled walk: the same float64 comparisons (NaN goes right)
    reach the same leaves, and the leaf values are added tree by tree in the same order
    (``cumsum`` is sequential), so the result is identical to the last bit."""
    rows, trees = X.shape[0], roots.shape[0]
    if rows == 0 or trees == 0:
        return np.zeros(rows)
    leaf = left < 0
    flat = X.ravel()
    node = np.tile(roots, rows)                 # pair p: row p // trees, tree p % trees
    active = np.arange(rows * trees)
    at = node
    while True:
        inner = ~leaf[at]
        active, at = active[inner], at[inner]
        if not len(active):
            break
        x = flat[(active // trees) * X.shape[1] + feature[at]]
        at = np.where(x <= threshold[at], left[at], right[at])
        node[active] = at
    return np.cumsum(value[node].reshape(rows, trees), axis=1)[:, -1]


def compiled() -> bool:
    return _COMPILED is not None


def warm() -> None:
    """Import numba and load the compiled walk from its cache (or compile it) now; every
    later ``predict`` in this process (and its forked workers) uses it."""
    global _COMPILED
    if _COMPILED is None:
        from .rcc_walk import walk
        none = np.full(1, -1, dtype=np.int32)
        walk(np.zeros((1, 1)), np.zeros(1, np.int32), np.zeros(1), none, none, np.zeros(1),
             np.zeros(1, np.int32))
        _COMPILED = walk


@dataclass
class Trees:
    features: list[str]
    baseline: float
    trees: list[dict]          # arrays: feature, threshold, left, right, value, leaf
    _packed: tuple = field(default=None, repr=False)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Probability of the positive class for each row."""
        if self._packed is None:
            self._pack()
        walk = _COMPILED if _COMPILED is not None else _walk_numpy
        raw = walk(np.ascontiguousarray(X, dtype=np.float64), *self._packed)
        return 1.0 / (1.0 + np.exp(-(self.baseline + raw)))

    def _pack(self) -> None:
        """All trees in one node table; child indices shifted by each tree's offset."""
        offsets = np.cumsum([0] + [len(t["leaf"]) for t in self.trees[:-1]])
        cat = {k: np.concatenate([t[k] for t in self.trees]) for k in self.trees[0]}
        shift = np.concatenate([np.full(len(t["leaf"]), o) for t, o in zip(self.trees, offsets)])
        left = np.where(cat["leaf"], -1, cat["left"] + shift).astype(np.int32)
        right = np.where(cat["leaf"], -1, cat["right"] + shift).astype(np.int32)
        self._packed = (cat["feature"].astype(np.int32), cat["threshold"].astype(np.float64),
                        left, right, cat["value"].astype(np.float64), offsets.astype(np.int32))

    @classmethod
    def average(cls, members: list["Trees"]) -> "Trees":
        """One model whose log-odds are the mean of the members' (a bag): their trees
        side by side, each leaf value divided by the number of members."""
        k = len(members)
        trees = [{**t, "value": t["value"] / k} for m in members for t in m.trees]
        return cls(members[0].features, sum(m.baseline for m in members) / k, trees)

    @classmethod
    def from_sklearn(cls, model, names) -> "Trees":
        """From a fitted binary HistGradientBoostingClassifier without missing values."""
        trees = []
        for (predictor,) in model._predictors:
            n = predictor.nodes
            trees.append({"feature": n["feature_idx"].astype(int),
                          "threshold": n["num_threshold"].astype(float),
                          "left": n["left"].astype(int), "right": n["right"].astype(int),
                          "value": n["value"].astype(float), "leaf": n["is_leaf"].astype(bool)})
        return cls(list(names), float(np.ravel(model._baseline_prediction)[0]), trees)

    def to_json(self) -> dict:
        return {"features": self.features, "baseline": self.baseline,
                "trees": [{k: (v.astype(int).tolist() if v.dtype.kind in "bi" else
                               [float(f"{x:.6g}") for x in v]) for k, v in t.items()}
                          for t in self.trees]}

    @classmethod
    def from_json(cls, d: dict) -> "Trees":
        trees = []
        for t in d["trees"]:
            tree = {k: np.asarray(v) for k, v in t.items()}
            tree["leaf"] = tree["leaf"].astype(bool)
            trees.append(tree)
        return cls(d["features"], d["baseline"], trees)
