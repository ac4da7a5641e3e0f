"""The rules of ``access/visibility.py`` one function at a time (docs/platform.md,
"Who sees what"): the score level of a dataset by blind flag, ``feedback`` and
release (by hand and by schedule, at the exact instants), who sees a submission
and a leaderboard, when runs freeze, when a split dataset's private part is out
and which part a board shows.

Fast on purpose (no uploads, no pages): it is the test file that owns
``access.py`` in ``bench/mutate.py``, run once per mutant. ``now`` is always
far from the real clock, so a rule that read the clock instead of ``now`` fails.
"""
from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import AnonymousUser

from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import Phase

from ..rules_world import rw  # noqa: F401  (fixture)

H = dt.timedelta(hours=1)


@pytest.fixture
def w(rw):
    rw["eval"], rw["dev"], rw["t"] = rw["ds"]["eval"], rw["ds"]["dev"], rw["now"]
    return rw


def phase_of(ds, **kw) -> Phase:
    for k, v in kw.items():
        setattr(ds.phase, k, v)
    ds.phase.save()
    return ds.phase


def test_blind_dataset_level_follows_the_release_by_hand(w):
    ds, t = w["eval"], w["t"]
    assert ds.phase.blind and ds.feedback
    assert access.dataset_level(ds, t) == access.NONE == "none"
    for level in (Phase.TOP, Phase.DETAILED):
        phase_of(ds, released=level)
        assert access.dataset_level(ds, t) == level


def test_blind_dataset_level_follows_the_schedule_at_its_exact_instants(w):
    ds, t = w["eval"], w["t"]
    phase_of(ds, release_top_at=t, release_detailed_at=t + H)
    assert access.dataset_level(ds, t - dt.timedelta(microseconds=1)) == access.NONE
    assert access.dataset_level(ds, t) == Phase.TOP
    assert access.dataset_level(ds, t + H - dt.timedelta(microseconds=1)) == Phase.TOP
    assert access.dataset_level(ds, t + H) == Phase.DETAILED


def test_open_dataset_is_detailed_and_feedback_false_waits_for_the_release(w):
    ds, t = w["dev"], w["t"]
    assert not ds.phase.blind
    assert access.dataset_level(ds, t) == access.DETAILED
    ds.feedback = False
    ds.save()
    assert access.dataset_level(ds, t) == access.NONE
    phase_of(ds, release_top_at=t)
    assert access.dataset_level(ds, t) == access.TOP
    assert access.dataset_level(ds, t - H) == access.NONE


def test_at_least_orders_the_levels():
    order = [access.NONE, access.TOP, access.DETAILED]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert access.at_least(a, b) is (i >= j), (a, b)
    assert access.at_least(Phase.HIDDEN, access.NONE)
    assert not access.at_least(Phase.HIDDEN, access.TOP)


def test_who_sees_a_submission_and_at_which_level(w):
    from shareval.platform.submissions.models import Submission
    u, t = w["users"], w["t"]
    sub = Submission.objects.create(team=w["teams"]["Team A"], dataset=w["eval"],
                                    state=Submission.SCORED, original_name="a.tsv")
    assert access.can_view_submission(w["org"], sub)
    assert access.can_view_submission(u["alice"], sub) and access.can_view_submission(u["carol"], sub)
    assert not access.can_view_submission(u["bob"], sub)          # another team
    assert not access.can_view_submission(u["dave"], sub)         # in no team
    assert not access.can_view_submission(AnonymousUser(), sub)
    # unreleased blind phase: the team sees nothing, the organizer everything
    assert access.score_level(u["alice"], sub, t) == access.NONE
    assert access.score_level(w["org"], sub, t) == access.DETAILED
    # released by schedule an hour after ``t``: at ``t`` still nothing (the real clock,
    # long after, would say top)
    phase_of(w["eval"], release_top_at=t + H)
    assert access.score_level(u["alice"], sub, t) == access.NONE
    assert access.score_level(u["alice"], sub, t + H) == access.TOP
    phase_of(w["eval"], release_top_at=None, released=Phase.TOP)
    assert access.score_level(u["alice"], sub, t) == access.TOP
    phase_of(w["eval"], released=Phase.DETAILED)
    assert access.score_level(u["alice"], sub, t) == access.DETAILED
    assert access.score_level(u["bob"], sub, t) == access.NONE    # never another team's
    assert access.score_level(u["dave"], sub, t) == access.NONE


def test_leaderboard_readers_and_scores(w):
    ds, u, t = w["eval"], w["users"], w["t"]
    anon = AnonymousUser()
    assert access.can_view_leaderboard(anon, ds) and access.can_view_leaderboard(u["bob"], ds)
    phase_of(ds, leaderboard_public=False)
    assert not access.can_view_leaderboard(anon, ds)
    assert not access.can_view_leaderboard(u["alice"], ds)       # even a team member
    assert access.can_view_leaderboard(w["org"], ds)
    # scores: organizers always; others once the level is at least top
    assert access.leaderboard_shows_scores(w["org"], ds, t)
    assert not access.leaderboard_shows_scores(u["alice"], ds, t)
    assert not access.leaderboard_shows_scores(anon, ds, t)
    phase_of(ds, release_top_at=t)
    assert access.leaderboard_shows_scores(anon, ds, t)
    assert not access.leaderboard_shows_scores(anon, ds, t - H)
    phase_of(ds, release_top_at=None, released=Phase.DETAILED)
    assert access.leaderboard_shows_scores(u["bob"], ds, t)


def test_superuser_is_an_organizer_everywhere(w):
    from django.contrib.auth import get_user_model
    root = get_user_model().objects.create_user("root", password="root-pass-123",
                                                is_superuser=True)
    ds, t = w["eval"], w["t"]
    phase_of(ds, leaderboard_public=False)
    assert access.can_view_leaderboard(root, ds)
    assert access.leaderboard_shows_scores(root, ds, t)


def test_frozen_at_the_end_or_at_a_blind_release(w):
    ds = w["eval"]
    end = ds.phase.end
    assert not access.frozen(ds.phase, end - dt.timedelta(microseconds=1))
    assert access.frozen(ds.phase, end)                       # the end itself is closed
    assert access.frozen(ds.phase, end + H)
    t = w["t"]
    assert not access.frozen(ds.phase, t)
    phase_of(ds, released=Phase.TOP)
    assert access.frozen(ds.phase, t)                         # blind and released
    phase_of(ds, released=Phase.HIDDEN, release_top_at=t + H)
    assert not access.frozen(ds.phase, t)
    assert access.frozen(ds.phase, t + H)                     # released by schedule
    # an open (not blind) phase is not frozen by a release, only by its end
    phase_of(ds, blind=False, released=Phase.DETAILED, release_top_at=None)
    assert not access.frozen(ds.phase, t)
    assert access.frozen(ds.phase, end)


def test_frozen_without_now_reads_the_clock(w):
    """(``now or timezone.now()``: a rule reading ``now`` only would see None)"""
    ds = w["eval"]                   # the phase ends in 2001
    assert access.frozen(ds.phase)
    phase_of(ds, end=dt.datetime.now(dt.timezone.utc) + H, released=Phase.HIDDEN)
    assert not access.frozen(ds.phase)


def test_private_part_released_only_with_a_split_and_a_release(w):
    ds, t = w["eval"], w["t"]
    assert not access.private_released(ds, t)                 # no split
    phase_of(ds, released=Phase.TOP)
    assert not access.private_released(ds, t)                 # released, but no split
    ds.split = {"fraction": 0.5, "seed": 1}
    ds.save()
    assert access.private_released(ds, t)
    phase_of(ds, released=Phase.HIDDEN, release_top_at=t)
    assert access.private_released(ds, t) and not access.private_released(ds, t - H)
    # whether or not the phase is blind: an open phase's split waits for the release too
    dev = w["dev"]
    dev.split = {"fraction": 0.5, "seed": 1}
    dev.save()
    assert not access.private_released(dev, t)
    phase_of(dev, released=Phase.DETAILED)
    assert access.private_released(dev, t)


def test_board_part(w):
    ds, t, u = w["eval"], w["t"], w["users"]
    # no split: always the public part, whatever is asked
    assert access.board_part(w["org"], ds, "private", t) == "public"
    ds.split = {"fraction": 0.5, "seed": 1}
    ds.save()
    assert access.board_part(u["alice"], ds, None, t) == "public"
    assert access.board_part(u["alice"], ds, "private", t) == "public"    # not theirs to ask
    assert access.board_part(w["org"], ds, "private", t) == "private"
    assert access.board_part(w["org"], ds, "public", t) == "public"
    assert access.board_part(w["org"], ds, "other", t) == "public"
    assert access.board_part(w["org"], ds, None, t) == "public"
    phase_of(ds, release_top_at=t)
    assert access.board_part(u["alice"], ds, None, t) == "private"
    assert access.board_part(u["alice"], ds, "public", t) == "private"
    assert access.board_part(u["alice"], ds, None, t - H) == "public"
    assert access.board_part(w["org"], ds, "public", t) == "public"
    assert access.board_part(w["org"], ds, "XX", t) == "private"
