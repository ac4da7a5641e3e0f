"""The single-pass scanner decodes exactly what the line-by-line validator does."""
import numpy as np
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import Problems
from shareval.formats.material import Pack, read_output_lines
from shareval.formats.scan import doc_table, scan_file

DOCS = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(12)] + ["doc-ü", "x"]


def pack():
    return Pack(root=None, settings={}, doc_ids=DOCS,
                conversational=np.zeros(len(DOCS), bool))


conf_text = st.one_of(st.sampled_from(["0.0", "1.0", "1.00000", "0.5", "0.840", "0.00001"]),
                      st.integers(0, 99999).map(lambda v: f"0.{v:05d}".rstrip("0") or "0.0"))


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(len(DOCS))), st.lists(st.booleans(), min_size=len(DOCS),
                                                   max_size=len(DOCS)),
       st.lists(conf_text, min_size=len(DOCS), max_size=len(DOCS)), st.booleans())
def test_scanner_equals_slow_path_on_valid_files(order, ys, confs, final_newline):
    confs = [c if c.endswith(tuple("0123456789")) and "." in c and c[-1:] != "." else c + "0"
             for c in confs]
    text = "\n".join(f"{DOCS[i]}\t{'Y' if ys[i] else 'N'}\t{confs[i]}" for i in order)
    data = (text + ("\n" if final_newline else "")).encode()
    allowed = np.ones(len(DOCS), bool)
    fast = scan_file(data, doc_table(DOCS), allowed, 3)
    slow = read_output_lines("f", data, pack(), Problems(), 3, allowed)
    assert fast is not None and slow is not None
    assert np.array_equal(fast.decision, slow.decision)
    assert np.array_equal(fast.ticks, slow.ticks)


def test_scanner_rejects_what_the_validator_rejects():
    good = "".join(f"{d}\tN\t0.5\n" for d in DOCS)
    allowed = np.ones(len(DOCS), bool)
    table = doc_table(DOCS)
    assert scan_file(good.encode(), table, allowed, 3) is not None
    bad_variants = [
        good.replace("\n", "\r\n", 1), good.replace("\tN\t0.5", "\tn\t0.5", 1),
        good.replace("0.5", "1", 1), good.replace("0.5", "0.500001", 1),
        good.replace("0.5", "1.00001", 1), good.replace("0.5", "5.0e-2", 1),
        good.replace("0.5", ".5", 1), good + f"{DOCS[0]}\tN\t0.5\n", good + "\n",
        good.replace(DOCS[3], DOCS[3] + "x"), good.split("\n", 1)[1],
        good.replace("\t0.5\n", "\t0.5\textra\n", 1),
    ]
    for bad in bad_variants:
        assert scan_file(bad.encode(), table, allowed, 3) is None, bad[:80]
        assert read_output_lines("f", bad.encode(), pack(), Problems(), 3, allowed) is None


def test_reference_files_scan_like_the_slow_reader(tmp_path):
    from shareval.formats.material import read_judgment_file
    p = tmp_path / "q.tsv"
    p.write_text(f"{DOCS[3]}\tY\n{DOCS[0]}\tN\n{DOCS[5]}\tY\n")
    fast = read_judgment_file(p, pack(), Problems())
    assert np.flatnonzero(fast).tolist() == [3, 5]
    p.write_text(f"{DOCS[3]}\tY\r\n{DOCS[5]}\tY\n")           # CR: the slow reader decides
    assert np.flatnonzero(read_judgment_file(p, pack(), Problems())).tolist() == [3, 5]
    probs = Problems()
    p.write_text(f"{DOCS[3]}\tmaybe\nnot-a-doc\tY\n")
    read_judgment_file(p, pack(), probs)
    assert [x.field for x in probs.items] == ["line", "DocID"]
