"""documents.tsv read into compact ids (issue 41) gives the pack and the problems, in
their order, that the line-by-line reader with a dict of the ids gave (kept below as
the oracle): repeated ids, bad modes, ids off the plan's pattern, odd lines."""
import random

import numpy as np
import pytest

from shareval.formats.errors import Problems
from shareval.formats.material import CS_GENRES, MODE_OF_GENRE, MODES, read_pack


def oracle(text: str, path, pattern_of):
    """main's read_pack loop (before issue 41's compact ids)."""
    problems, doc_ids, cs, genres, modes, index = [], [], [], [], [], {}
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip() or (i == 1 and line.split("\t")[0] == "doc_id"):
            continue
        parts = line.rstrip("\r").split("\t")
        doc = parts[0].strip()
        if doc in index:
            problems.append((str(path), i, "doc_id", f"duplicate document {doc!r}"))
            continue
        genre = parts[1].strip() if len(parts) > 1 else ""
        mode = parts[2].strip().lower() if len(parts) > 2 else ""
        if mode and mode not in MODES:
            problems.append((str(path), i, "mode", f"expected text or speech, found {parts[2]!r}"))
        index[doc] = len(doc_ids)
        doc_ids.append(doc)
        cs.append(genre.lower() in CS_GENRES)
        genres.append(genre)
        modes.append(mode or MODE_OF_GENRE.get(genre.lower(), ""))
    if not doc_ids:
        problems.append((str(path), None, "file", "no documents"))
    pattern = pattern_of(doc_ids)
    if pattern:
        import re
        rx = re.compile(pattern)
        problems += [(str(path), None, "doc_id", f"{d!r} does not match {pattern}")
                     for d in doc_ids if not rx.match(d)]
    return problems, doc_ids, cs, genres, modes


def plan_pattern(language=None):
    def pattern_of(doc_ids):
        import re
        lang = language
        if not lang and doc_ids:
            m = re.match(r"^MATERIAL_[^-]+-([^_]+)_", doc_ids[0])
            lang = m.group(1) if m else None
        return rf"^MATERIAL_EVAL1-{re.escape(lang or '[A-Z0-9]+')}_[0-9]{{8}}$"
    return pattern_of


GOOD = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(30)]
CASES = {
    "plain": "doc_id\tgenre\n" + "".join(f"{d}\tNW\n" for d in GOOD),
    "repeats": "doc_id\tgenre\tmode\n" + "".join(f"{d}\tCS\taudio\n" for d in GOOD[:5] * 3)
               + f"{GOOD[7]}\tNB\n{GOOD[7]}\tbad\tvideo\n{GOOD[8]}\tNB\tfilm\n",
    "odd lines": f"{GOOD[0]}\n\n  \n {GOOD[1]} \tcs \t Speech \r\n{GOOD[2]}\ttx\t\r\n"
                 f"\t\n{GOOD[3]}\tnb\tTEXT\textra\nMATERIAL_EVAL1-1B_00000001\tx\n"
                 f"doc_id\tgenre\nd\u00e9j\u00e0\tBC\n\U0001F600\tNW\tspeech\n{GOOD[0]}\t\t\n",
    "empty": "doc_id\tgenre\n\n",
    "300 genres": "".join(f"MATERIAL_EVAL1-1A_{i:08d}\tg{i}\n" for i in range(300)),
    "non-ascii first": "d\u00e9j\u00e0\tBC\nMATERIAL_EVAL1-1A_00000001\tNW\nd\u00e9j\u00e0\tNW\n",
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("settings", ["", "language: 1A\neval_period: EVAL1\ndocid_pattern: true\n",
                                      "eval_period: EVAL1\ndocid_pattern: true\n"])
def test_documents_read_as_the_line_reader_did(tmp_path, case, settings):
    root = tmp_path / "pack"
    root.mkdir()
    (root / "pack.yaml").write_text(settings or "{}\n")
    (root / "documents.tsv").write_text(CASES[case], encoding="utf-8")
    problems = Problems()
    pack = read_pack(root, problems)
    want_problems, ids, cs, genres, modes = oracle(
        CASES[case], root / "documents.tsv",
        plan_pattern("1A" if "language" in settings else None) if "docid_pattern" in settings
        else lambda ids: None)
    got = [(str(p.file), p.line, p.field, p.message) for p in problems.items]
    assert got == want_problems
    assert list(pack.doc_ids) == ids and len(pack.doc_ids) == len(ids)
    assert pack.conversational.tolist() == cs
    assert list(pack.genres) == genres and list(pack.modes) == modes
    assert pack.doc_index == {d: k for k, d in enumerate(ids)}


def test_many_documents_with_repeats_spread_out(tmp_path):
    rng = random.Random(3)
    docs = [f"MATERIAL_EVAL1-1A_{rng.randrange(10 ** 8):08d}" for _ in range(5000)]
    docs += rng.sample(docs, 40)
    rng.shuffle(docs)
    text = "doc_id\tgenre\n" + "".join(f"{d}\t{rng.choice(['NW', 'CS', 'NB', ''])}\n"
                                        for d in docs)
    root = tmp_path / "pack"
    root.mkdir()
    (root / "documents.tsv").write_text(text)
    problems = Problems()
    pack = read_pack(root, problems)
    want_problems, ids, cs, genres, modes = oracle(text, root / "documents.tsv", lambda i: None)
    assert [(str(p.file), p.line, p.field, p.message) for p in problems.items] == want_problems
    assert list(pack.doc_ids) == ids and pack.conversational.tolist() == cs
    assert list(pack.genres) == genres and list(pack.modes) == modes
    assert pack.genres.codes.dtype == np.uint8            # a few genres: a byte each
