"""A team's summaries name their system freely (``team_id``, ``sys_label``): nothing
binds a MATERIAL TeamID to a platform team. A team whose name sorts first must not
take another team's system name in the build and so push that team out of the
judging (i37 security review): a system two teams claim is built for neither, and
the organizer is told who claims it."""
from __future__ import annotations

from django.contrib.auth import get_user_model

from shareval.platform.competitions.models import Membership, Team
from shareval.platform.judging import e2e_items
from shareval.platform.submissions import queue
from shareval.platform.submissions import service as subs

from ..factories import Upload
from .test_judging_e2e import e2e, e2e_archive  # noqa: F401 -- fixture


def test_a_team_naming_another_teams_system_does_not_push_it_out(e2e):  # noqa: F811
    user = get_user_model().objects.create_user("mallory", password="x-pass-123")
    team = Team.objects.create(competition=e2e["comp"], name="Aardvark", lead=user)
    Membership.objects.create(team=team, user=user, status=Membership.APPROVED)
    subs.submit(user, team, e2e["ds"], Upload("sysB.tgz", e2e_archive("BETA", "sysB",
                                                                       {"query1": [0]})),
                primary=True)
    queue.drain()
    built = e2e_items.build_from_primaries(e2e["camp"])
    keys = set(e2e["camp"].items.values_list("key", flat=True))
    assert not any(k.startswith(f"{team.pk}|") for k in keys)      # the impostor: not built
    assert "Beta" in built.skipped and "Aardvark" in built.skipped
    assert "Beta" in built.skipped["Aardvark"] and "Aardvark" in built.skipped["Beta"]
    assert "Alpha" in built.teams
