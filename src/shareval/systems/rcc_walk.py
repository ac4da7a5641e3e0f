"""The compiled tree walk (numba), imported only by ``rcc_trees.warm``: importing numba
and loading this from its cache costs about 0.65 s of CPU, which a short run skips."""
import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def walk(X, feature, threshold, left, right, value, roots):
    """Sum over trees of each row's leaf value; ``left`` is -1 at a leaf. Tree by tree
    keeps its nodes in cache. A missing value (NaN) goes right."""
    out = np.zeros(X.shape[0])
    for j in range(roots.shape[0]):
        root = roots[j]
        for i in range(X.shape[0]):
            node = root
            while left[node] >= 0:
                if X[i, feature[node]] <= threshold[node]:
                    node = left[node]
                else:
                    node = right[node]
            out[i] += value[node]
    return out
