"""The trec task on the id and score shapes real runs have (issue 41): numeric ids of
varying width, ClueWeb12 ids, UUIDs, widths mixed in one query, scores in plain,
long-decimal and scientific notation, ties; qrels graded with relevance-0 rows and
judged documents the run never retrieved. Both readers (line by line, pyarrow) must give
pytrec_eval's numbers on every query."""
import random

import numpy as np
import pytest
import pytrec_eval

from shareval.formats import trec as trec_format
from shareval.formats.errors import Problems
from shareval.formats.trec import encode, read_qrels, read_run
from shareval.metrics import ranking
from shareval.tasks import get

MEASURES = {"map": "map", "map@10": "map_cut_10", "p@10": "P_10", "r_precision": "Rprec",
            "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "mrr": "recip_rank"}


def _doc_id(shape: str, rng: random.Random) -> str:
    if shape == "numeric":
        return str(rng.randrange(10 ** rng.randint(1, 7)))
    if shape == "clueweb":
        return (f"clueweb12-{rng.randrange(2000):04d}{rng.choice(('tw', 'wb'))}-"
                f"{rng.randrange(100):02d}-{rng.randrange(100000):05d}")
    if shape == "uuid":
        h = f"{rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"
    if shape == "mixed":
        return f"doc{rng.randrange(10 ** rng.randint(0, 9))}"
    raise ValueError(shape)


def _score(notation: str, rng: random.Random) -> str:
    if notation == "six_decimals":
        return f"{rng.uniform(0, 40):.6f}"
    if notation == "long_decimal":
        return repr(rng.gauss(-6, 2))
    if notation == "scientific":
        return f"{rng.choice((-1, 1)) * rng.lognormvariate(-5, 3):.6e}"
    if notation == "scientific_upper":
        return f"{rng.uniform(0, 1):.3E}"
    if notation == "ties":                     # few distinct values: ties in every query
        return f"{rng.randrange(8) / 2:.1f}"
    if notation == "integer":
        return str(rng.randrange(-5, 5))
    raise ValueError(notation)


def _write(folder, shape: str, notation: str, seed: int, n_q: int = 40, n_d: int = 30):
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for q in range(n_q):
        qid = f"{300 + q}"
        docs = list(dict.fromkeys(_doc_id(shape, rng) for _ in range(n_d + 10)))
        retrieved, unretrieved = docs[:n_d], docs[n_d:n_d + 5]
        judged = rng.sample(retrieved, min(8, len(retrieved))) + unretrieved
        for d in judged:                        # graded, relevance-0 rows included
            qrels_lines.append(f"{qid} 0 {d} {rng.choice((0, 0, 1, 2))}\n")
        if q % 10 == 5:
            continue                            # judged, not in the run
        scored = [(d, _score(notation, rng)) for d in retrieved]
        if rng.random() < 0.5:                  # usually written ranked; not always
            scored.sort(key=lambda x: -float(x[1]))
        run_lines += [f"{qid} Q0 {d} {i} {s} tag\n" for i, (d, s) in enumerate(scored, 1)]
    rng.shuffle(qrels_lines)
    (folder / "qrels").write_text("".join(qrels_lines))
    (folder / "run").write_text("".join(run_lines))
    return folder / "qrels", folder / "run"


def _pytrec(qrels_path, run_path) -> dict:
    qrels, run = {}, {}
    for line in open(qrels_path):
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    for line in open(run_path):
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    measures = {"map", "map_cut", "P", "Rprec", "ndcg_cut", "ndcg", "recip_rank"}
    got = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    zero = {m: 0.0 for m in MEASURES.values()}
    return {q: got.get(q, zero) for q in qrels}


@pytest.mark.parametrize("shape, notation", [
    ("numeric", "six_decimals"), ("clueweb", "long_decimal"), ("uuid", "scientific"),
    ("mixed", "ties"), ("mixed", "scientific_upper"), ("numeric", "integer"),
    ("uuid", "ties")])
@pytest.mark.parametrize("reader", ["lines", "pyarrow"])
def test_every_shape_equals_pytrec_eval_on_every_query(tmp_path, monkeypatch, shape,
                                                       notation, reader):
    if reader == "pyarrow":
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    qrels, run = _write(tmp_path, shape, notation, seed=hash((shape, notation)) % 1000)
    result = get("trec").score(str(qrels), str(run), measures=",".join(MEASURES))
    ours = result.breakdowns["per_query"]
    theirs = _pytrec(qrels, run)
    assert set(ours) == set(theirs)
    for q, values in theirs.items():
        for name, trec_name in MEASURES.items():
            assert ours[q][name] == pytest.approx(values[trec_name], abs=1e-12), (q, name)
    for name in MEASURES:
        mean = sum(theirs[q][MEASURES[name]] for q in theirs) / len(theirs)
        assert result.metrics[name] == pytest.approx(mean, abs=1e-12)


@pytest.mark.parametrize("reader", ["lines", "pyarrow"])
def test_ties_follow_trec_evals_rule_byte_order_descending(tmp_path, monkeypatch, reader):
    """Equal scores: document id descending in byte order (strcmp), so ``doc9`` comes
    before ``doc10`` and ``doc10`` before ``doc1``; ``Doc`` (upper case) after all."""
    if reader == "pyarrow":
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    order = ["doc9", "doc10", "doc1", "Doc99"]           # the expected ranking
    (tmp_path / "run").write_text("".join(
        f"q Q0 {d} 1 2.5 t\n" for d in ["doc1", "Doc99", "doc10", "doc9"]))
    for relevant_at in range(4):
        (tmp_path / "qrels").write_text(f"q 0 {order[relevant_at]} 1\nq 0 other 0\n")
        r = get("trec").score(str(tmp_path / "qrels"), str(tmp_path / "run"), measures="mrr")
        assert r.metrics["mrr"] == pytest.approx(1 / (relevant_at + 1))


@pytest.mark.parametrize("reader", ["lines", "pyarrow"])
def test_scientific_notation_scores_rank_by_value(tmp_path, monkeypatch, reader):
    """1e-3 < 0.002 < 2.5E-2 < 1E+2, and negative exponents of negative scores."""
    if reader == "pyarrow":
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    scores = {"a": "1e-3", "b": "0.002", "c": "2.5E-2", "d": "1E+2", "e": "-3.0e-01",
              "f": "-1.5e+00"}
    (tmp_path / "run").write_text("".join(f"q Q0 {d} 1 {s} t\n" for d, s in scores.items()))
    expected = ["d", "c", "b", "a", "e", "f"]
    for i, d in enumerate(expected):
        (tmp_path / "qrels").write_text(f"q 0 {d} 1\n")
        r = get("trec").score(str(tmp_path / "qrels"), str(tmp_path / "run"), measures="mrr")
        assert r.metrics["mrr"] == pytest.approx(1 / (i + 1)), d


@pytest.mark.parametrize("reader", ["lines", "pyarrow"])
def test_tie_break_sorts_only_the_documents_of_tied_rows(tmp_path, monkeypatch, reader):
    """Encoded.doc_tiebreak is called with the codes of tied rows only (a run with a few
    ties must not sort its whole dictionary), and its keys follow byte order."""
    if reader == "pyarrow":
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    lines = [f"q Q0 d{i} {i} {100 - i}.0 t\n" for i in range(50)]
    lines += ["q Q0 x10 51 0.5 t\n", "q Q0 x9 52 0.5 t\n", "q Q0 x2 53 0.5 t\n"]
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("q 0 x9 1\nq 0 zz 1\n")
    p = Problems()
    enc, _ = encode(read_qrels(tmp_path / "qrels", p), read_run(tmp_path / "run", p))
    seen = []
    inner = enc.doc_tiebreak

    def spy(codes, runs):
        seen.append(codes.copy())
        return inner(codes, runs)
    enc.doc_tiebreak = spy
    values = ranking.evaluate_encoded(enc, ["mrr"])
    assert len(seen) == 1 and seen[0].size == 3
    x10, x9, x2 = inner(enc.run_doc[50:53], np.ones(3, dtype=np.int64)).tolist()  # file order
    assert x10 < x2 < x9                                   # ascending byte order
    # x9 > x2 > x10 in byte order: x9 is ranked 51st
    assert values["mrr"][0] == pytest.approx(1 / 51)


def test_byte_order_dictionary_is_trusted_only_as_read(tmp_path, monkeypatch):
    """Short ids read by pyarrow come with a byte-order dictionary (each code is its
    tie-break key); a table whose dictionary was replaced (a split) loses that."""
    import dataclasses
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    (tmp_path / "run").write_text("q Q0 d10 1 1.0 t\nq Q0 d9 2 1.0 t\nq Q0 d100 3 1.0 t\n")
    run = read_run(tmp_path / "run", Problems())
    assert run.docs_in_byte_order()
    assert run.d_dict.to_pylist() == ["d10", "d100", "d9"]
    assert not dataclasses.replace(run, d_dict=run.d_dict.slice(0)).docs_in_byte_order()
    (tmp_path / "long").write_text("q Q0 document-10 1 1.0 t\n")
    assert not read_run(tmp_path / "long", Problems()).docs_in_byte_order()
