"""What apps above submissions add to its checks, registered in their
``AppConfig.ready`` (code runs: ``coderuns/hooks.py``), so this app imports none
of them."""
from __future__ import annotations

from typing import Callable

# dataset -> False when the dataset takes code only, no uploaded output files
accepts_files: list[Callable] = []
# (team, dataset) -> how many of the team's runs on the dataset, besides its
# uploads, are still queued or running (the dataset's ``concurrent`` limit)
pending_runs: list[Callable] = []


# run -> what an app above says about the run on its page and in the API (judging:
# its automatic assessment's status, estimates and cost), or None; shown to whoever
# may see the run's scores (present.submission_payload), else only that it is hidden
run_assessment: list[Callable] = []


def add(hooks: list[Callable], fn: Callable) -> None:
    if fn not in hooks:
        hooks.append(fn)
# (team, a quota's dataset filter, its window filter) -> (runs besides the team's
# uploads that count against the quota, the Submission pks those runs already stand
# for and that must not be counted twice): code bundles count from their upload on
quota_runs: list[Callable] = []
