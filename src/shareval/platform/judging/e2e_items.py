"""Summary-relevance items from the teams' primary MATERIAL E2E runs (plan section 4).

One item per Y line of each team's primary archive: the query, the English
summary (its words and image) and the query's instructions. The item key
``<team id>|<system>|<query_id>|<doc_id>`` and the payload's team, system and
document id are kept for the exports; judges are shown none of them
(``views.judge_context``). A team without a primary run, or whose archive the
task's reader refuses, is skipped and named. Building again adds nothing.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from shareval.formats.errors import InvalidInput, Problems
from shareval.tasks.material.base import iter_submission_files, pack_limits
from shareval.platform.competitions.models import Team
from shareval.platform.submissions.models import Submission

from shareval.platform.judging import build, designs
from shareval.platform.judging.models import Campaign, Item, RunOutput

TASK = "material-e2e"
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


@dataclass
class Built:
    added: int = 0
    teams: list[str] = field(default_factory=list)           # whose primary gave items
    skipped: dict[str, str] = field(default_factory=dict)    # team name -> why


@dataclass
class Summary:
    query_id: str
    doc_id: str
    system: str                  # <TeamID>.<SysLabel> of the summary metadata
    words: list[str]
    image: str | None            # a data URI


def check_campaign(campaign: Campaign) -> None:
    if campaign.design != designs.RELEVANCE or campaign.dataset.task.task_name != TASK:
        raise ValueError("only a summary-relevance campaign on a material-e2e dataset is "
                         "built from primary E2E runs")


def primaries(dataset) -> tuple[dict[str, Submission], dict[str, str]]:
    """Each team's primary run (scored, not disqualified) and, by team name, why the
    other teams that submitted to the dataset have none."""
    runs, skipped = {}, {}
    subs = (Submission.objects.filter(dataset=dataset, state__in=Submission.COUNTED)
            .select_related("team").order_by("created"))
    for s in subs:
        if s.kind == Submission.PRIMARY:
            if s.disqualified:
                skipped[s.team.name] = "its primary run is disqualified"
            elif s.state != Submission.SCORED:
                skipped[s.team.name] = f"its primary run is {s.state}, not scored"
            else:
                runs[s.team.name] = s
    for s in subs:
        if s.team.name not in runs:
            skipped.setdefault(s.team.name, "no primary run")
    return runs, skipped


def read_summaries(task, pack, sub: Submission) -> list[Summary]:
    """The summaries of a run's Y lines. The archive is first read by the task's own
    checked reader (raises InvalidInput as scoring would), then once more, within the
    pack's archive limits, for the summaries' words and images."""
    task.load_submission(str(sub.path), pack, name=sub.original_name)
    problems = Problems()
    metas, images = [], {}
    for name, data in iter_submission_files(str(sub.path), problems, pack_limits(pack)):
        qid, _, fname = name.partition("/")
        ext = "." + fname.rsplit(".", 1)[-1].lower()
        if fname.endswith(".json"):
            metas.append((qid, fname, json.loads(data.decode("utf-8"))))
        elif ext in IMAGE_TYPES:
            if len(data) > build.MAX_IMAGE:      # refused as read: never held, nor encoded
                problems.add(f"{sub.original_name}!{name}", None, "image",
                             f"larger than {build.MAX_IMAGE} bytes")
                continue
            images[(qid, fname)] = f"data:{IMAGE_TYPES[ext]};base64," + \
                base64.b64encode(data).decode("ascii")
        del data
    problems.raise_if_any()
    out = []
    for qid, fname, meta in metas:          # checked: every summary is named by a Y line
        image = images.get((qid, meta["image_filename"]))
        if image is not None:
            build._check_image(image, problems, f"{sub.original_name}!{qid}/{fname}", None)
        out.append(Summary(qid, meta["document_id"], f"{meta['team_id']}.{meta['sys_label']}",
                           list(meta["content_list"]), image))
    problems.raise_if_any()
    return out


def instructions_for(campaign: Campaign, pack, query_id: str) -> str:
    """The query's instructions: queries.tsv's ``instructions`` column, else the
    campaign's ``instructions`` (a text, or a mapping query id -> text)."""
    given = pack.queries[query_id].attributes.get("instructions")
    if given:
        return str(given)
    conf = campaign.config.get("instructions")
    if isinstance(conf, dict):
        return str(conf.get(query_id) or "")
    return str(conf or "")


def item_key(team: Team, s: Summary) -> str:
    return f"{team.pk}|{s.system}|{s.query_id}|{s.doc_id}"


def payload(campaign: Campaign, pack, team: Team, s: Summary) -> dict:
    q = pack.queries[s.query_id]
    p = {"query_id": s.query_id, "document_id": s.doc_id, "query": q.query_string,
         "domain": q.domain, "summary": s.words,
         "instructions": instructions_for(campaign, pack, s.query_id),
         "system": s.system, "team": team.name}
    if s.image is not None:
        p["image"] = s.image
    return p


def build_from_primaries(campaign: Campaign) -> Built:
    """Add the items of every team's primary run not yet in the campaign."""
    check_campaign(campaign)
    ds = campaign.dataset
    task = ds.task.registry_task
    pack = task.load_reference(str(ds.reference_file))
    runs, skipped = primaries(ds)
    out = Built(skipped=skipped)
    taken = {o.name: o for o in RunOutput.objects.filter(campaign=campaign)}
    systems = {k.split("|")[1]: k.split("|")[0]
               for k in Item.objects.filter(campaign=campaign).values_list("key", flat=True)
               if k.count("|") == 3}
    read: dict[str, tuple[Submission, list[Summary]]] = {}
    for name, sub in sorted(runs.items()):
        if name in taken:
            if taken[name].submission_id != sub.pk:
                out.skipped[name] = "already in the campaign with an earlier primary run"
            continue
        try:
            read[name] = (sub, read_summaries(task, pack, sub))
        except InvalidInput as e:
            out.skipped[name] = f"its primary run was refused: {e.problems[0]}"
    # A summary names its system freely: a system claimed by two teams (one already
    # built, or both in this build) is built for none of the new claimants, whatever
    # their names' order, and the organizer is told who else claims it.
    claims: dict[str, set[str]] = {}
    team_names = dict(Team.objects.filter(pk__in={int(t) for t in systems.values()})
                      .values_list("pk", "name"))
    for system, team_pk in systems.items():
        claims.setdefault(system, set()).add(team_names.get(int(team_pk), f"team {team_pk}"))
    for name, (sub, summaries) in read.items():
        for s in summaries:
            claims.setdefault(s.system, set()).add(name)
    for name, (sub, summaries) in sorted(read.items()):
        clash = {s.system: sorted(claims[s.system] - {name}) for s in summaries
                 if claims[s.system] - {name}}
        if clash:
            out.skipped[name] = "; ".join(
                f"system {system} is also claimed by {', '.join(others)}"
                for system, others in sorted(clash.items())) + \
                " (a system is one team's: disqualify the impostor's primary, then build again)"
            continue
        items = [Item(campaign=campaign, key=item_key(sub.team, s), doc=s.doc_id,
                      payload=payload(campaign, pack, sub.team, s), submissions=[name])
                 for s in summaries]
        with transaction.atomic():
            Item.objects.bulk_create(items, ignore_conflicts=True)
            RunOutput.objects.create(campaign=campaign, name=name, submission=sub,
                                     keys=sorted(i.key for i in items))
        systems.update({s.system: str(sub.team_id) for s in summaries})
        out.added += len(items)
        out.teams.append(name)
    return out


def build_due(now=None, only: int | None = None) -> list[tuple[Campaign, Built]]:
    """Campaigns configured ``{"build": "primary-e2e"}`` whose phase has ended and
    that have no items yet: built now, once (``shareval server send-reminders``)."""
    now = now or timezone.now()
    out = []
    due = Campaign.objects.filter(design=designs.RELEVANCE, dataset__phase__end__lte=now,
                                  items__isnull=True).select_related("dataset__task")
    for camp in due.filter(pk=only) if only is not None else due:
        if camp.config.get("build") == "primary-e2e" and not camp.config.get("built"):
            try:
                built = build_from_primaries(camp)
            except (ValueError, InvalidInput) as e:      # not an E2E dataset; a broken pack
                built = Built(skipped={"every team": str(e)})
            camp.config = {**camp.config, "built": now.isoformat()}     # once, even if empty
            camp.save(update_fields=["config"])
            out.append((camp, built))
    return out


def report(built: Built) -> list[str]:
    """The build's outcome in sentences, for the organizer."""
    lines = [f"{built.added} items added from the primary runs of "
             f"{', '.join(built.teams) or 'no team'}"]
    lines += [f"skipped {name}: {why}" for name, why in sorted(built.skipped.items())]
    return lines
