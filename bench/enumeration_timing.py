"""What answer times tell an outsider: a private competition's slug against a
missing one (page and API), and a password reset for a known address against an
unknown one. Against a real server (``shareval server run``, embedded SQLite) on
127.0.0.1, signed in as an account that is not invited (the competition is
invited by ``@partner.example``); the two requests of a pair alternate, so drift
hits both alike.

    PYTHONPATH=src python bench/enumeration_timing.py [--requests 300] [--port 8150]

Prints the median and 90th percentile per request kind, in milliseconds: the
reset's own answer (the redirect, not followed) and the request right after it
(the "check your mail" page), which the server's work after the answer could
slow. The same script run with another PYTHONPATH (an older checkout) gives the
before.
"""
from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from _timing import pct

HIDDEN, MISSING = "hidden-task", "absent-task"


def seed(home: Path) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from shareval.platform.competitions.models.access import Invitation
    from shareval.platform.competitions.models import Competition
    call_command("migrate", interactive=False, verbosity=0)
    User = get_user_model()
    User.objects.create_user("una", email="una@elsewhere.example", password="Una-pass-4711")
    User.objects.create_user("kim", email="kim@lab.example", password="Kim-pass-4711")
    comp = Competition.objects.create(slug=HIDDEN, title="Hidden task",
                                      visibility=Competition.PRIVATE)
    Invitation.objects.create(competition=comp, kind=Invitation.DOMAIN, value="partner.example")


class Stay(urllib.request.HTTPRedirectHandler):
    """Time the answer itself, not the page it redirects to."""

    def redirect_request(self, *args, **kwargs):
        return None


def opener():
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), Stay())


def form_post(browser, url: str, fields: dict) -> float:
    page = browser.open(url).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
    start = time.perf_counter()
    try:
        browser.open(url, data).read()
    except urllib.error.HTTPError as e:       # the 302 (not followed)
        e.read()
    return time.perf_counter() - start


def timed_get(browser, url: str) -> float:
    start = time.perf_counter()
    try:
        browser.open(url).read()
    except urllib.error.HTTPError as e:       # the 404s are the point
        e.read()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=300, help="requests of each kind")
    ap.add_argument("--port", type=int, default=8150)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="shareval-enum-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHAREVAL_")}
    env.update(SHAREVAL_HOME=str(home), SHAREVAL_SECRET_KEY="bench-enumeration",
               SHAREVAL_LOG="WARNING", SHAREVAL_EMAIL="file",
               SHAREVAL_EMAIL_DIR=str(home / "mail"),
               # the limits would refuse most resets here: time the work, not refusals
               SHAREVAL_MAIL_REQUESTS_PER_ADDRESS="100000",
               SHAREVAL_MAIL_REQUESTS_PER_CLIENT="100000")
    os.environ.update(env)
    from shareval.platform import setup
    setup()
    seed(home)
    url = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen([sys.executable, "-m", "shareval.cli", "server", "run",
                               "--port", str(args.port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        una = opener()
        form_post(una, url + "/accounts/login/", {"username": "una",
                                                  "password": "Una-pass-4711"})
        assert "una" in una.open(url + "/").read().decode(), "log-in failed"
        times: dict[str, list[float]] = {}
        pairs = [("page", "/c/{}/", HIDDEN, MISSING),
                 ("api", "/api/competitions/{}/", HIDDEN, MISSING)]
        for k in range(args.requests):
            for kind, path, a, b in pairs:
                for slug in ((a, b) if k % 2 else (b, a)):
                    times.setdefault(f"{kind} {slug}", []).append(
                        timed_get(una, url + path.format(slug)))
            anon = opener()
            for address in (("kim@lab.example", "nobody@lab.example") if k % 2
                            else ("nobody@lab.example", "kim@lab.example")):
                label = "known" if address.startswith("kim") else "unknown"
                times.setdefault(f"reset {label}", []).append(
                    form_post(anon, url + "/accounts/password-reset/", {"email": address}))
                # the server's work after the answer might slow the next request
                times.setdefault(f"next after {label}", []).append(
                    timed_get(anon, url + "/accounts/password-reset/sent/"))
        print(f"{'request':<22}{'median ms':>10}{'p90 ms':>9}  ({args.requests} each)")
        for label, xs in times.items():
            print(f"{label:<22}{statistics.median(xs) * 1000:>10.2f}{pct(xs, 0.9) * 1000:>9.2f}")
    finally:
        server.terminate()
        server.wait(15)


if __name__ == "__main__":
    main()
