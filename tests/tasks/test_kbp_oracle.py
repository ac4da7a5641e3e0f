"""kbp-relations against an independent oracle on Re-DocRED's dev set: runs made from
the gold by dropping triples, swapping relations, shifting spans and repeating entity
pairs through other mentions, written as TSV (half of the mentions as token spans),
scored by the task and by the plain set computation below."""
from __future__ import annotations

import json
import random
from itertools import product

import pytest

from shareval import tasks
from tests.conftest import SHARED_DATA

KBP = SHARED_DATA / "kbp"
DOCS = KBP / "re-docred-dev.json"
TASK = tasks.get("kbp-relations")
HEADER = ["doc_id", "subject", "subject_start", "subject_end", "subject_sent",
          "subject_token_start", "subject_token_end", "relation", "object", "object_start",
          "object_end", "object_sent", "object_token_start", "object_token_end"]


@pytest.fixture(scope="module")
def gold():
    if not DOCS.exists():
        pytest.skip(f"Re-DocRED data not found at {DOCS} (set SHAREVAL_SHARED_DATA)")
    return json.loads(DOCS.read_text(encoding="utf-8"))


def _char_offsets(doc):
    """{(sent, token): (char start, char end)} in the whole document's tokens joined by
    single spaces (which is what joining sentences by a space gives too)."""
    out, pos = {}, 0
    for s, sent in enumerate(doc["sents"]):
        for k, tok in enumerate(sent):
            out[s, k] = (pos, pos + len(tok))
            pos += len(tok) + 1
    return out


def _mention(doc, offsets, m):
    return offsets[m["sent_id"], m["pos"][0]][0], offsets[m["sent_id"], m["pos"][1] - 1][1]


def oracle(gold, preds):
    """preds: (title, (s0, s1), relation, (o0, o1), subject text, object text)."""
    docs = {d["title"]: d for d in gold}
    gm, ge = set(), set()
    span_entities = {}
    for d in gold:
        off = _char_offsets(d)
        for e, ent in enumerate(d["vertexSet"]):
            for m in ent:
                span_entities.setdefault((d["title"], _mention(d, off, m)), set()).add(e)
        # entities with the very same mentions are one (the first), as documented
        mentions = [sorted(_mention(d, off, m) for m in ent) for ent in d["vertexSet"]]
        one = [mentions.index(ms) for ms in mentions]
        for lab in d["labels"]:
            ge.add((d["title"], one[lab["h"]], lab["r"], one[lab["t"]]))
            for a, b in product(d["vertexSet"][lab["h"]], d["vertexSet"][lab["t"]]):
                gm.add((d["title"], _mention(d, off, a), lab["r"], _mention(d, off, b)))
    pm = set(p[:4] for p in preds)
    pe = set()
    subj = obj = 0
    for t, s, r, o, st, ot in preds:
        hs = sorted(span_entities.get((t, s), ())) or ["unlinked " + st]
        ts = sorted(span_entities.get((t, o), ())) or ["unlinked " + ot]
        good = [(h, x) for h in hs for x in ts if (t, h, r, x) in ge]
        h, x = min(good) if good else (hs[0], ts[0])
        pe.add((t, h, r, x))
        subj += any((t, h2, r, x2) in ge for h2 in hs for x2 in range(len(docs[t]["vertexSet"])))
        obj += any((t, h2, r, x2) in ge for x2 in ts for h2 in range(len(docs[t]["vertexSet"])))
    out = {}
    for name, p, g in (("mention", pm, gm), ("entity", pe, ge)):
        tp = len(p & g)
        out[f"{name}_precision"] = tp / len(p) if p else 0.0
        out[f"{name}_recall"] = tp / len(g)
        out[f"{name}_f1"] = 2 * tp / (len(p) + len(g))
    out["relation_precision"] = len(pm & gm) / len(pm)
    out["subject_precision"] = subj / len(pm)
    out["object_precision"] = obj / len(pm)
    out["entity_precision_factorised"] = (out["relation_precision"] * out["subject_precision"]
                                          * out["object_precision"])
    return out


def perturbed_run(gold, seed):
    """Predictions as (row cells, oracle tuple), distinct by document, spans and relation."""
    rng = random.Random(seed)
    relations = sorted({lab["r"] for d in gold for lab in d["labels"]})
    rows, seen = [], set()
    for d in gold:
        off = _char_offsets(d)
        text = " ".join(t for s in d["sents"] for t in s)
        for lab in d["labels"]:
            if rng.random() < 0.3:
                continue                                      # dropped
            r = rng.choice(relations) if rng.random() < 0.15 else lab["r"]
            for _ in range(1 + (rng.random() < 0.3)):         # sometimes another mention pair
                ms = [rng.choice(d["vertexSet"][lab["h"]]), rng.choice(d["vertexSet"][lab["t"]])]
                if rng.random() < 0.1:                        # a span shifted by one token
                    m = ms[0]
                    n = len(d["sents"][m["sent_id"]])
                    start = min(m["pos"][0] + 1, n - 1)
                    ms[0] = dict(m, pos=[start, max(start + 1, min(m["pos"][1] + 1, n))])
                spans = [_mention(d, off, m) for m in ms]
                key = (d["title"], spans[0], r, spans[1])
                if key in seen:
                    continue
                seen.add(key)
                cells = [d["title"]]
                for role, m, sp in zip(("s", "o"), ms, spans):
                    tokens = rng.random() < 0.5
                    cells += [text[sp[0]:sp[1]]]
                    cells += ["", ""] if tokens else [str(sp[0]), str(sp[1])]
                    cells += [str(m["sent_id"]), str(m["pos"][0]), str(m["pos"][1])] \
                        if tokens else ["", "", ""]
                    if role == "s":
                        cells.append(r)
                rows.append((cells, key + (text[spans[0][0]:spans[0][1]],
                                           text[spans[1][0]:spans[1][1]])))
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("seed", [0, 1])
def test_the_task_agrees_with_the_oracle(gold, tmp_path, seed):
    rows = perturbed_run(gold, seed)
    path = tmp_path / "run.tsv"
    path.write_text("\t".join(HEADER) + "\n" + "".join("\t".join(c) + "\n" for c, _ in rows),
                    encoding="utf-8")
    result = TASK.score(DOCS, path)
    expected = oracle(gold, [p for _, p in rows])
    for name, value in expected.items():
        assert result.metrics[name] == pytest.approx(value, abs=1e-12), name
    # a perturbed run is neither perfect nor worthless
    assert 0.3 < result.metrics["entity_f1"] < 0.95
    assert result.counts["unlinked_mentions"] > 0


def test_the_gold_as_a_run_scores_one(gold, tmp_path):
    """Every mention pair of every label, once: 1 everywhere (entities with the same
    mentions counted as one, as documented)."""
    lines = set()
    for d in gold:
        off = _char_offsets(d)
        text = " ".join(t for s in d["sents"] for t in s)
        for lab in d["labels"]:
            for a, b in product(d["vertexSet"][lab["h"]], d["vertexSet"][lab["t"]]):
                s, o = _mention(d, off, a), _mention(d, off, b)
                lines.add("\t".join([d["title"], text[s[0]:s[1]], str(s[0]), str(s[1]), "", "",
                                     "", lab["r"], text[o[0]:o[1]], str(o[0]), str(o[1]), "",
                                     "", ""]))
    path = tmp_path / "gold.tsv"
    path.write_text("\t".join(HEADER) + "\n" + "\n".join(sorted(lines)) + "\n",
                    encoding="utf-8")
    metrics = TASK.score(DOCS, path).metrics
    assert {k: v for k, v in metrics.items() if v != pytest.approx(1.0)} == {}
