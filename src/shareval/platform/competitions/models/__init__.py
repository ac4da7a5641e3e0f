"""The competitions app's tables: competitions, tasks, phases, datasets, teams
and board marks (``core.py``); who may see, join and download them:
invitations, registrations, pages, agreements, data files, catalogs, phase
limits (``access.py``); run groups, which share quotas and one primary over
several datasets (``groups.py``)."""
from shareval.platform.competitions.models.core import (  # noqa: F401
    Competition, CompetitionTask, Phase, new_board_token, Dataset, PublicFile, Quota, Team,
    Membership, TeamEvent, BoardMark
)
from shareval.platform.competitions.models.access import (  # noqa: F401
    Invitation, Registration, Page, Agreement, DataFile, Download, PhaseLimit, Catalog,
    PhaseCatalog, Announcement, SettingChange
)
from shareval.platform.competitions.models.groups import (  # noqa: F401
    RunGroup, group_of, quotas_of, may_be_primary
)
