"""The numpy check of MATERIAL output files (issue 41): it accepts a file only when the
line validator accepts it, whatever the block size; the compact ids behave as the
list and dict of str they replace; hashes of spans anywhere equal span_hashes."""
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats import material_check
from shareval.formats.docids import DocIds, Labels
from shareval.formats.errors import Problems
from shareval.formats.material import Pack, read_output_lines
from shareval.formats.material_check import output_file_clean
from shareval.formats.strhash import hashes_at, span_hashes

# several lengths, one a prefix of another, non-ASCII, longer than 8 and 16 bytes
DOCS = ["D1", "D10", "D100", "d-ü", "MATERIAL_EVAL1-1A_00000001", "MATERIAL_EVAL1-1A_0000000",
        "x", "xy", "\U0001F600y"] + [f"doc{i}" for i in range(40)]


def pack():
    return Pack(root=None, settings={}, doc_ids=DOCS, conversational=np.zeros(len(DOCS), bool))


def body(rng, order, final_newline=True):
    lines = []
    for i in order:
        k = rng.randint(1, 5)
        conf = f"{rng.randint(0, 10 ** k - 1) / 10 ** k:.{k}f}" if rng.random() > 0.1 else \
            rng.choice(["1.0", "1.00000", "0.0"])
        lines.append(f"{DOCS[i]}\t{rng.choice('YN')}\t{conf}")
    return "\n".join(lines) + ("\n" if final_newline else "")


def accepted(data: bytes, expected) -> bool:
    return read_output_lines("f", data, pack(), Problems(), 3, expected) is not None


MUTATIONS = [
    lambda t: t.replace("\n", "\r\n", 1), lambda t: t.replace("\tN\t", "\tn\t", 1),
    lambda t: t.replace("\tY\t", "\tYY\t", 1), lambda t: t.replace("\t0.", "\t1.", 1),
    lambda t: t.replace("\t0.", "\t.", 1), lambda t: t.replace("\t0.", "\t00.", 1),
    lambda t: t.replace("\n", "0000000\n", 1), lambda t: t.replace("\n", "e5\n", 1),
    lambda t: t.replace("\n", "\textra\n", 1), lambda t: t.replace("\t", " ", 1),
    lambda t: t + "\n", lambda t: "\n" + t, lambda t: t.split("\n", 1)[1],
    lambda t: t + t.split("\n", 1)[0] + "\n", lambda t: t.replace("D1\t", "D2\t", 1),
    lambda t: t.replace("doc3\t", "doc3 \t", 1), lambda t: t.replace("doc3\t", "\tdoc3\t", 1),
    lambda t: t.replace("\n", "\n\n", 1), lambda t: t.replace("doc5\t", "\t", 1),
    lambda t: t.replace("\t1.0\n", "\t1.00001\n", 1), lambda t: t.replace("\t", "\t\t", 1),
    lambda t: t.replace("ü", "u", 1), lambda t: "",
    lambda t: re.sub(r"\t0\.([0-9][0-9])", r"\t0\1", t, count=1),        # no point
    # six decimals: 8 characters, one more than a confidence may have
    lambda t: re.sub(r"\t([01]\.[0-9]+)\n", lambda m: f"\t{(m[1] + '0' * 6)[:8]}\n", t, count=1),
]


@pytest.mark.parametrize("block", [1, 7, 40, 1 << 20])
def test_check_accepts_exactly_what_the_line_validator_accepts(monkeypatch, block):
    monkeypatch.setattr(material_check, "BLOCK_BYTES", block)
    rng = random.Random(block)
    ids = DocIds.of(DOCS)
    everything = np.ones(len(DOCS), bool)
    some = everything.copy()
    some[[2, 5, 11]] = False
    for n in range(40):
        order = list(range(len(DOCS)))
        rng.shuffle(order)
        text = body(rng, order, final_newline=n % 2 == 0)
        assert output_file_clean(text.encode(), ids, everything)
        assert accepted(text.encode(), everything)
        assert not output_file_clean(text.encode(), ids, some)      # unexpected documents
        for mutate in MUTATIONS:
            bad = mutate(text).encode()
            if output_file_clean(bad, ids, everything):
                assert accepted(bad, everything), mutate(text)[:200]
            else:
                assert bad == text.encode() or not accepted(bad, everything), mutate(text)


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_check_never_accepts_what_the_validator_refuses(data):
    """Random byte edits of a good file: the check's True always agrees."""
    rng = random.Random(data.draw(st.integers(0, 10 ** 6)))
    text = body(rng, rng.sample(range(len(DOCS)), len(DOCS))).encode()
    pos = data.draw(st.integers(0, len(text) - 1))
    edit = data.draw(st.sampled_from([b"", b"\t", b"\n", b"\r", b"0", b"9", b".", b"Y", b"1",
                                      b"\xc3", b"D", b" "]))
    bad = text[:pos] + edit + text[pos + data.draw(st.integers(0, 3)):]
    expected = np.ones(len(DOCS), bool)
    if output_file_clean(bad, DocIds.of(DOCS), expected):
        assert accepted(bad, expected)


def test_ids_sharing_a_hash_go_to_the_line_validator(monkeypatch):
    ids = DocIds.of(DOCS)
    text = body(random.Random(1), range(len(DOCS))).encode()
    assert output_file_clean(text, ids, np.ones(len(DOCS), bool))
    hashes, order, starts, bits = ids.lookup()
    hashes = hashes.copy()
    hashes[1] = hashes[0]                              # as if two ids had one hash
    monkeypatch.setattr(ids, "_lookup", (hashes, order, starts, bits))
    assert not output_file_clean(text, ids, np.ones(len(DOCS), bool))


def test_a_hash_hit_is_confirmed_byte_for_byte(monkeypatch):
    """An id not in the pack whose hash equals a pack id's (forced here) is refused."""
    ids = DocIds.of(DOCS)
    text = body(random.Random(2), range(len(DOCS))).encode()
    forged = text.replace(b"doc7\t", b"zzz7\t")        # same length, not a pack id
    real = material_check.hashes_of
    doc7 = hashes_at(np.frombuffer(b"doc7", np.uint8), np.array([0]), np.array([4]))[0]
    zzz7 = int.from_bytes(b"zzz7", "little")

    def colliding(words_at, lens):
        forged = (words_at(0) & np.uint64(2 ** 32 - 1) == zzz7) & (lens == 4)
        h = real(words_at, lens)
        h[forged] = doc7
        return h
    monkeypatch.setattr(material_check, "hashes_of", colliding)
    assert output_file_clean(text, ids, np.ones(len(DOCS), bool))
    assert not output_file_clean(forged, ids, np.ones(len(DOCS), bool))


@pytest.mark.parametrize("strings", [[], [""], ["a"], DOCS, ["x" * 17, "x" * 16, "", "é" * 9]])
def test_hashes_at_equal_span_hashes(strings):
    raw = [s.encode() for s in strings]
    data = np.frombuffer(b"".join(raw) or b"", np.uint8)
    offsets = np.zeros(len(raw) + 1, np.int64)
    offsets[1:] = np.cumsum([len(r) for r in raw])
    expected = span_hashes(data, offsets)
    assert np.array_equal(hashes_at(data, offsets[:-1], np.diff(offsets)), expected)
    # the same strings elsewhere, padded, in another order: the same hashes
    padded = b"".join(b"\t" + r + b"\n" for r in reversed(raw))
    begin = np.cumsum([0] + [len(r) + 2 for r in reversed(raw)])[:-1] + 1
    got = hashes_at(np.frombuffer(padded, np.uint8), begin.astype(np.int64),
                    np.array([len(r) for r in reversed(raw)], np.int64))
    assert np.array_equal(got[::-1], expected)


def test_doc_ids_behave_as_the_list_and_dict():
    ids = DocIds.of(DOCS)
    assert len(ids) == len(DOCS) and list(ids) == DOCS and ids == DOCS
    assert [ids[k] for k in range(len(DOCS))] == DOCS and ids[-1] == DOCS[-1]
    assert ids[2:5] == DOCS[2:5]
    assert ids.index() == {d: k for k, d in enumerate(DOCS)}
    with pytest.raises(IndexError):
        ids[len(DOCS)]
    assert len(DocIds.of([])) == 0 and list(DocIds.of([])) == []
    hashes, order, starts, bits = ids.lookup()
    assert np.all(np.diff(hashes.astype(object)) > 0)       # sorted, all different
    assert sorted(order.tolist()) == list(range(len(DOCS)))
    buckets = (hashes >> np.uint64(64 - bits)).astype(np.int64)
    for b in range(2 ** bits):
        assert np.all(buckets[starts[b]:starts[b + 1]] == b)


def test_labels_masks_are_the_groups_of_the_strings():
    labels = ["NW", "", "CS", "NW", "speech", "", "CS"]
    lab = Labels.of(labels)
    assert list(lab) == labels and len(lab) == len(labels) and lab == labels
    arr = np.asarray(labels, dtype=object)
    want = {k: arr == k for k in sorted(set(labels) - {""})}
    got = lab.masks()
    assert list(got) == list(want)
    assert all(np.array_equal(got[k], want[k]) for k in want)
