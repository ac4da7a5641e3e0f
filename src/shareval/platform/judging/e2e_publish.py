"""Publishing a summary-relevance campaign: each judged primary E2E run is scored
from its own system's judgments (``material-e2e`` with ``judgments`` and
``system``) and the result becomes the run's current score.

The judgments file is written under PRIVATE_DIR, named by its content, and the
run keeps it (``Submission.score_options``): every later scoring of the run (a
new scorer version, an organizer's re-score) uses the published judgments. The
judged score has its own reference digest (the dataset's + ``+j`` + the file's
hash), so the unjudged score stays in the history and publishing the same
judgments twice adds nothing.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from shareval.formats.errors import InvalidInput
from shareval.platform.submissions.models import Job, Score, SubmissionEvent
from shareval.platform.submissions.queue import store_score
from shareval.platform.submissions.scoring import rename_paths, score_submission

from shareval.platform.judging import results
from shareval.platform.judging.e2e_items import check_campaign
from shareval.platform.judging.models import Assignment, Campaign

RULE = "each team's E2E AQWV comes from its own system's judgments"


class PublishError(ValueError):
    pass


@dataclass
class Published:
    file: str = ""                                            # relative to PRIVATE_DIR
    scored: dict[str, float | None] = field(default_factory=dict)   # team -> E2E AQWV
    unchanged: list[str] = field(default_factory=list)        # already scored from this file
    failed: dict[str, str] = field(default_factory=dict)      # team -> the scorer's message


def incomplete(campaign: Campaign) -> int:
    """Items (gold ones aside) with fewer than K answers and no adjudication."""
    return (campaign.items.filter(gold__isnull=True)
            .annotate(d=Count("assignments", filter=Q(assignments__status=Assignment.DONE)))
            .filter(d__lt=campaign.judges_per_item, adjudications__isnull=True).count())


def rule_text(campaign: Campaign, judgments: int) -> str:
    k, thr = campaign.judges_per_item, float(campaign.config.get("judge_threshold", 0.5))
    rule = f"strict majority of {k} judges" if thr == 0.5 else \
        f"relevant when more than {thr:g} of {k} judges say so"
    return (f"E2E AQWV from {judgments} judgments ({rule}) of campaign {campaign.title!r}; "
            f"aqwv_raw counts the judges' raw votes")


def _systems(campaign: Campaign) -> dict[str, object]:
    """system -> the judged run (RunOutput) it came from."""
    out = {}
    for o in campaign.outputs.select_related("submission__dataset__task", "submission__team"):
        for key in o.keys:
            out[key.split("|")[1]] = o
    return out


def write_judgments(campaign: Campaign, text: str) -> tuple[str, str]:
    """(path relative to PRIVATE_DIR, the content's hash); an existing file is kept."""
    sha = hashlib.sha256(text.encode()).hexdigest()[:16]
    rel = f"judgments/{campaign.dataset_id}/{campaign.slug}-{sha}.tsv"
    path = Path(settings.PRIVATE_DIR) / rel
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return rel, sha


def publish(campaign: Campaign, who: str = "", force: str = "") -> Published:
    """Score every run built into the campaign from its own judgments. Refused
    (PublishError, nothing stored) while items lack their K judgments, unless
    ``force`` gives the reason, and when a row's system has no judged run here."""
    check_campaign(campaign)
    systems = _systems(campaign)
    if not systems:
        raise PublishError("no primary E2E runs are built into this campaign: build from "
                           "primary E2E runs first")
    left = incomplete(campaign)
    if left and not force.strip():
        raise PublishError(f"{left} of {campaign.items.filter(gold__isnull=True).count()} "
                           f"items do not have their {campaign.judges_per_item} judgments yet; "
                           f"give a reason to publish anyway")
    rows = results.e2e_rows(campaign)
    strangers = sorted({r[2] for r in rows} - set(systems))
    if strangers:
        raise PublishError(f"system {', '.join(repr(s) for s in strangers)} did not submit a "
                           f"primary run judged in this campaign ({RULE}); nothing was "
                           f"published")
    rel, sha = write_judgments(campaign, results.e2e_judgments(campaign))
    out = Published(file=rel)
    per_system = {s: sum(r[2] == s for r in rows) for s in systems}
    threshold = float(campaign.config.get("judge_threshold", 0.5))
    for system, output in sorted(systems.items()):
        sub, team = output.submission, output.name
        if sub is None:
            out.failed[team] = "the judged run was deleted"
            continue
        published = {"options": {"judgments": rel, "system": system,
                                 "judge_threshold": threshold},
                     "digest": "+j" + sha, "note": rule_text(campaign, per_system[system]),
                     "source": f"judging campaign {campaign.pk} ({campaign.title})"}
        version = sub.dataset.task.registry_task.scorer_version
        digest = sub.dataset.reference_digest + "+j" + sha
        if Score.objects.filter(submission=sub, scorer_version=version,
                                reference_digest=digest).exists():
            out.unchanged.append(team)
            continue
        try:
            outcome = score_submission(sub, published)
        except InvalidInput as e:
            out.failed[team] = rename_paths(e.render(), sub.path, sub.original_name,
                                            sub.dataset.reference_file)
            continue
        _store(sub, version, digest, outcome, published, who, force)
        out.scored[team] = outcome.primary
    campaign.config = {**campaign.config, "published": {
        "file": rel, "at": timezone.now().isoformat(), "by": who, "forced": force.strip(),
        "teams": sorted(out.scored) + sorted(out.unchanged)}}
    campaign.save(update_fields=["config"])
    return out


def _store(sub, version, digest, outcome, published, who, force):
    with transaction.atomic():
        store_score(sub, version, digest, outcome)
        # the scoring is done: a dataset re-score does not queue it again
        Job.objects.update_or_create(submission=sub, scorer_version=version,
                                     reference_digest=digest,
                                     defaults={"status": Job.DONE, "finished": timezone.now()})
        sub.score_options = published
        sub.save(update_fields=["score_options"])
        SubmissionEvent.objects.create(
            submission=sub, state="scored",
            message=f"scored from the judges' decisions: {published['note']}",
            log=f"published by {who or 'the server'}" + (f"; forced: {force}" if force else ""))
