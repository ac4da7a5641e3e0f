"""Fixtures for the server's tests; the builders they use are in factories.py.

Layout: tests/platform mirrors src/shareval/platform. A test goes in the folder of
the app whose code it tests (accounts, access, competitions, bundles, submissions,
leaderboards, coderuns, judging, annotation, notifications), whatever drives it:
the service in this process, the test client, a live server (``test_live_*``) or
a browser (``test_browser_*``). Tests of the whole site (routes and roles,
deployment, settings, the demo, words on every page, README-like replays) stay
here at the top, beside the modules they share: factories.py (builders),
stack.py (a live server), rules_world.py (a world written straight to the
database) and test_browser.py (Playwright helpers).
"""
from __future__ import annotations

import pytest

from .factories import live_stack, make_world


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "stack(**kw): how the ``stack`` fixture sets its live server up "
        "(factories.live_stack's keywords: users, emails, bundle, mail, start, env)")


@pytest.fixture
def world(db, tmp_path):
    """A competition with an organizer, two teams (A: alice+carol, B: bob) and a baseline."""
    return make_world(tmp_path)


@pytest.fixture
def browser():
    """Headless Debian chromium driven by Playwright (browser tests skip without it)."""
    from playwright.sync_api import sync_playwright

    from .test_browser import ARGS, CHROMIUM
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def stacks(tmp_path):
    """``stacks(name)``: a live server in its own folder; every one is stopped after."""
    from .stack import Stack
    made = []

    def new(name):
        (tmp_path / name).mkdir()
        made.append(Stack(tmp_path / name))
        return made[-1]
    yield new
    for s in made:
        s.stop()


@pytest.fixture
def stack(request, tmp_path):
    """A live server in its own folder, stopped after the test. Bare (not started, no
    users) unless the test is marked ``@pytest.mark.stack(...)`` with
    ``factories.live_stack``'s keywords, e.g. users, a bundle, and ``start=True``."""
    mark = request.node.get_closest_marker("stack")
    s = live_stack(tmp_path, **(mark.kwargs if mark else {}))
    yield s
    s.stop()


@pytest.fixture
def demo(tmp_path, shared_data, demo_detection_model):
    """``make demo``'s competition on the shared data, served: (stack, demo accounts). Its
    held-out detection model is the session's, put where the demo keeps it."""
    import json
    import shutil

    from .stack import Stack
    (tmp_path / "home").mkdir()
    shutil.copyfile(demo_detection_model, tmp_path / "home" / demo_detection_model.name)
    s = Stack(tmp_path / "home")
    # the demo (its annotation projects run the RCC linker) takes minutes on a busy machine
    s.cli("server", "demo", "--no-serve", "--data", shared_data, timeout=1200)
    s.start()
    yield s, json.loads((tmp_path / "home" / "demo-accounts.json").read_text())
    s.stop()


@pytest.fixture(autouse=True)
def background_jobs_stay_in_their_test():
    """Jobs a test queued for after the response (password-reset mail, run by
    ``background.run_pending()`` in the test) never run in the next test."""
    yield
    from shareval.platform.accounts import background
    background.clear()
