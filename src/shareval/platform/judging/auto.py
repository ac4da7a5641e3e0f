"""Automatic assessment of every run (kbp-online's validate -> sample -> judge ->
score; docs/kbp-assessment.md).

A question-chain campaign with ``auto: true`` in its configuration is its
dataset's assessment campaign (one per dataset). The runs it evaluates: each
team's leaderboard run as ``build.team_runs`` picks it (its primary run, else
its latest scored run), whenever a run is or becomes that run: when it is
scored, made primary, or when the team's primary run is cancelled. Each such
run is a new output of the campaign, named ``<team> · run <8 characters of
its id>`` (RunOutput.submission maps it back), and is drawn with the on-demand
machinery (ondemand.add_late: earlier judgments reused, importance weights),
also when it is the campaign's first output. Runs that failed, were cancelled
or rejected are never drawn (add_late takes scored runs only); a team's
earlier assessed runs keep their outputs and estimates.

Per run: ``half_width`` (0.05), ``pilot`` (50) and ``budget`` (money at the
campaign's rate, none by default) and ``seed`` (0; with the evaluation's id it
seeds the draws) from the configuration.

Where it runs: a run's scored announcement (a SubmissionEvent, created by the
scoring worker: the in-process thread or a Celery worker) draws in that
worker's commit hook. Primary flags and cancellations come from requests:
they hand the run to the background (a Celery task, or a thread of the
server). The periodic ``send-reminders`` run sweeps whatever was missed (a
worker that died). Once a run's judgments are complete (ondemand.advance_all
after each judgment) its estimates are stored as its score (:func:`store`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading

from django.conf import settings
from django.db import close_old_connections, transaction

from shareval.platform import broker
from shareval.platform.submissions.models import Submission, SubmissionEvent
from shareval.platform.submissions.queue import store_score
from shareval.platform.submissions.scoring import Outcome, json_safe

from shareval.platform.judging import designs, ondemand
from shareval.platform.judging.estimates import ESTIMATED, MEASURES, assessment_campaign, \
    dataset_estimates, finite
from shareval.platform.judging.models import Campaign, LateEvaluation, RunOutput

log = logging.getLogger("shareval.judging.auto")
# per run; the draws' generator is seeded by the seed and the evaluation's id
DEFAULTS = {"half_width": 0.05, "pilot": 50, "budget": None, "seed": 0}
SUFFIX = "+a"                  # the reference digest of a score holding judged estimates
EVENT = "assessment"           # the run's history: drawn, estimated, not assessable
INLINE = False                 # tests: hand-offs run in the caller's thread


def metric_names() -> list[str]:
    """The metrics a judged score adds (docs/kbp-assessment.md)."""
    return [f"judged_{m}{s}" for m in MEASURES for s in ("", "_low", "_high")]


# configuration ------------------------------------------------------------------------

def is_auto(campaign: Campaign) -> bool:
    return campaign.design == designs.CHAIN and campaign.config.get("auto") is True


def check_config(dataset, design: str, config: dict, campaign: Campaign | None = None
                 ) -> list[str]:
    """Problems of an automatic campaign's settings ([] when ``auto`` is not set)."""
    if "auto" not in config:
        return []
    auto = config["auto"]
    if not isinstance(auto, bool):
        return [f"auto: true or false, found {auto!r}"]
    if not auto:
        return []
    out = []
    if design != designs.CHAIN:
        out.append("auto: only a question-chain campaign assesses every run automatically")
    other = assessment_campaign(dataset) if dataset is not None else None
    if other is not None and (campaign is None or other.pk != campaign.pk):
        out.append(f"auto: the dataset's runs are already assessed by campaign {other.title!r}")
    hw = config.get("half_width", DEFAULTS["half_width"])
    if not finite(hw) or not 0 < hw < 0.5:
        out.append(f"half_width: a number between 0 and 0.5, found {hw!r}")
    pilot = config.get("pilot", DEFAULTS["pilot"])
    if not isinstance(pilot, int) or isinstance(pilot, bool) or not 2 <= pilot <= 10_000:
        out.append(f"pilot: a whole number of draws from 2 to 10000, found {pilot!r}")
    seed = config.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        out.append(f"seed: a whole number, found {seed!r}")
    budget = config.get("budget")
    if budget is not None and (not finite(budget) or budget <= 0):
        out.append(f"budget: a positive amount of money per run (or leave it out), "
                   f"found {budget!r}")
    return out


# which runs -------------------------------------------------------------------------

def leaderboard_run(team_id: int, dataset) -> Submission | None:
    """The team's primary scored run, else its latest scored one (build.team_runs's rule)."""
    scored = Submission.objects.filter(team_id=team_id, dataset=dataset,
                                       state=Submission.SCORED, disqualified="")
    return scored.filter(kind=Submission.PRIMARY).first() or \
        scored.order_by("-created", "-pk").first()


def output_name(sub: Submission) -> str:
    return f"{sub.team.name} · run {str(sub.pk)[:8]}"


def evaluate(campaign: Campaign, sub: Submission) -> LateEvaluation | None:
    """Draw ``sub``'s items (once); None when it is already an output of the campaign or
    cannot be assessed (then recorded: an output without items, a note in its history)."""
    cfg = {**DEFAULTS, **{k: campaign.config[k] for k in DEFAULTS if k in campaign.config}}
    try:
        with transaction.atomic():
            # one drawing at a time per campaign: two new items with one key would clash
            Campaign.objects.select_for_update().get(pk=campaign.pk)
            if RunOutput.objects.filter(campaign=campaign, submission=sub).exists():
                return None
            ev = ondemand.add_late(campaign, sub, cfg["half_width"], cfg["budget"],
                                   cfg["pilot"], cfg["seed"], name=output_name(sub))
            _note(sub, f"drawn for assessment by the judges of {campaign.title!r}; the "
                       f"estimates become this run's score once they are judged")
            return ev
    except ondemand.LateError as e:
        with transaction.atomic():
            _, made = RunOutput.objects.get_or_create(
                campaign=campaign, name=output_name(sub),
                defaults={"submission": sub, "keys": [], "late": True})
            if made:
                _note(sub, f"not assessed: {e}")
        return None


def _note(sub: Submission, message: str) -> None:
    SubmissionEvent.objects.create(submission=sub, state=EVENT, message=message)


def assess_run(sub_pk) -> int:
    """After a run was scored, made primary or cancelled: draw its team's leaderboard run
    if it is new to the campaign, and store the estimates of the run if they are done
    (a re-scored run gets them back on top of its new score). Returns runs drawn."""
    sub = Submission.objects.select_related("team", "dataset__task").filter(pk=sub_pk).first()
    if sub is None:
        return 0
    camp = assessment_campaign(sub.dataset)
    if camp is None:
        return 0
    drawn = 0
    run = leaderboard_run(sub.team_id, sub.dataset)
    if run is not None and evaluate(camp, run) is not None:
        drawn += 1
    if RunOutput.objects.filter(campaign=camp, submission=sub,
                                evaluation__stage=LateEvaluation.DONE).exists():
        refresh(sub.dataset)
    return drawn


def sweep() -> dict:
    """Every automatic campaign: draw each team's leaderboard run not drawn yet, store
    estimates not stored yet (the periodic run's safety net)."""
    drawn = stored = 0
    for camp in Campaign.objects.filter(design=designs.CHAIN).select_related("dataset"):
        if not is_auto(camp) or assessment_campaign(camp.dataset).pk != camp.pk:
            continue
        drawn += draw_all(camp)
        ondemand.advance_all(camp)
        stored += refresh(camp.dataset)
    return {"runs_drawn_for_assessment": drawn, "assessments_stored": stored} \
        if drawn or stored else {}


def draw_all(camp: Campaign) -> int:
    """Draw every team's leaderboard run the campaign has not drawn yet."""
    drawn = 0
    teams = set(Submission.objects.filter(dataset=camp.dataset, state=Submission.SCORED)
                .values_list("team_id", flat=True))
    for team in sorted(teams):
        run = leaderboard_run(team, camp.dataset)
        if run is not None and evaluate(camp, run) is not None:
            drawn += 1
    return drawn


# hand-offs ---------------------------------------------------------------------------

def dispatch(sub_pk) -> None:
    """Run :func:`assess_run` in the background: a Celery task, else a server thread."""
    if INLINE:
        assess_run(sub_pk)
    elif settings.BROKER_URL:
        broker.send(broker.ASSESS_RUN, str(sub_pk))
    else:
        threading.Thread(target=_in_thread, args=(sub_pk,), daemon=True,
                         name="shareval-assess").start()


def _in_thread(sub_pk) -> None:
    try:
        assess_run(sub_pk)
    except Exception:                                    # noqa: BLE001
        log.exception("assessing run %s failed (the periodic sweep retries)", sub_pk)
    finally:
        close_old_connections()


# estimates as scores -----------------------------------------------------------------

def refresh(dataset) -> int:
    """Store every finished estimate of the dataset that is not its run's current
    score yet (new recall documents change them); returns how many were stored."""
    n = 0
    camp = assessment_campaign(dataset)
    if camp is None:
        return 0
    outputs = {o.name: o for o in camp.outputs.select_related("submission__dataset__task")}
    for name, row in dataset_estimates(dataset).items():
        if row["status"] == ESTIMATED and name in outputs:
            n += store(outputs[name], row)
    return n


def judged_metrics(row: dict) -> dict:
    return {f"judged_{m}{s}": row[f"{m}{s}"] for m in MEASURES for s in ("", "_low", "_high")}


def store(output: RunOutput, row: dict) -> bool:
    """The run's automatic result plus the judged estimates as its current score, under
    its own reference digest (the automatic score stays in the history); False when
    nothing changed, the run is no longer scored, or it has no automatic score."""
    sub = output.submission
    if sub is None:
        return False
    sub.refresh_from_db(fields=["state", "score_options"])
    if sub.state != Submission.SCORED:
        return False
    base = sub.scores.filter(reference_digest=sub.scoring_digest).order_by("-created",
                                                                          "-pk").first()
    if base is None:
        return False
    values = judged_metrics(row)
    sha = hashlib.sha256(json.dumps([output.campaign_id, values], sort_keys=True)
                         .encode()).hexdigest()[:10]
    digest = sub.scoring_digest + SUFFIX + sha
    if sub.scores.filter(current=True, scorer_version=base.scorer_version,
                         reference_digest=digest).exists():
        return False
    result = json.loads(json.dumps(base.result))
    result["metrics"] = {**(result.get("metrics") or {}), **values}
    note = _rule(row)
    result["judged"] = {k: row.get(k) for k in ("campaign", "outcome", "draws", "items",
                                                 "recall_documents", "note")} | {"rule": note}
    result.setdefault("conventions", {})["official"] = note
    primary = result["metrics"].get(sub.dataset.task.metric)
    primary = primary if finite(primary) else None
    outcome = Outcome(json_safe(result), primary, base.comparison, list(base.plots),
                      base.private_result, base.private_primary, base.unit_stats)
    with transaction.atomic():
        store_score(sub, base.scorer_version, digest, outcome)
        _note(sub, "assessed: the judges' estimates of precision"
                   + (", recall and F1" if row["recall"] is not None else
                      " (recall and F1 once recall documents are annotated)")
                   + " are now part of this run's score")
    return True


def _rule(row: dict) -> str:
    rec = (f"recall from {row['recall_documents']} exhaustively annotated document(s), F1 "
           f"from both (Monte Carlo)" if row["recall"] is not None else
           "recall and F1: " + (row["note"] or "no recall documents yet"))
    return (f"judged_* metrics estimated from the judges' answers in campaign "
            f"{row['campaign']!r}: precision by on-demand importance sampling "
            f"({row['draws']} draws, {row['outcome'] or 'done'}); {rec}; "
            f"{int(row['confidence'] * 100)}% intervals (docs/kbp-assessment.md)")


def after_judgment(campaign: Campaign, moved: int) -> int:
    """After judgments in ``campaign`` (ondemand.advance_all): when the dataset has an
    automatic campaign, store the estimates that changed: runs whose evaluation just
    moved, or any run when the judgments were recall annotations (another campaign)."""
    camp = assessment_campaign(campaign.dataset)
    if camp is None or (camp.pk == campaign.pk and not moved):
        return 0
    return refresh(campaign.dataset)
