"""The people every workbench test needs: the ``tiny`` competition of make_world (org
organizes it; alice and carol are in Team A) and two annotators, ann1 and ann2."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.platform.factories import make_world


@pytest.fixture
def people(db, tmp_path):
    w = make_world(tmp_path)
    w["comp"].organizers.add(w["org"])
    User = get_user_model()
    w["ann"] = [User.objects.create_user(n, password=f"{n}-pass-123") for n in ("ann1", "ann2")]
    w["tmp"] = tmp_path
    return w
