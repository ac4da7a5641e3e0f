"""The scanner's guess of each line's document (the previous file's order) never
changes a result: on generated files it decodes what the line validator decodes,
file after file with one shared table, and a broken file still gets the line
validator's first problem."""
import random

import numpy as np
import pytest

from shareval.formats.errors import Problems
from shareval.formats.material import Pack, read_output_lines
from shareval.formats.scan import doc_table, scan_file

# ids of several lengths, some a prefix of another: a guess of the wrong length
# must fall back to the lookup
DOCS = ["D1", "D10", "D100", "d-ü", "MATERIAL_EVAL1-1A_00000001", "MATERIAL_EVAL1-1A_0000000",
        "x", "xy"] + [f"doc{i}" for i in range(40)]


def pack():
    return Pack(root=None, settings={}, doc_ids=DOCS,
                conversational=np.zeros(len(DOCS), bool))


def body(rng, order, conf_digits=None):
    lines = []
    for i in order:
        k = conf_digits or rng.randint(1, 5)
        conf = f"{rng.randint(0, 10 ** k - 1) / 10 ** k:.{k}f}" if rng.random() > 0.05 else "1.0"
        lines.append(f"{DOCS[i]}\t{rng.choice('YN')}\t{conf}")
    return "\n".join(lines) + "\n"


def test_fast_path_equals_slow_path_over_a_sequence_of_files():
    rng = random.Random(7)
    table = doc_table(DOCS)                      # shared: each file primes the next one's guess
    allowed = np.ones(len(DOCS), bool)
    order = list(range(len(DOCS)))
    for n in range(60):
        if n % 3 == 0:
            rng.shuffle(order)                   # a new order: every guess can be wrong
        elif n % 3 == 1:                         # a few lines swapped: some guesses wrong
            a, b = rng.randrange(len(order)), rng.randrange(len(order))
            order[a], order[b] = order[b], order[a]
        data = body(rng, order).encode()
        fast = scan_file(data, table, allowed, 3)
        slow = read_output_lines("f", data, pack(), Problems(), 3, allowed)
        assert fast is not None and slow is not None
        assert np.array_equal(fast.decision, slow.decision)
        assert np.array_equal(fast.ticks, slow.ticks)
        assert np.array_equal(fast.seen, slow.listed)


def first_problem(data: bytes) -> str:
    problems = Problems()
    assert read_output_lines("f", data, pack(), problems, 3, np.ones(len(DOCS), bool)) is None
    return str(problems.items[0])


def breakages():
    rng = random.Random(3)
    good = body(rng, range(len(DOCS)), 5)
    lines = good.split("\n")
    yield "bad score", good.replace("\t0.", "\t2.", 1), "f:1: ConfidenceFactor"
    yield "score above 1", "\n".join([lines[0].rsplit("\t", 1)[0] + "\t1.00001"] + lines[1:]), \
        "f:1: ConfidenceFactor"
    yield "duplicate doc", good + lines[4] + "\n", "duplicate (first at line 5)"
    yield "missing column", "\n".join(lines[:3] + [lines[3].rsplit("\t", 1)[0]] + lines[4:]), \
        "f:4: line"
    yield "bad utf-8", good.replace("d-ü", "d-\udcff", 1), "f:4: encoding"
    yield "crlf", good.replace("\n", "\r\n", 1), "f:1: line"
    yield "unknown doc", good.replace("D100\t", "D1000\t", 1), "f:3: DocID"
    yield "prefix of a doc", good.replace("D100\t", "D10\t", 1), "f:3: DocID"
    yield "bad decision", good.replace("D10\tY", "D10\ty").replace("D10\tN", "D10\tn"), \
        "f:2: HardDecision"
    yield "empty line", good.replace("\n", "\n\n", 1), "f:2: line"
    yield "missing doc", "\n".join(lines[1:]), "missing"


@pytest.mark.parametrize("name,text,expected", list(breakages()), ids=lambda v: str(v)[:20])
def test_broken_files_leave_the_fast_path_with_the_slow_paths_first_problem(name, text,
                                                                          expected):
    data = text.encode("utf-8", "surrogateescape")
    table = doc_table(DOCS)
    allowed = np.ones(len(DOCS), bool)
    good = body(random.Random(3), range(len(DOCS)), 5).encode()
    assert scan_file(good, table, allowed, 3) is not None      # primes the guesses
    assert scan_file(data, table, allowed, 3) is None, name
    assert expected in first_problem(data), (name, first_problem(data))
