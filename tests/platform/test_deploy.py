"""Deployment: HTTPS mode (one variable), `check --deploy` clean in it, the
Content-Security-Policy and its nonces, static files served by WhiteNoise, and
a browser run under the policy (issue 20, finding 12; team approval, 13)."""
from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .factories import make_bundle, run_with_accuracy
from .stack import Stack

TEMPLATES = Path(__file__).resolve().parents[2] / "src/shareval/platform/templates/shareval"


def _django(home: Path, *args: str, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    e.update(SHAREVAL_HOME=str(home), DJANGO_SETTINGS_MODULE="shareval.platform.settings",
             SHAREVAL_ALLOWED_HOSTS="shareval.example.org", **env)
    return subprocess.run([sys.executable, *args], env=e, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_is_clean_in_https_mode_and_not_without_it(tmp_path):
    on = _django(tmp_path / "on", "-m", "django", "check", "--deploy", "--fail-level", "WARNING",
                 SHAREVAL_HTTPS="1")
    assert on.returncode == 0 and "no issues" in on.stdout, on.stdout + on.stderr
    off = _django(tmp_path / "off", "-m", "django", "check", "--deploy")
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in off.stderr, off.stderr        # what HTTPS mode turns on


def test_https_mode_settings_come_from_the_environment(tmp_path):
    code = ("from shareval.platform import setup; setup(); from django.conf import settings as s;"
            "import json; print(json.dumps({k: str(getattr(s, k, None)) for k in ("
            "'SESSION_COOKIE_SECURE','CSRF_COOKIE_SECURE','SECURE_SSL_REDIRECT',"
            "'SECURE_HSTS_SECONDS','SECURE_PROXY_SSL_HEADER','AXES_FAILURE_LIMIT',"
            "'AXES_COOLOFF_TIME','TRUSTED_PROXY')}))")
    r = _django(tmp_path, "-c", code, SHAREVAL_HTTPS="1", SHAREVAL_HSTS_SECONDS="600",
                SHAREVAL_LOGIN_FAILURE_LIMIT="8", SHAREVAL_LOGIN_COOLOFF_MINUTES="30")
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["SESSION_COOKIE_SECURE"] == s["CSRF_COOKIE_SECURE"] == s["SECURE_SSL_REDIRECT"] \
        == "True"
    assert s["SECURE_HSTS_SECONDS"] == "600"
    assert s["SECURE_PROXY_SSL_HEADER"] == "('HTTP_X_FORWARDED_PROTO', 'https')"
    assert s["AXES_FAILURE_LIMIT"] == "8" and s["AXES_COOLOFF_TIME"] == "0:30:00"
    assert s["TRUSTED_PROXY"] == "127.0.0.1"
    plain = json.loads(_django(tmp_path, "-c", code).stdout.strip().splitlines()[-1])
    assert plain["SESSION_COOKIE_SECURE"] == "False" and plain["SECURE_HSTS_SECONDS"] == "0"


def test_every_inline_script_and_style_carries_the_nonce():
    """The policy allows inline code only with the response's nonce: a template
    that adds a bare <script>, an inline handler or a style attribute fails here."""
    for t in TEMPLATES.glob("*.html"):
        text = t.read_text()
        for tag in re.findall(r"<(?:script|style)\b[^>]*>", text):
            assert 'nonce="{{ CSP_NONCE }}"' in tag or " src=" in tag, (t.name, tag)
        assert not re.search(r"\s(?:on[a-z]+|style)\s*=", text), t.name


def test_pages_send_the_policy_with_a_fresh_nonce(world, client):
    seen = set()
    for url in ("/", f"/c/{world['comp'].slug}/", "/accounts/login/"):
        r = client.get(url)
        policy = r["Content-Security-Policy"]
        nonce = re.search(r"script-src 'self' 'nonce-([^']+)'", policy).group(1)
        assert f"style-src 'self' 'nonce-{nonce}'" in policy
        assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
        body = r.content.decode()
        assert body.count(f'nonce="{nonce}"') == body.count("<script") + body.count("<style")
        seen.add(nonce)
    assert len(seen) == 3


def _get(port: int, path: str, headers: dict | None = None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    return r.status, dict(r.getheaders()), r.read()


@pytest.fixture
def https_stack(tmp_path):
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home", SHAREVAL_HTTPS="1")
    s.wait_up = lambda timeout=60: _until(lambda: _get(
        s.port, "/api/competitions/", {"X-Forwarded-Proto": "https"})[0] == 200)
    s.start()
    yield s
    s.stop()


def test_a_real_server_in_https_mode(https_stack):
    port, proxy = https_stack.port, {"X-Forwarded-Proto": "https"}
    status, headers, _ = _get(port, "/accounts/login/")
    assert status == 301 and headers["Location"].startswith("https://")
    status, headers, body = _get(port, "/accounts/login/", proxy)
    assert status == 200
    assert headers["Strict-Transport-Security"] == \
        "max-age=31536000; includeSubDomains; preload"
    assert "upgrade-insecure-requests" in headers["Content-Security-Policy"]
    cookie = headers["Set-Cookie"]
    assert "csrftoken=" in cookie and "Secure" in cookie
    # the admin's styles, collected at start and served by WhiteNoise
    status, headers, body = _get(port, "/static/admin/css/base.css", proxy)
    assert status == 200 and headers["Content-Type"].startswith("text/css") and b"body" in body


def _login(port: int, user: str, password: str, client_ip: str) -> int:
    """Log in through the 'proxy' (this test), which forwards the client's address."""
    origin = f"https://127.0.0.1:{port}"
    proxy = {"X-Forwarded-Proto": "https", "X-Forwarded-For": client_ip}
    status, headers, body = _get(port, "/accounts/login/", proxy)
    cookie = headers["Set-Cookie"].split(";")[0]
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("POST", "/accounts/login/", body=f"csrfmiddlewaretoken={token}&username={user}"
              f"&password={password}",
              headers={**proxy, "Cookie": cookie, "Origin": origin,
                       "Referer": origin + "/accounts/login/",
                       "Content-Type": "application/x-www-form-urlencoded"})
    r = c.getresponse()
    r.read()
    return r.status


def test_https_mode_locks_out_by_the_forwarded_client_address(https_stack):
    https_stack.cli("server", "add-user", "bob", "--password", "bob-pass-123")
    port = https_stack.port
    assert [_login(port, "bob", "nope", "203.0.113.5") for _ in range(5)] == [200] * 4 + [429]
    assert _login(port, "bob", "bob-pass-123", "203.0.113.5") == 429
    assert _login(port, "bob", "bob-pass-123", "203.0.113.6") == 302    # another client


def test_proxy_headers_from_an_untrusted_address_are_dropped(tmp_path):
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home", SHAREVAL_HTTPS="1", SHAREVAL_TRUSTED_PROXY="127.0.0.9")
    s.wait_up = lambda timeout=60: _until(lambda: _get(s.port, "/api/competitions/")[0] == 301)
    s.start()
    try:       # this client is not the proxy: its X-Forwarded-Proto is not believed
        status, headers, _ = _get(s.port, "/api/competitions/", {"X-Forwarded-Proto": "https"})
        assert status == 301 and headers["Location"].startswith("https://")
    finally:
        s.stop()


def _until(ok, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if ok():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("server did not come up")


def test_static_files_are_served_without_https_mode_too(tmp_path):
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home")
    try:
        s.start()
        status, headers, body = _get(s.port, "/static/admin/css/base.css")
        assert status == 200 and headers["Content-Type"].startswith("text/css")
        assert _get(s.port, "/static/admin/../../secret-key")[0] == 404
    finally:
        s.stop()


@pytest.mark.browser
def test_browser_admin_is_styled_no_policy_violations_and_team_approval(browser, tmp_path):
    from .test_browser import CHROMIUM, login
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}")
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home")
    root = make_bundle(tmp_path / "b", baseline=False)
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["team_approval"] = True
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    for user, org in (("org", True), ("alice", False)):
        s.cli("server", "add-user", user, "--password", f"{user}-pass-123",
              *(["--organizer"] if org else []))
    s.cli("server", "load-bundle", root, "--organizer", "org")
    s.start()
    try:
        violations = []

        def watch(page):
            page.on("console", lambda m: violations.append(m.text)
                    if "Content Security Policy" in m.text else None)
            return page
        org = watch(login(browser, s, "org"))
        org.goto(s.url + "/admin/")
        bg = org.eval_on_selector("#header", "e => getComputedStyle(e).backgroundColor")
        assert bg not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), bg   # styled, not bare
        org.screenshot(path=str(tmp_path / "admin.png"), full_page=True)
        alice = watch(login(browser, s, "alice"))
        alice.goto(s.url + "/c/tiny/team/")
        alice.fill("#team-create-name", "Team A")
        alice.click("#team-create")
        alice.wait_for_selector("#team-pending")
        alice.goto(s.url + "/c/tiny/")
        assert "waiting for the organizers" in alice.inner_text("#team-status")
        run = tmp_path / "run.tsv"
        run.write_text(run_with_accuracy(15))
        alice.goto(s.url + "/c/tiny/submit/")
        alice.set_input_files("#file", str(run))
        alice.click("#submit-button")
        assert "waiting for the organizers" in alice.inner_text("#submit-error")
        org.goto(s.url + "/c/tiny/organize/")
        org.click("#teams ~ table button:has-text('Approve')")
        org.wait_for_selector("text=Team A: approved")
        org.screenshot(path=str(tmp_path / "organize.png"), full_page=True)
        alice.goto(s.url + "/c/tiny/submit/")
        alice.set_input_files("#file", str(run))
        alice.click("#submit-button")
        alice.wait_for_selector("#state")
        assert not violations, violations
        if os.environ.get("SHAREVAL_SCREENSHOTS"):
            import shutil
            for n in ("admin.png", "organize.png"):
                shutil.copy(tmp_path / n, Path(os.environ["SHAREVAL_SCREENSHOTS"]) / n)
    finally:
        s.stop()


def test_the_data_folder_is_private_to_the_servers_user(tmp_path):
    """A real server's data folder: the database (and its WAL), hidden references,
    uploads and mail are readable by the server's user only, also in a folder an
    older version left open; only the code-run folder can be passed through."""
    from shareval.sandbox.bwrap import POOL, reachable
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    s = Stack(home, SHAREVAL_EMAIL="file")
    s.cli("server", "migrate")
    for p in [home, *home.rglob("*")]:              # as an older version left it
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    tokens = s.seed(make_bundle(tmp_path / "b", baseline=False), "tiny", tokens=("alice",))
    s.cli("server", "add-user", "alice", "--password", "alice-pass-123",
          "--email", "alice@lab.example")
    try:
        s.start()
        run = tmp_path / "run.tsv"
        run.write_text(run_with_accuracy(15))
        from shareval.client import submit
        code, body = submit(s.url, tokens["alice"], run, "tiny", "dev", "dev")
        assert code == 201, body
        s.wait_state(body["id"], tokens["alice"])
        _until(lambda: any((home / "mail").glob("*")), timeout=30)
    finally:
        s.stop()
    stranger = (POOL[0] + 7, POOL[0] + 7)            # a uid that owns nothing here
    harness = {p for p in home.glob("*.log")}        # this test's own files
    made = [p for p in home.rglob("*") if p not in harness and not p.is_symlink()]
    names = {p.relative_to(home).as_posix() for p in made}
    assert {"private", "public", "uploads", "mail"} <= names, names
    if not os.environ.get("SHAREVAL_TEST_DATABASE_URL"):        # the embedded database
        assert {"shareval.sqlite3", "shareval.sqlite3-wal"} <= names, names
    assert len([p for p in made if p.is_file()]) > 5
    open_ = {p.relative_to(home).as_posix(): oct(p.stat().st_mode & 0o777) for p in made
             if p.stat().st_mode & 0o077}
    assert open_ == {}, open_
    # the code-run folder: as root outside the data folder (/var/lib/shareval-sandbox),
    # which is then closed; else HOME/coderuns, passed through
    assert oct(home.stat().st_mode & 0o777) == ("0o700" if os.geteuid() == 0 else "0o711")
    assert not [p for p in made if reachable(p, stranger)]


def test_the_data_folder_is_passed_through_only_when_the_code_run_folder_lies_inside(tmp_path):
    from shareval.platform.home import lock
    home = tmp_path / "home"
    (home / "coderuns").mkdir(parents=True)
    (home / "private").mkdir()
    (home / "db").write_text("x")
    for p in [home, *home.iterdir()]:
        os.chmod(p, 0o755)
    lock(home, home / "coderuns")
    assert oct(home.stat().st_mode & 0o777) == "0o711"
    assert oct((home / "private").stat().st_mode & 0o777) == "0o700"
    assert oct((home / "db").stat().st_mode & 0o777) == "0o600"
    assert oct((home / "coderuns").stat().st_mode & 0o777) == "0o755"     # its own business
    lock(home, tmp_path / "elsewhere")
    assert oct(home.stat().st_mode & 0o777) == "0o700"
    assert oct((home / "coderuns").stat().st_mode & 0o777) == "0o700"
