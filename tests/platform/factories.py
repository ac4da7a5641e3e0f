"""Builders for the server's tests, one place for all (plain functions, no fixtures):
a small bundle, a world built from it (organizer, two teams, a scored baseline),
uploads and runs, and live servers. Fixtures that wrap them are in conftest.py."""
from __future__ import annotations

import datetime as dt
import io
import os
import random
import re
import tarfile
from pathlib import Path

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
    (board, split, concurrent: the board and run options)."""
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


def submit(w: dict, user: str = "alice", team: str = "Team A", ds: str = "dev",
           correct: int = 15, *, name: str = "run.tsv", upload: Upload | None = None,
           at: dt.datetime | None = None, **kw):
    """``user`` (``"org"``: the organizer) of world ``w`` (``make_world`` or
    ``rules_world.build``) uploads ``upload`` for ``team`` to dataset ``ds`` through
    ``submissions.service.submit``: by default a run named ``name`` with ``correct`` of
    the 20 items right. ``at`` is the service's ``now``; ``kw`` goes to the service."""
    from shareval.platform.submissions import service
    if at is not None:
        kw["now"] = at
    who = w["org"] if user == "org" else w["users"][user]
    return service.submit(who, w["teams"][team], w["ds"][ds],
                          Upload(name, run_with_accuracy(correct)) if upload is None else upload,
                          **kw)


def tgz(files: dict[str, str]) -> bytes:
    """A .tar.gz of ``files`` (member name -> text)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def submit_code(w: dict, files: dict[str, str], **kw):
    """alice of a code world (tests/platform/coderuns/test_coderuns.py's ``code_world``)
    uploads a code bundle of ``files`` for her team; ``kw`` goes to the service."""
    from shareval.platform.coderuns import service
    return service.submit_code(w["alice"], w["team"], w["ds"], Upload("s.tgz", tgz(files)),
                               **kw)


def free_port_in(low: int, high: int) -> int:
    """The first free port in ``low``..``high`` (SHAREVAL_TEST_PORTS on a shared machine)."""
    import socket
    for port in range(low, high + 1):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {low}-{high}")


def live_stack(tmp_path: Path, *, users=(), emails: dict[str, str] | None = None,
               bundle=None, mail: bool = False, start: bool = False, env=None):
    """A live server in ``tmp_path/home`` (tests/platform/stack.py), set up in the order a
    test needs: ``users`` added (password ``<name>-pass-123``; ``org`` is an organizer,
    ``emails`` gives addresses), ``bundle`` (a Path, or a function of ``tmp_path``
    returning one) loaded by ``org`` and scored, then started if ``start``. ``mail``:
    mail is written to ``tmp_path/mail`` (file backend) and its links point here.
    ``env``: more server settings."""
    from .stack import Stack
    (tmp_path / "home").mkdir()
    extra = dict(env or {})
    if mail:
        extra.update(SHAREVAL_EMAIL="file", SHAREVAL_EMAIL_DIR=str(tmp_path / "mail"))
    s = Stack(tmp_path / "home", **extra)
    if mail:
        if os.environ.get("SHAREVAL_TEST_PORTS"):         # e.g. 8400-8499 on a shared machine
            s.port = free_port_in(*map(int, os.environ["SHAREVAL_TEST_PORTS"].split("-")))
            s.url = f"http://127.0.0.1:{s.port}"
        s.env["SHAREVAL_SITE_URL"] = s.url                # links in mail point here
    for user in users:
        s.cli("server", "add-user", user, "--password", f"{user}-pass-123",
              *(["--organizer"] if user == "org" else []),
              *(["--email", emails[user]] if user in (emails or {}) else []))
    if bundle is not None:
        root = bundle(tmp_path) if callable(bundle) else bundle
        s.cli("server", "load-bundle", root, "--organizer", "org", "--wait")
    if start:
        s.start()
    return s


# a demo competition built in the live server's own data folder, in one subprocess (the
# accounts test_browser.login knows, password <name>-pass-123, made in the same process)
_DEMO_BUILD = """
from pathlib import Path
from shareval.platform import setup
setup()
from shareval.platform.server import migrate
migrate()
from django.contrib.auth import get_user_model
from django.utils import timezone
from {module} import build_competition


class Console:
    def print(self, *a, **k):
        pass


users = {{}}
for name in {names!r}:
    users[name] = get_user_model().objects.create_user(name, password=name + "-pass-123",
                                                       is_staff=name == "organizer")
build_competition(Path({home!r}), {extra}users, timezone.now(), Console())
"""


def build_demo(stack, module: str, names, extra: tuple = (), timeout: int = 600) -> None:
    """``module.build_competition(home, *extra, users, now, console)`` for ``stack``."""
    import subprocess
    import sys
    code = _DEMO_BUILD.format(module=module, names=tuple(names), home=str(stack.home),
                              extra="".join(f"Path({str(x)!r}), " for x in extra))
    subprocess.run([sys.executable, "-c", code], env=stack.env, check=True, timeout=timeout)
