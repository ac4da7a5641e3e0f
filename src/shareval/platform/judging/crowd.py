"""Crowdsourcing batches as CSV, laid out as Amazon Mechanical Turk's.

Export (the "input CSV" of a batch): one row per task, i.e. per item still
short of its k judgments (``HITId`` = ``shareval-<campaign>-<item>``). The
item's content is in ``Input.*`` columns (``Input.text``, ``Input.sentence``,
``Input.title``, ``Input.query``, ``Input.summary``, ``Input.subject`` ...;
side-by-side: ``Input.system_A`` ...), the questions to answer in empty
``Answer.*`` columns. Team names are never written.

A KBP relation mention (view ``relation_doc``) gives ``Input.document`` (the
title), ``Input.subject``, ``Input.object``, ``Input.relation`` (the label),
``Input.sentence`` (the provenance sentences, the mentions written
``[subject: …]`` and ``[object: …]``, sentences apart joined by `` … ``),
``Input.guidance`` and each chain question as ``Input.question_<id>``; no
``Input.item`` (a control item's key would tell it apart).

Import (the "results CSV" MTurk gives back): one row per completed
assignment with ``HITId``, ``WorkerId``, ``AssignmentId``, optionally
``WorkTimeInSeconds``, and the ``Answer.*`` columns:

* question chains: ``Answer.<question id>`` = yes/no (the chain's skip rules
  apply: questions after a deciding answer may stay empty);
* summary relevance: ``Answer.relevant`` = yes/no (also Y/N, true/false, 1/0);
* side-by-side: ``Answer.system_A`` ... = -1, 0 or 1;
* exhaustive relation annotation: the document with numbered words and
  numbered suggestions in, ``Answer.accepted`` (suggestion numbers) and
  ``Answer.added`` (``subject words | relation | object words`` per line)
  back: judging/exhaustive_crowd.py has the layout.

Related-to coding (free-text references linked to outputs) has no batch
layout. Each worker becomes a user ``crowd-<WorkerId>`` (no password: cannot
log in), a judge of the campaign; their answers are done assignments. Every
problem is reported as ``file:line: field: message`` and nothing is stored
when there is one.
"""
from __future__ import annotations

import csv
import io
import re

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from shareval.formats.errors import Problems
from shareval.formats.spreadsheet import escape_formula

from shareval.platform.judging import content, designs, kbp_items
from shareval.platform.judging.models import Assignment, Campaign, Item

YES = {"yes": "yes", "y": "yes", "true": "yes", "1": "yes",
       "no": "no", "n": "no", "false": "no", "0": "no"}
WORKER = re.compile(r"^[A-Za-z0-9_.@+-]{1,120}$")


def crowd_judge(campaign: Campaign, name: str):
    """The user ``name`` (made without a password: nobody logs in as a crowd worker or
    a simulated judge), a judge of ``campaign``."""
    user, made = get_user_model().objects.get_or_create(username=name)
    if made:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    campaign.judges.add(user)
    return user


def hit_id(item: Item) -> str:
    return f"shareval-{item.campaign_id}-{item.pk}"


def _inputs(camp: Campaign, item: Item) -> dict[str, str]:
    if camp.design == designs.EXHAUSTIVE:
        from shareval.platform.judging import exhaustive_crowd
        return exhaustive_crowd.inputs(camp, item)
    v = content.item_view(camp.design, item.payload)
    out = {"Input.item": item.key, "Input.instructions": str(
        item.payload.get("instructions") or camp.config.get("instructions") or "")}
    if v["kind"] == "sentence":
        out.update({"Input.sentence": v["sentence"],
                    "Input.context_before": " ".join(v.get("before", [])),
                    "Input.context_after": " ".join(v.get("after", []))})
    elif v["kind"] == "publication":
        out.update({"Input.title": v["title"], "Input.passages": " […] ".join(
            "".join(s["t"] for s in p["segments"]) for p in v.get("passages", []))})
    elif v["kind"] == "summary":
        out.update({"Input.query": v["query"], "Input.summary": " ".join(v["summary"]),
                    "Input.image": "yes" if v.get("image") else ""})
    elif v["kind"] == "relation_doc":
        del out["Input.item"]          # the HITId names the task; a key would tell controls
        out.update({"Input.document": v["title"], "Input.subject": v["subject"],
                    "Input.object": v["object"], "Input.relation": v["relation"],
                    "Input.sentence": kbp_items.plain_provenance(v),
                    "Input.guidance": kbp_items.guidance_for(camp.config, item.payload)})
        for q in designs.chain_for(camp.config, item.payload.get("type")):
            out[f"Input.question_{q['id']}"] = designs.fill(q["text"], item.payload)
    elif v["kind"] == "relation":
        out.update({"Input.subject": v["subject"], "Input.relation": v["relation"],
                    "Input.object": v["object"],
                    "Input.provenance": "".join(s["t"] for s in v["provenance"])})
    else:
        out["Input.text"] = v.get("text", "")
    if item.payload.get("text") and v["kind"] not in ("text", "relation_doc"):
        out["Input.output"] = str(item.payload["text"])
    if camp.design in (designs.SIDE_BY_SIDE, designs.RELATED):
        for lab, s in zip(designs.letters(len(designs.system_order(item))),
                          designs.system_order(item)):
            out[f"Input.{_slot(lab)}"] = "; ".join(s.get("output", [])) or s.get("empty", "")
    return out


def _slot(label: str) -> str:
    return label.lower().replace(" ", "_")           # "System A" -> "system_a"


def _answers(camp: Campaign, item: Item) -> list[str]:
    if camp.design == designs.EXHAUSTIVE:
        return ["Answer.accepted", "Answer.added"]
    if camp.design == designs.CHAIN:
        return [f"Answer.{q['id']}" for q in designs.chain_for(camp.config,
                                                               item.payload.get("type"))]
    if camp.design == designs.RELEVANCE:
        return ["Answer.relevant"]
    if camp.design == designs.SIDE_BY_SIDE:
        return [f"Answer.{_slot(lab)}" for lab in designs.letters(len(designs.system_order(item)))]
    return []


def export_batch(camp: Campaign) -> str:
    if camp.design == designs.RELATED:
        raise ValueError("related-to coding has no crowdsourcing batch layout")
    items = list(Item.objects.filter(campaign=camp).annotate(done=Count(
        "assignments", filter=Q(assignments__status=Assignment.DONE)))
        .filter(done__lt=camp.judges_per_item).order_by("pk"))
    rows = [{"HITId": hit_id(i), "HITTypeId": f"shareval-{camp.pk}",
             "Title": camp.title, "MaxAssignments": camp.judges_per_item - i.done,
             **_inputs(camp, i), **{a: "" for a in _answers(camp, i)}} for i in items]
    cols = ["HITId", "HITTypeId", "Title", "MaxAssignments"]
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", restval="")
    w.writeheader()
    for r in rows:
        w.writerow({k: escape_formula(str(v)) for k, v in r.items()})
    return buf.getvalue()


def _parse_answer(camp, item, row, name, line, problems) -> dict | None:
    if camp.design == designs.EXHAUSTIVE:
        from shareval.platform.judging import exhaustive_crowd
        return exhaustive_crowd.parse(item, row, name, line, problems)
    if camp.design == designs.RELEVANCE:
        v = YES.get((row.get("Answer.relevant") or "").strip().lower())
        if v is None:
            problems.add(name, line, "Answer.relevant", "yes or no")
            return None
        return {"relevant": v == "yes"}
    if camp.design == designs.CHAIN:
        answers = {}
        for col in _answers(camp, item):
            raw = (row.get(col) or "").strip().lower()
            if raw:
                if raw not in YES:
                    problems.add(name, line, col, f"yes or no, found {raw!r}")
                    return None
                answers[col[len("Answer."):]] = YES[raw]
        return {"answers": answers}
    order = [s["team"] for s in designs.system_order(item)]
    scores = {}
    for col, team in zip(_answers(camp, item), order):
        raw = (row.get(col) or "").strip()
        if raw not in ("-1", "0", "1", "+1"):
            problems.add(name, line, col, f"-1, 0 or 1, found {raw!r}")
            return None
        scores[team] = int(raw)
    return {"scores": scores}


@transaction.atomic
def import_results(camp: Campaign, text: str, name: str = "results.csv") -> int:
    """Store a results CSV's answers as done assignments; returns how many."""
    problems = Problems()
    if camp.design == designs.RELATED:
        problems.fatal(name, None, "campaign", "related-to coding has no batch layout")
    reader = csv.DictReader(io.StringIO(text))
    cols = reader.fieldnames or []
    for need in ("HITId", "WorkerId"):
        if need not in cols:
            problems.fatal(name, 1, need, "required column (an MTurk results CSV)")
    problems.raise_if_any()
    items = {hit_id(i): i for i in Item.objects.filter(campaign=camp)}
    todo, seen = [], set()
    for line, row in enumerate(reader, 2):
        hid, worker = (row.get("HITId") or "").strip(), (row.get("WorkerId") or "").strip()
        item = items.get(hid)
        if item is None:
            problems.add(name, line, "HITId", f"{hid!r} is not a task of this campaign")
            continue
        if not WORKER.match(worker):
            problems.add(name, line, "WorkerId", "letters, digits and _.@+- (at most 120)")
            continue
        if (hid, worker) in seen:
            problems.add(name, line, "WorkerId", f"{worker} answered {hid} twice")
            continue
        seen.add((hid, worker))
        secs = (row.get("WorkTimeInSeconds") or "").strip()
        try:
            seconds = float(secs) if secs else None
            if seconds is not None and not 0 <= seconds < 86400:
                raise ValueError
        except ValueError:
            problems.add(name, line, "WorkTimeInSeconds", f"seconds, found {secs!r}")
            continue
        raw = _parse_answer(camp, item, row, name, line, problems)
        if raw is None:
            continue
        try:
            clean = designs.clean_answer(camp, item, raw)
        except designs.BadAnswer as e:
            problems.add(name, line, "Answer", str(e))
            continue
        todo.append((item, worker, clean, seconds))
    problems.raise_if_any()
    now = timezone.now()
    n = 0
    for item, worker, clean, seconds in todo:
        user = crowd_judge(camp, f"crowd-{worker}")
        Assignment.objects.update_or_create(item=item, judge=user, defaults={
            "status": Assignment.DONE, "answer": clean, "done": now, "deadline": now,
            "seconds": seconds})
        n += 1
    return n
