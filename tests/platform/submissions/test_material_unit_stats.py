"""A MATERIAL CLIR run scored by the server keeps its per-query statistics (one unit
per closed query, the ``aqwv`` aggregate) with its score: the report's intervals and
pair tests, and the comparison with the team's earlier run, read them."""
from __future__ import annotations

import pytest

from shareval.platform.submissions import queue
from shareval.platform.submissions.models import Score
from shareval.stats import compare_result
from shareval.tasks import UnitStats

from . import test_material_runs as runs

material, submit = runs.material, runs.submit        # the fixture and its uploads


def test_a_scored_clir_run_stores_its_unit_statistics(material):
    m = material
    first = submit(m, "alice", "NIST", "sysA.tgz")
    queue.drain()
    score = Score.objects.get(submission=first, current=True)
    stored = score.unit_stats
    assert stored is not None and stored["metric"] == "aqwv" and stored["aggregate"] == "aqwv"
    assert stored["units"] == ["query1", "query2", "query3"] and stored["shape"] == [3, 3]
    us = UnitStats.from_dict(stored)
    value = float(us.aggregate(us.stats[None], us.weights[None])[0])
    assert score.primary == pytest.approx(value, abs=1e-12)
    assert score.result["metrics"]["aqwv"] == pytest.approx(value, abs=1e-12)
    # a later run is compared with it from both stored statistics, as from the files
    second = submit(m, "alice", "NIST", "sysB.tgz", drop=1)
    queue.drain()
    later = Score.objects.get(submission=second, current=True)
    assert later.comparison["previous"] == str(first.pk)
    assert "unavailable" not in later.comparison and later.comparison["units"] == 3
    want = compare_result("material-clir", str(m["root"] / "material-pack"),
                          str(second.path), str(first.path), samples=2000, seed=0)
    assert later.comparison["metrics"] == want.to_dict()["metrics"]
