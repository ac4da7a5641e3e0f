"""Who may see what. Every view and API endpoint asks these functions.

- Organizers (a competition's organizers, or superusers) see everything of
  their competition, hidden references excepted (those are never served).
- A team member sees their own team's submissions; scores according to
  :func:`score_level`; never another team's submissions.
- Leaderboards: readable by anyone (no login) when the phase's leaderboard is
  public, only by organizers otherwise; scores on it only once the phase's
  results are released (blind phases) or the dataset gives feedback. Without
  scores, nothing on the board may depend on them (see ``leaderboard.rows``).
- A split dataset's private part (``Score.private_result``) is shown to
  non-organizers only once the phase's results are released
  (:func:`private_released`); until then no page, API answer or file derived
  from it reaches them.
- Primary flags and cancellations change what a leaderboard reads: teams may
  change them only while the phase is open and its results unreleased
  (:func:`frozen`); organizers any time, with a reason once frozen.
"""
from __future__ import annotations

from django.utils import timezone

from shareval.platform.competitions.models import Dataset, Phase

NONE, TOP, DETAILED = "none", Phase.TOP, Phase.DETAILED
_ORDER = {NONE: 0, Phase.HIDDEN: 0, TOP: 1, DETAILED: 2}


def dataset_level(dataset: Dataset, now=None) -> str:
    """What non-organizers may see of this dataset's scores right now."""
    phase = dataset.phase
    if phase.blind or not dataset.feedback:
        level = phase.released_at(now)
        return NONE if level == Phase.HIDDEN else level
    return DETAILED


def can_view_submission(user, submission) -> bool:
    comp = submission.dataset.phase.competition
    if comp.is_organizer(user):
        return True
    team = comp.team_of(user)
    return team is not None and team.pk == submission.team_id


def viewer(user, submission, now=None) -> tuple[bool, bool, str]:
    """(organizer, member of the run's team, :func:`score_level`) of ``user`` for
    this run, with one query for each role: a result page asked them eight times."""
    comp = submission.dataset.phase.competition
    organizer = comp.is_organizer(user)
    team = comp.team_of(user)
    team_id = team.pk if team is not None else None
    return (organizer, team_id is not None and team_id == submission.team_id,
            _level(organizer, team_id, submission, now))


def _level(organizer: bool, team_id, submission, now=None) -> str:
    """The rule of :func:`score_level`, from the viewer's roles in the run's
    competition (``team_id``: their team's, or None)."""
    if organizer:
        return DETAILED
    if team_id is None or team_id != submission.team_id:
        return NONE
    return dataset_level(submission.dataset, now)


def score_level(user, submission, now=None) -> str:
    """none, top (metrics) or detailed (breakdowns, plots, significance)."""
    comp = submission.dataset.phase.competition
    if comp.is_organizer(user):
        return DETAILED
    team = comp.team_of(user)
    return _level(False, team.pk if team is not None else None, submission, now)


def list_level(user, submission, roles: dict, now=None) -> str:
    """:func:`score_level` for one of many runs: ``user``'s roles in each competition
    (organizer, team) are asked once and kept in ``roles`` (the list's own dict),
    not twice per run's dataset (a team's runs page asked them 9 times)."""
    comp = submission.dataset.phase.competition
    if comp.pk not in roles:
        organizer = comp.is_organizer(user)
        team = None if organizer else comp.team_of(user)
        roles[comp.pk] = (organizer, team.pk if team is not None else None)
    return _level(*roles[comp.pk], submission, now)


def at_least(level: str, wanted: str) -> bool:
    return _ORDER[level] >= _ORDER[wanted]


def can_view_leaderboard(user, dataset: Dataset) -> bool:
    return dataset.phase.leaderboard_public or dataset.phase.competition.is_organizer(user)


def leaderboard_shows_scores(user, dataset: Dataset, now=None) -> bool:
    if dataset.phase.competition.is_organizer(user):
        return True
    return at_least(dataset_level(dataset, now), TOP)


def frozen(phase: Phase, now=None) -> bool:
    """Whether the runs of this phase are final for their teams: the phase has
    ended, or (blind phases) its results are released."""
    now = now or timezone.now()
    return now >= phase.end or (phase.blind and phase.released_at(now) != Phase.HIDDEN)


def private_released(dataset: Dataset, now=None) -> bool:
    """Whether the private part of a split dataset is out: the phase's results are
    released (by hand or by schedule), whether or not the phase is blind."""
    return bool(dataset.split) and dataset.phase.released_at(now) != Phase.HIDDEN


def board_part(user, dataset: Dataset, asked: str | None = None, now=None) -> str:
    """Which part of a split dataset a board shows: the private part once released;
    organizers may ask for either (``?part=``)."""
    if not dataset.split:
        return "public"
    if asked in ("public", "private") and dataset.phase.competition.is_organizer(user):
        return asked
    return "private" if private_released(dataset, now) else "public"
