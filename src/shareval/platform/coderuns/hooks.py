"""Code runs' answers to the submissions app's questions (``submissions/hooks.py``)."""
from __future__ import annotations

from shareval.platform.coderuns.models import CodeRun, CodeSubmission
from shareval.platform.coderuns.service import accepts_files
from shareval.platform.submissions import hooks


def pending_runs(team, dataset) -> int:
    """The team's code runs on the dataset not finished yet."""
    return CodeRun.objects.filter(code_submission__team=team, code_submission__dataset=dataset,
                                  state__in=(CodeRun.QUEUED, CodeRun.RUNNING)).count()


def quota_runs(team, counted: dict, since: dict):
    """The team's code bundles in a quota's window (each counts once, from its upload,
    as ``service._quota_full`` counts them) and the outputs they stand for."""
    n = CodeSubmission.objects.filter(team=team, **counted, **since).count()
    outputs = CodeRun.objects.filter(code_submission__team=team,
                                     output_submission__isnull=False) \
        .values("output_submission")
    return n, outputs


def register() -> None:
    hooks.add(hooks.accepts_files, accepts_files)
    hooks.add(hooks.pending_runs, pending_runs)
    hooks.add(hooks.quota_runs, quota_runs)
