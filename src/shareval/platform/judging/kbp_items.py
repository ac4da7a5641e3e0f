"""Relation mentions of a ``kbp-relations`` dataset as judged items.

A unit is one relation mention of a run, keyed by ``formats.kbp_runs.item_key``
(the relation by its id). Its payload: ``type`` (the relation id: chain_for
picks the relation's chain), ``subject``, ``object``, ``relation`` (the label)
and ``doc`` as strings, ``text`` (the mention in words) and ``view``:

``{"kind": "relation_doc", "title", "subject", "object", "relation",
"subject_span", "object_span", "provenance": [sentence], "sentences": [sentence]}``

where a sentence is ``{"n": id, "start": offset, "gap": bool, "provenance": bool,
"segments": [{"t": text, "m": "" | "subject" | "object" | "both"}]}``. The
provenance sentences are those holding the subject or the object, plus the
run's ``evidence`` sentences; ``sentences`` is the whole document. Marks come
from the offsets (never string matching, never HTML from the data).

Control items (campaign config ``controls: N``): N gold items made from the
reference, half true relation mentions, half false ones (a labelled pair shown
with another relation its entity types fit, which the reference does not hold
between them), with the same payload as any item. Their keys end in
``|control``: a late submission's draw of the same relation mention is then a
new item, never a gold one (gold items get no label for estimates).
"""
from __future__ import annotations

import numpy as np

from shareval.formats.errors import Problems
from shareval.formats.kbp import Document, KbpReference
from shareval.formats.kbp_runs import item_key, parse_item_key, read_run

from shareval.platform.judging import content, designs
from shareval.platform.judging.kbp_words import kbp_chains, type_profile  # noqa: F401
from shareval.platform.judging.models import Item

TASK = "kbp-relations"
CONTROL = "|control"


def words(subject: str, label: str, obj: str) -> str:
    return f"“{subject}” — {label} — “{obj}”"


# units and views ----------------------------------------------------------------------

def kbp_units(path, res: content.Resources) -> dict[str, content.Unit]:
    """item key -> Unit for one kbp-relations run, read against the dataset's reference."""
    ref = res.kbp
    if ref is None:
        raise ValueError("the dataset's KBP reference cannot be read: relation mentions "
                         "cannot be placed in their documents")
    problems = Problems()
    run = read_run(path, problems, ref)
    if run is None or problems:
        raise ValueError(f"a kbp-relations run does not read: {problems.items[0]}"
                         if problems.items else "a kbp-relations run does not read")
    return {item_key(p.doc, p.subject, p.relation, p.object): content.Unit(
        p.doc, p.doc, words(p.subject_text, ref.relations.get(p.relation, p.relation),
                            p.object_text), (p.subject_text, p.object_text), p.evidence)
        for p in run.predictions}


def _sentence_ranges(doc: Document) -> list[tuple[int, int, int]]:
    """(sentence id, start, end) of each non-empty sentence in the document text."""
    return [(i, starts[0], starts[-1] + len(sent[-1]))
            for i, (sent, starts) in enumerate(zip(doc.sentences, doc.token_starts)) if sent]


def segments(text: str, start: int, end: int, subject: tuple[int, int],
             obj: tuple[int, int]) -> list[dict]:
    """text[start:end] as segments, the characters of each span marked."""
    cuts = sorted({start, end} | {x for x in (*subject, *obj) if start < x < end})
    out: list[dict] = []
    for a, b in zip(cuts, cuts[1:]):
        s, o = subject[0] <= a < subject[1], obj[0] <= a < obj[1]
        m = "both" if s and o else "subject" if s else "object" if o else ""
        if out and out[-1]["m"] == m:
            out[-1]["t"] += text[a:b]
        else:
            out.append({"t": text[a:b], "m": m})
    return out


def kbp_view(res: content.Resources, key: str, evidence=()) -> dict:
    """The relation_doc view of item ``key`` (a ``|control`` suffix is ignored)."""
    parts = parse_item_key(key.removesuffix(CONTROL))
    ref = res.kbp
    doc = ref.documents.get(parts[0]) if ref is not None and parts else None
    if doc is None:
        return {"kind": "text", "text": f"(the relation mention {key} is not in the "
                                        f"dataset's documents)"}
    title, subj, rid, obj = parts
    near = set(evidence)
    rows = []
    for n, a, b in _sentence_ranges(doc):
        prov = n in near or any(x0 < b and x1 > a for x0, x1 in (subj, obj))
        rows.append({"n": n, "start": a, "provenance": prov, "gap": False,
                     "segments": segments(doc.text, a, b, subj, obj)})
    provenance = [dict(r) for r in rows if r["provenance"]]
    for prev, r in zip(provenance, provenance[1:]):
        r["gap"] = r["n"] != prev["n"] + 1
    return {"kind": "relation_doc", "title": title, "subject": doc.text[subj[0]:subj[1]],
            "object": doc.text[obj[0]:obj[1]], "relation": ref.relations.get(rid, rid),
            "subject_span": list(subj), "object_span": list(obj),
            "provenance": provenance, "sentences": rows}


def payload(res: content.Resources, key: str, unit: content.Unit) -> dict:
    """A relation mention's payload (the same shape for control items)."""
    view = kbp_view(res, key, unit.evidence)
    parts = parse_item_key(key.removesuffix(CONTROL))
    rid = parts[2] if parts else "default"
    subj, obj = (unit.mentions + ("", ""))[:2]
    return {"text": unit.text, "doc": unit.doc, "type": rid, "subject": subj, "object": obj,
            "relation": view.get("relation") or rid, "view": view}


def plain_provenance(view: dict) -> str:
    """The provenance as plain text: "[subject: Anna Berg] was born in [object: Oslo] .",
    sentences that do not follow each other separated by " … " (crowd batches)."""
    out = []
    for s in view.get("provenance", []):
        if out:
            out.append(" … " if s.get("gap") else " ")
        out += [f"[{'subject and object' if g['m'] == 'both' else g['m']}: {g['t']}]"
                if g["m"] else g["t"] for g in s["segments"]]
    return "".join(out)


# campaign configuration ----------------------------------------------------------------

def guidance_for(config: dict, payload: dict) -> str:
    """The organizer's guidance for an item's relation (``guidance``: id or label -> text)."""
    g = config.get("guidance")
    if not isinstance(g, dict):
        return ""
    names = {str(payload.get(k) or "").strip().lower() for k in ("type", "relation")} - {""}
    return next((str(text) for k, text in g.items() if str(k).strip().lower() in names), "")


def campaign_config(res: content.Resources, design: str, config: dict,
                    from_runs: bool) -> dict:
    """The campaign's configuration with KBP defaults: chains worded from the reference
    (unless the organizer wrote ``chains``), ``guidance`` and ``controls`` checked.
    Raises ValueError listing every problem."""
    config, problems = dict(config), []
    ref = res.kbp if res.task == TASK else None
    g = config.get("guidance")
    if g is not None:
        if not isinstance(g, dict) or not all(isinstance(v, str) for v in g.values()):
            problems.append("guidance: must map a relation id or label to a text")
        elif ref is not None:
            problems += [f"guidance: {k!r} is not a relation id or label of the dataset "
                         f"(e.g. {next(iter(ref.relations.items()), ('P19', ''))[0]})"
                         for k in g if ref.relation_id(str(k)) is None]
    n = config.get("controls")
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            problems.append("controls: a whole number of control items (0 or more)")
        elif n and (res.task != TASK or ref is None):
            problems.append("controls: control items are made from a kbp-relations "
                            "dataset's reference, and this dataset has none that reads")
        elif n and not any(d.labels for d in ref.documents.values()):
            problems.append("controls: the reference has no relation labels to make "
                            "control items from")
        elif n and (not from_runs or design != designs.CHAIN):
            problems.append("controls: made for question chains drawn from the runs; an "
                            "items file gives its own gold items")
    if problems:
        raise ValueError("; ".join(problems))
    if ref is not None and design == designs.CHAIN and "chains" not in config:
        config["chains"] = kbp_chains(ref, g if isinstance(g, dict) else None)
    return config


# control items -------------------------------------------------------------------------

def _gold(campaign, item: Item, true: bool) -> dict:
    chain = designs.chain_for(campaign.config, item.payload["type"])
    if not true and "relation" not in {q["id"] for q in chain}:
        raise ValueError(f"controls: the chain of {item.payload['type']} has no 'relation' "
                         f"question to answer no")
    answers = {q["id"]: "no" if q["id"] == "relation" and not true else "yes" for q in chain}
    gold = designs.clean_answer(campaign, item, {"answers": answers})
    if gold["correct"] != true:
        raise ValueError(f"controls: the chain of {item.payload['type']} does not reach "
                         f"{'correct' if true else 'incorrect'} from the control's answers")
    return gold


def _candidates(ref: KbpReference) -> tuple[list, list]:
    """Entity-level candidates: true (doc, h, t, r) labels, and false ones: a labelled
    pair with another relation their types fit that the reference does not hold
    (both only where the pair's types are those the relation's chain asks about)."""
    profile = type_profile(ref)
    fits: dict[tuple[str, str], list[str]] = {}
    true, false = [], []
    for title in sorted(ref.documents):
        doc = ref.documents[title]
        held: dict[tuple[int, int], set[str]] = {}
        for h, t, r in doc.labels:
            held.setdefault((h, t), set()).add(r)
        for (h, t), rels in sorted(held.items()):
            pair = (doc.types[h], doc.types[t])
            if pair not in fits:
                fits[pair] = sorted(r for r, (s, o) in profile.items()
                                    if pair[0] in s and pair[1] in o)
            # only types the chain asks about: a control's gold says yes to them
            true += [(title, h, t, r) for r in fits[pair] if r in rels]
            false += [(title, h, t, r) for r in fits[pair] if r not in rels]
    return true, false


def add_controls(campaign, res: content.Resources, n: int, seed: int = 0) -> int:
    """``n`` control items (half true, half false) for a chain campaign on a KBP
    dataset, never a relation mention a team output; reproducible with ``seed``."""
    ref = res.kbp
    if not n or ref is None:
        return 0
    taken = {k for keys in campaign.outputs.values_list("keys", flat=True) for k in keys}
    taken |= set(Item.objects.filter(campaign=campaign).values_list("key", flat=True))
    rng = np.random.default_rng([seed, 38])
    items = []
    for pool, want, true in zip(_candidates(ref), (n - n // 2, n // 2), (True, False)):
        for i in rng.permutation(len(pool)):
            if sum(x.gold["correct"] == true for x in items) >= want:
                break
            title, h, t, rid = pool[i]
            doc = ref.documents[title]
            pairs = [(s, o) for s in sorted(doc.entities[h]) for o in sorted(doc.entities[t])
                     if s != o and item_key(title, s, rid, o) not in taken]
            if not pairs:
                continue
            s, o = pairs[rng.integers(len(pairs))]
            key = item_key(title, s, rid, o)
            taken.add(key)
            unit = content.Unit(title, title, words(doc.text[s[0]:s[1]], ref.relations[rid],
                                                    doc.text[o[0]:o[1]]),
                                (doc.text[s[0]:s[1]], doc.text[o[0]:o[1]]))
            item = Item(campaign=campaign, key=key + CONTROL, doc=title, inclusion=1.0,
                        payload=payload(res, key, unit))
            item.gold = _gold(campaign, item, true)
            items.append(item)
    Item.objects.bulk_create(items)
    return len(items)
