"""Filling a campaign with items: from an items file (any design) or drawn
from the teams' runs on the campaign's dataset.

Drawn from runs (each team's leaderboard run: primary, else latest scored):
* side-by-side and related-to: ``n`` documents (publications) drawn
  uniformly from those any team output something for; per document every
  team's output (RCC citations: dataset ids; RCC mentions: mention strings;
  other tasks: the run's lines for that document). Runs that are not one
  item per line (a JSON document, an archive) are refused: a "line" would be
  the whole run file, shown to judges; build such campaigns from an items file.
* question chains and summary relevance: the joint design of
  ``assess sample`` over the runs' items (lines, or RCC pairs), ``n`` per
  team, with inclusion probabilities, plus ``docs`` documents for recall.
* exhaustive (KBP recall): ``docs`` (else ``n``) documents of the reference,
  each with the runs' pooled mentions (judging/exhaustive_build.py).
"""
from __future__ import annotations

import base64
import binascii

import numpy as np
from django.db import transaction

from shareval.assessment.outputs import Output
from shareval.assessment.sample import draw_sample, pair_overlaps
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.jsonfile import json_object_line
from shareval.platform.submissions.models import Submission

from shareval.platform.judging import content, designs
from shareval.platform.judging.models import Campaign, Item, RunOutput

MAX_IMAGE = 2 * 1024 * 1024
MAX_ITEMS = 20_000


def team_runs(dataset) -> dict[str, Submission]:
    runs: dict[str, Submission] = {}
    for s in (Submission.objects.filter(dataset=dataset, state=Submission.SCORED)
              .select_related("team").order_by("created")):
        name = s.team.name
        if name not in runs or s.kind == Submission.PRIMARY or \
                runs[name].kind != Submission.PRIMARY:
            runs[name] = s
    return runs


def run_units(task_name: str, path, res: content.Resources | None = None
              ) -> dict[str, tuple[str, str]]:
    """item key -> (document, output in words) for one run."""
    return {k: (u.doc, u.text) for k, u in content.run_units(task_name, path, res).items()}


def unit_payload(task: str, res: content.Resources, key: str, u: content.Unit,
                 kind: str) -> dict:
    """The payload of one judged unit: the output in words and the content around it."""
    return {"text": u.text, "doc": u.doc, "type": kind,
            "view": content.view_for(task, res, u.group, [u])}


@transaction.atomic
def build_from_runs(campaign: Campaign, n: int, docs: int = 0, seed: int = 0) -> int:
    runs = team_runs(campaign.dataset)
    if campaign.design == designs.EXHAUSTIVE:                   # KBP recall documents
        from shareval.platform.judging import exhaustive_build
        return exhaustive_build.build(campaign, runs, docs or n, seed)
    task = campaign.dataset.task.task_name
    res = content.Resources(campaign.dataset)
    units = {team: content.run_units(task, s.path, res) for team, s in runs.items()}
    if campaign.design in (designs.SIDE_BY_SIDE, designs.RELATED):
        by_group: dict[str, dict[str, list[content.Unit]]] = {}
        for team, u in units.items():
            for key, unit in u.items():
                by_group.setdefault(unit.group, {}).setdefault(team, []).append(unit)
        all_groups = sorted(by_group)
        rng = np.random.default_rng(seed)
        pick = sorted(rng.choice(len(all_groups), size=min(n, len(all_groups)), replace=False)) \
            if all_groups else []
        empty = content.empty_output(task)
        items = []
        for i in pick:
            g = all_groups[i]
            systems = [{"team": t, "output": sorted(x.text for x in by_group[g].get(t, [])),
                        "empty": empty} for t in sorted(units)]
            shown = [x for t in by_group[g].values() for x in t]
            items.append(Item(campaign=campaign, key=g, doc=shown[0].doc, payload={
                "text": "", "view": content.view_for(task, res, g, shown), "systems": systems},
                inclusion=len(pick) / len(all_groups), submissions=sorted(by_group[g])))
    else:
        outputs = [Output(team, {k: x.doc for k, x in u.items()}) for team, u in units.items()]
        rows = draw_sample([o for o in outputs if len(o)], n, "joint", docs, seed)
        every = {k: x for u in units.values() for k, x in u.items()}
        kind = campaign.config.get("default_type", "default")
        items = [Item(campaign=campaign, key=r.item, doc=r.doc,
                      payload=unit_payload(task, res, r.item, every[r.item], kind),
                      inclusion=r.inclusion_probability, drawn_for=r.drawn_for,
                      submissions=r.submissions, drawn_by=r.drawn_by) for r in rows]
        # sizes and pairwise overlaps: what `assess estimate --method importance` needs
        campaign.config = {**campaign.config, "sizes": {o.name: len(o) for o in outputs},
                           "overlaps": pair_overlaps(outputs)}
        campaign.save(update_fields=["config"])
        # each team's output: what a late submission's on-demand evaluation weighs against
        RunOutput.objects.bulk_create([RunOutput(campaign=campaign, name=t, submission=runs[t],
                                                 keys=sorted(u)) for t, u in units.items()],
                                      ignore_conflicts=True)
    Item.objects.bulk_create(items, ignore_conflicts=True)
    return len(items)


def _check_image(value, problems, where, line):
    if not isinstance(value, str) or not value.startswith(("data:image/png;base64,",
                                                           "data:image/jpeg;base64,")):
        problems.add(where, line, "payload.image", "must be a data:image/png or "
                                                   "data:image/jpeg base64 URI")
        return
    try:
        raw = base64.b64decode(value.split(",", 1)[1], validate=True)
    except (binascii.Error, ValueError):
        problems.add(where, line, "payload.image", "invalid base64")
        return
    if len(raw) > MAX_IMAGE:
        problems.add(where, line, "payload.image", f"larger than {MAX_IMAGE} bytes")
    elif not (raw.startswith(b"\x89PNG\r\n\x1a\n") or raw.startswith(b"\xff\xd8\xff")):
        problems.add(where, line, "payload.image", "not a PNG or JPEG image by its content")


def parse_items(campaign: Campaign, text: str, name: str = "items.jsonl") -> list[Item]:
    """Items file: one JSON object per line: key, doc, payload, and optionally gold,
    submissions, inclusion_probability, drawn_for, drawn_by. Every problem is listed."""
    problems = Problems()
    if campaign.design == designs.EXHAUSTIVE:
        problems.fatal(name, None, "items", "an exhaustive campaign annotates documents of the "
                                            "reference: build it from the runs, without a file")
        problems.raise_if_any()
    items, keys = [], set()
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        obj = json_object_line(name, line, raw, problems)
        if obj is None:
            continue
        key, payload = obj.get("key"), obj.get("payload")
        if not isinstance(key, str) or not key.strip() or len(key) > 500:
            problems.add(name, line, "key", "a non-empty string of at most 500 characters")
            continue
        drawn_for = obj.get("drawn_for", "precision")
        if (key, drawn_for) in keys:
            problems.add(name, line, "key", f"{key!r} repeats")
        keys.add((key, drawn_for))
        if not isinstance(payload, dict):
            problems.add(name, line, "payload", "must be an object")
            continue
        systems = payload.get("systems")
        if campaign.design in (designs.SIDE_BY_SIDE, designs.RELATED):
            if not isinstance(systems, list) or not systems or not all(
                    isinstance(s, dict) and isinstance(s.get("team"), str)
                    and isinstance(s.get("output", []), list) for s in systems):
                problems.add(name, line, "payload.systems", "a list of {team, output: [...]}")
                continue
        url = payload.get("doc_url")
        if url is not None and not (isinstance(url, str) and url.startswith(("https://",
                                                                            "http://"))):
            problems.add(name, line, "payload.doc_url", "must be an http(s) URL")
        if campaign.design == designs.RELEVANCE:
            if not isinstance(payload.get("query"), str):
                problems.add(name, line, "payload.query", "the query text is required")
            if "image" in payload:
                _check_image(payload["image"], problems, name, line)
            elif not isinstance(payload.get("summary"), list):
                problems.add(name, line, "payload", "needs image or summary (a word list)")
        try:
            pi = float(obj.get("inclusion_probability", 1.0))
            if not 0 < pi <= 1:
                raise ValueError
        except (TypeError, ValueError):
            problems.add(name, line, "inclusion_probability", "must be in (0, 1]")
            continue
        if drawn_for not in ("precision", "recall"):
            problems.add(name, line, "drawn_for", "precision or recall")
            continue
        item = Item(campaign=campaign, key=key, doc=str(obj.get("doc") or key.split("|")[0]),
                    payload=payload, inclusion=pi, drawn_for=drawn_for,
                    submissions=[str(s) for s in obj.get("submissions") or []],
                    drawn_by=[str(s) for s in obj.get("drawn_by") or []])
        gold = obj.get("gold")
        if gold is not None:
            try:
                item.gold = designs.clean_answer(campaign, item, gold)
            except designs.BadAnswer as e:
                problems.add(name, line, "gold", str(e))
        items.append(item)
        if len(items) > MAX_ITEMS:
            problems.add(name, line, "items", f"more than {MAX_ITEMS} items")
            break
    problems.raise_if_any()
    return items


@transaction.atomic
def load_items(campaign: Campaign, text: str, name: str = "items.jsonl") -> int:
    items = parse_items(campaign, text, name)
    clash = set(Item.objects.filter(campaign=campaign).values_list("key", "drawn_for")) & \
        {(i.key, i.drawn_for) for i in items}
    if clash:
        p = Problems()
        for k, d in sorted(clash)[:100]:
            p.add(name, None, "key", f"{k!r} ({d}) is already in the campaign")
        raise InvalidInput(p.items, p.total)
    Item.objects.bulk_create(items)
    return len(items)
