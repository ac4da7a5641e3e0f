"""Code runs' answers to the submissions app's questions (``submissions/hooks.py``)."""
from __future__ import annotations

from shareval.platform.coderuns.models import CodeRun
from shareval.platform.coderuns.service import accepts_files
from shareval.platform.submissions import hooks


def pending_runs(team, dataset) -> int:
    """The team's code runs on the dataset not finished yet."""
    return CodeRun.objects.filter(code_submission__team=team, code_submission__dataset=dataset,
                                  state__in=(CodeRun.QUEUED, CodeRun.RUNNING)).count()


def register() -> None:
    hooks.add(hooks.accepts_files, accepts_files)
    hooks.add(hooks.pending_runs, pending_runs)
