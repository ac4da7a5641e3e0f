"""A run is compared with the team's best earlier run from both runs' per-unit
statistics, stored with their scores (as ranx's compare reuses metric_scores):
the earlier run's file is not read again. Scores stored without them (older rows)
are compared from the files, as before."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Score
from shareval.stats import compare_result

from ..factories import Upload, make_world, run_with_accuracy

NOW = dt.datetime.now(dt.timezone.utc)
HOUR = dt.timedelta(hours=1)


def _up(w, correct, at):
    return service.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["dev"],
                          Upload(f"alice-{correct}.tsv", run_with_accuracy(correct)), now=at)


def _expected(w, sub, prev):
    ref = w["ds"]["dev"].reference_file
    return compare_result("classification", str(ref), str(sub.path), str(prev.path),
                          samples=2000, seed=0).to_dict()["metrics"]


def test_the_earlier_run_is_compared_from_its_stored_statistics(db, tmp_path):
    w = make_world(tmp_path)
    first = _up(w, 12, NOW - 2 * HOUR)
    queue.drain()
    stored = Score.objects.get(submission=first, current=True).unit_stats
    assert stored["metric"] == "accuracy" and stored["aggregate"] == "weighted_mean"
    assert sum(v for (v,) in stored["stats"]) == 12
    second = _up(w, 17, NOW - HOUR)
    expected = _expected(w, second, first)
    Path(first.path).write_text("not a submission\n")      # reading it again would fail
    queue.drain()
    score = Score.objects.get(submission=second, current=True)
    assert score.comparison["previous"] == str(first.pk)
    assert "unavailable" not in score.comparison
    assert score.comparison["metrics"] == expected
    assert score.comparison["units"] == 20


def test_a_score_stored_without_statistics_is_compared_from_the_files(db, tmp_path):
    w = make_world(tmp_path)
    first = _up(w, 12, NOW - 2 * HOUR)
    queue.drain()
    Score.objects.filter(submission=first).update(unit_stats=None)     # an older row
    second = _up(w, 17, NOW - HOUR)
    queue.drain()
    score = Score.objects.get(submission=second, current=True)
    assert score.comparison["metrics"] == _expected(w, second, first)
