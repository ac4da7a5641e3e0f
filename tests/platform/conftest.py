"""Fixtures for the server: small bundles built here, users per role, uploads."""
from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

import pytest
import yaml

ITEMS = [f"i{k:02d}" for k in range(20)]
LABELS = ["pos", "neg", "neu"]


def gold() -> dict[str, str]:
    rng = random.Random(7)
    return {i: rng.choice(LABELS) for i in ITEMS}


def labels_tsv(labels: dict[str, str]) -> str:
    return "item\tlabel\n" + "".join(f"{i}\t{l}\n" for i, l in labels.items())


def shows_number(body: str, number: str) -> bool:
    """Whether the decimal ``number`` appears as a whole number, trailing zeros allowed
    ("0.8500" shows 0.85), but not as digits inside another one: a timestamp such as
    ``02:30:10.909123`` must not count as showing 0.9091."""
    return re.search(r"(?<![\d.])" + re.escape(number) + r"0*(?!\d)", body) is not None


def run_with_accuracy(correct: int) -> str:
    """A submission with exactly ``correct`` of the 20 items right."""
    g = gold()
    out = {}
    for k, i in enumerate(ITEMS):
        out[i] = g[i] if k < correct else LABELS[(LABELS.index(g[i]) + 1) % 3]
    return labels_tsv(out)


def make_bundle(root: Path, slug: str = "tiny", *, blind_eval: bool = True,
                dev_quota: int = 200, eval_quota: int = 5, now=None, baseline: bool = True,
                window: str = "week", extra: dict | None = None,
                options: dict[str, dict] | None = None) -> Path:
    """``extra``: more top-level bundle keys; ``options``: more keys per dataset slug
    (board, split, concurrent: runs24)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    root.mkdir(parents=True, exist_ok=True)
    (root / "gold-dev.tsv").write_text(labels_tsv(gold()))
    (root / "gold-eval.tsv").write_text(labels_tsv(gold()))
    (root / "items.txt").write_text("\n".join(ITEMS) + "\n")
    (root / "baseline.tsv").write_text(run_with_accuracy(10))
    iso = lambda t: t.replace(microsecond=0).isoformat()        # noqa: E731
    b = {"slug": slug, "title": f"Tiny {slug}", "time_zone": "Europe/Berlin",
         "tasks": [{"slug": "labels", "task": "classification"}],
         "phases": [
             {"slug": "dev", "title": "Development", "start": iso(now - dt.timedelta(days=3)),
              "end": iso(now + dt.timedelta(days=30)), "leaderboard": "public",
              "datasets": [{"slug": "dev", "task": "labels", "reference": "gold-dev.tsv",
                            "public": ["items.txt"],
                            "quotas": [{"limit": dev_quota, "window": window}]}]},
             {"slug": "eval", "title": "Evaluation", "start": iso(now - dt.timedelta(days=1)),
              "end": iso(now + dt.timedelta(days=7)), "blind": blind_eval,
              "leaderboard": "public",
              "datasets": [{"slug": "eval", "task": "labels", "reference": "gold-eval.tsv",
                            "quotas": [{"limit": eval_quota, "window": "phase"}]}]}]}
    b.update(extra or {})
    for ph in b["phases"]:
        for d in ph["datasets"]:
            d.update((options or {}).get(d["slug"], {}))
    if baseline:
        b["baselines"] = [{"team": "Baseline", "phase": "dev", "dataset": "dev",
                           "file": "baseline.tsv"}]
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


class Upload:
    """Minimal stand-in for an uploaded file (name + chunks)."""

    def __init__(self, name: str, data: bytes | str):
        self.name = name
        self.data = data.encode() if isinstance(data, str) else data

    def chunks(self):
        yield self.data

    def as_file(self):
        """The same file for Django's test client (a multipart upload)."""
        from django.core.files.uploadedfile import SimpleUploadedFile
        return SimpleUploadedFile(self.name, self.data)


@pytest.fixture
def world(db, tmp_path):
    """A competition with an organizer, two teams (A: alice+carol, B: bob) and a baseline."""
    return make_world(tmp_path)


def make_world(tmp_path, **bundle_kw) -> dict:
    """The ``world`` fixture's competition, with ``make_bundle`` options (needs ``db``)."""
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.queue import drain
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123")
             for n in ("alice", "bob", "carol", "dave")}
    comp, made = load_bundle(make_bundle(tmp_path / "bundle", **bundle_kw), org)
    teams = {}
    for name, lead, extra in (("Team A", "alice", ["carol"]), ("Team B", "bob", [])):
        t = Team.objects.create(competition=comp, name=name, lead=users[lead])
        Membership.objects.create(team=t, user=users[lead], status=Membership.APPROVED)
        for e in extra:
            Membership.objects.create(team=t, user=users[e], status=Membership.APPROVED)
        teams[name] = t
    drain()
    ds = {d.slug: d for d in comp.phases.get(slug="dev").datasets.all()}
    ds.update({d.slug: d for d in comp.phases.get(slug="eval").datasets.all()})
    return {"comp": comp, "org": org, "users": users, "teams": teams, "ds": ds,
            "baselines": made}


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
def stack(tmp_path):
    """A live server in its own folder, not started and empty (modules that need one
    seeded at start define their own ``stack``)."""
    from .stack import Stack
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home")
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
    s.cli("server", "demo", "--no-serve", "--data", shared_data)
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
