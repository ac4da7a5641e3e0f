"""The runs list decodes each score's result once per process (result_cache.py)
and asks the viewer's roles once per competition (access.list_level): the same
answers as before, what a viewer may see still decided on every request."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from shareval.platform.access import visibility as access
from shareval.platform.submissions import queue, result_cache
from shareval.platform.submissions.models import Score, Submission
from shareval.platform.submissions.present import list_payload, run_rows

from ..factories import submit


@pytest.fixture(autouse=True)
def empty_cache():
    result_cache.clear()
    yield
    result_cache.clear()


def _api(client, user) -> dict:
    client.force_login(user)
    r = client.get("/api/submissions/?competition=tiny")
    assert r.status_code == 200
    return {row["id"]: row for row in r.json()}


def test_the_list_shows_the_stored_result_and_decodes_it_once(world, client):
    sub = submit(world, "alice", ds="dev", correct=12)
    queue.drain()
    first = _api(client, world["users"]["alice"])[str(sub.pk)]["score"]
    stored = Score.objects.get(submission=sub, current=True).result
    assert first["metrics"] and first["metrics"] == {
        k: v for k, v in stored["metrics"].items() if k in first["metrics"]}
    assert first["breakdowns"] == stored.get("breakdowns", {})
    assert len(result_cache._cache) >= 1
    assert _api(client, world["users"]["alice"])[str(sub.pk)]["score"] == first


def test_a_cached_result_never_shows_a_blind_score_to_its_team(world, client):
    """The organizer's list fills the cache with the blind phase's results first."""
    sub = submit(world, "alice", ds="eval", correct=12)
    queue.drain()
    org = _api(client, world["org"])[str(sub.pk)]["score"]
    assert "metrics" in org and len(result_cache._cache) >= 1
    mine = _api(client, world["users"]["alice"])[str(sub.pk)]["score"]
    assert mine == {"hidden": "scores of this phase are not released yet"}
    assert str(sub.pk) not in _api(client, world["users"]["bob"])
    rows = run_rows(Submission.objects.filter(pk=sub.pk), world["users"]["alice"])
    assert rows[0]["hidden"] and rows[0]["value"] is None


def test_a_new_score_shows_its_own_numbers(world, client):
    sub = submit(world, "alice", ds="dev", correct=12)
    queue.drain()
    alice = world["users"]["alice"]
    before = _api(client, alice)[str(sub.pk)]["score"]["metrics"]
    old = Score.objects.get(submission=sub, current=True)
    Score.objects.filter(submission=sub).update(current=False)
    changed = dict(old.result, metrics={k: 0.125 for k in old.result["metrics"]})
    Score.objects.create(submission=sub, scorer_version="v2", reference_digest="d2",
                         result=changed, primary=0.125, current=True)
    after = _api(client, alice)[str(sub.pk)]["score"]["metrics"]
    assert after != before and set(after.values()) == {0.125}


def test_the_cache_key_holds_the_run_and_the_moment_not_only_the_id():
    """A database rolled back or rebuilt may give a new score an old score's id."""
    class FakeScore:
        def __init__(self, pk, sub, created):
            self.pk, self.submission_id, self.created = pk, sub, created
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    result_cache._cache[(1, "run-a", now)] = ({"metrics": {"x": 1}}, 10)
    hit = FakeScore(1, "run-a", now)
    result_cache.fill([hit])
    assert hit.result == {"metrics": {"x": 1}}
    assert result_cache._key(FakeScore(1, "run-b", now)) not in result_cache._cache
    assert result_cache._key(FakeScore(1, "run-a", now + dt.timedelta(seconds=1))) \
        not in result_cache._cache


@pytest.mark.parametrize("who", ["org", "alice", "carol", "bob", "dave"])
def test_list_level_is_score_level(world, who):
    runs = [submit(world, "alice", ds="dev"), submit(world, "alice", ds="eval"),
            submit(world, "bob", team="Team B", ds="dev")]
    queue.drain()
    user = world["org"] if who == "org" else world["users"][who]
    roles: dict = {}
    for sub in Submission.objects.filter(pk__in=[s.pk for s in runs]) \
            .select_related("dataset__phase__competition"):
        assert access.list_level(user, sub, roles) == access.score_level(user, sub)
    payload = list_payload(Submission.objects.filter(pk__in=[s.pk for s in runs]), user)
    assert len(payload) == 3


def test_the_cache_keeps_at_most_its_limit_newest_used_first(world, client, monkeypatch):
    runs = [submit(world, "alice", ds="dev", correct=10 + i) for i in range(6)]
    queue.drain()
    one = max(len(json.dumps(s.result)) for s in Score.objects.filter(submission__in=runs))
    monkeypatch.setattr(result_cache, "LIMIT_BYTES", 4 * one + one // 2)   # 4 fit, not 6
    shown = _api(client, world["users"]["alice"])
    assert 1 <= len(result_cache._cache) <= 4
    assert result_cache._size <= result_cache.LIMIT_BYTES
    assert shown == _api(client, world["users"]["alice"])            # misses read again
    monkeypatch.setattr(result_cache, "LIMIT_BYTES", 3 * one)          # too big to keep
    result_cache.clear()
    assert shown == _api(client, world["users"]["alice"]) and not result_cache._cache
