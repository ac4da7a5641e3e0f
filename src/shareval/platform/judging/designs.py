"""The judging designs: what an answer looks like, how it is checked,
and the nominal labels agreement and adjudication compare.

Answers (stored as JSON; team names, never shown to judges):
* side_by_side: {"scores": {team: -1 | 0 | 1}}
* question_chain: {"answers": {question id: "yes" | "no"}, "correct": bool}
* related_to: {"references": [text], "related": {reference: {team: [output index]}}}
* summary_relevance: {"relevant": bool}
* exhaustive: {"relations": [sorted item keys the document states]}
  (judging/exhaustive_answers.py checks it)
"""
from __future__ import annotations

import string

SIDE_BY_SIDE, CHAIN, RELATED, RELEVANCE = ("side_by_side", "question_chain", "related_to",
                                           "summary_relevance")
EXHAUSTIVE = "exhaustive"
DEFAULT_CHAIN = [{"id": "correct", "text": "Is this output correct?"}]
ENDS = ("correct", "incorrect")


class BadAnswer(ValueError):
    pass


def letters(n: int) -> list[str]:
    return [f"System {string.ascii_uppercase[i % 26]}{'' if i < 26 else i // 26}"
            for i in range(n)]


def system_order(item) -> list[dict]:
    """Systems in a per-item shuffled order (seeded by the item id): judges see
    'System A', 'System B' in an order that does not reveal the team."""
    import random
    systems = list(item.payload.get("systems", []))
    random.Random(f"{item.campaign_id}:{item.pk}").shuffle(systems)
    return systems


# question chains --------------------------------------------------------------

def check_chains(config: dict) -> list[str]:
    """Problems in a campaign's ``chains`` mapping (type -> ordered questions)."""
    problems = []
    chains = config.get("chains", {"default": DEFAULT_CHAIN})
    if not isinstance(chains, dict) or not chains:
        return ["chains: must map an item type (or 'default') to a list of questions"]
    for kind, chain in chains.items():
        if not isinstance(chain, list) or not chain:
            problems.append(f"chains.{kind}: must be a non-empty list of questions")
            continue
        ids = [q.get("id") if isinstance(q, dict) else None for q in chain]
        for i, q in enumerate(chain):
            where = f"chains.{kind}[{i}]"
            if not isinstance(q, dict) or not q.get("id") or not q.get("text"):
                problems.append(f"{where}: needs id and text")
                continue
            for branch in ("yes", "no"):
                target = q.get(branch)
                if target is not None and target not in ENDS + ("next",) and target not in ids:
                    problems.append(f"{where}.{branch}: {target!r} is not a question id, "
                                    f"'next', 'correct' or 'incorrect'")
                if target in ids and ids.index(target) <= i:
                    problems.append(f"{where}.{branch}: may only skip forward (no loops)")
        if len(set(ids)) != len(ids):
            problems.append(f"chains.{kind}: question ids repeat")
    return problems


def chain_for(config: dict, kind: str | None) -> list[dict]:
    chains = config.get("chains") or {"default": DEFAULT_CHAIN}
    return chains.get(kind or "default") or chains.get("default") or DEFAULT_CHAIN


def walk(chain: list[dict], answers: dict[str, str]) -> tuple[list[str], bool | None]:
    """Questions visited under these answers and the verdict (None: unfinished).
    Default skip rules: yes -> next question (the last one: correct), no -> incorrect."""
    ids = [q["id"] for q in chain]
    visited, i = [], 0
    while True:
        if i >= len(chain):
            return visited, True
        q = chain[i]
        visited.append(q["id"])
        a = answers.get(q["id"])
        if a not in ("yes", "no"):
            return visited, None
        target = q.get(a) or ("next" if a == "yes" else "incorrect")
        if target in ENDS:
            return visited, target == "correct"
        i = i + 1 if target == "next" else ids.index(target)


def fill(text: str, payload: dict) -> str:
    fields = {k: v for k, v in payload.items() if isinstance(v, (str, int, float))}
    try:
        return text.format(**fields)
    except (KeyError, IndexError, ValueError):
        return text


# answers ------------------------------------------------------------------------

def clean_answer(campaign, item, raw: dict) -> dict:
    """Check a posted answer against the design; returns the stored form."""
    design = campaign.design
    if design == EXHAUSTIVE:
        from shareval.platform.judging import exhaustive_answers
        return exhaustive_answers.clean(item.doc, item.payload, raw)
    teams = [s["team"] for s in item.payload.get("systems", [])]
    if design == SIDE_BY_SIDE:
        scores = raw.get("scores") or {}
        if set(scores) != set(teams):
            raise BadAnswer("score every system (-1, 0 or 1)")
        try:
            out = {t: int(scores[t]) for t in teams}
        except (TypeError, ValueError):
            raise BadAnswer("scores must be -1, 0 or 1") from None
        if any(v not in (-1, 0, 1) for v in out.values()):
            raise BadAnswer("scores must be -1, 0 or 1")
        return {"scores": out}
    if design == CHAIN:
        chain = chain_for(campaign.config, item.payload.get("type"))
        answers = {k: v for k, v in (raw.get("answers") or {}).items() if v in ("yes", "no")}
        visited, verdict = walk(chain, answers)
        if verdict is None:
            raise BadAnswer(f"answer question {visited[-1]!r}")
        return {"answers": {q: answers[q] for q in visited}, "correct": verdict}
    if design == RELATED:
        refs = [r.strip() for r in raw.get("references") or [] if str(r).strip()]
        if len(set(refs)) != len(refs):
            raise BadAnswer("references repeat")
        related = raw.get("related") or {}
        outs = {s["team"]: len(s.get("output", [])) for s in item.payload.get("systems", [])}
        clean: dict[str, dict[str, list[int]]] = {}
        for ref in refs:
            for team, idx in (related.get(ref) or {}).items():
                if team not in outs or not all(isinstance(i, int) and 0 <= i < outs[team]
                                               for i in idx):
                    raise BadAnswer(f"reference {ref!r}: unknown system or output")
                if idx:
                    clean.setdefault(ref, {})[team] = sorted(set(idx))
        return {"references": refs, "related": clean}
    if design == RELEVANCE:
        if raw.get("relevant") not in (True, False):
            raise BadAnswer("decide relevant or not relevant")
        return {"relevant": bool(raw["relevant"])}
    raise BadAnswer(f"unknown design {design}")


def labels(design: str, item, answer: dict) -> dict[str, str]:
    """Nominal labels per unit (an item, or an item x team) for agreement."""
    if design == EXHAUSTIVE:
        from shareval.platform.judging import exhaustive_answers
        return exhaustive_answers.labels(item.payload, answer)
    if design == SIDE_BY_SIDE:
        return {t: str(v) for t, v in answer["scores"].items()}
    if design == CHAIN:
        return {"": "correct" if answer["correct"] else "incorrect"}
    if design == RELATED:
        teams = [s["team"] for s in item.payload.get("systems", [])]
        # coders word references differently: compare the outputs flagged as related
        flagged = {t: sorted({i for m in answer["related"].values() for i in m.get(t, [])})
                   for t in teams}
        return {t: repr(v) for t, v in flagged.items()}
    return {"": "relevant" if answer["relevant"] else "not relevant"}
