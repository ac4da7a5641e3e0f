"""The upload limit on a real server: code bundles get it like uploaded files (a
bundle over the 5 MB every other route takes is accepted), and an upload over it
is refused before its body is sent: ``shareval submit`` says so in one line
naming the server's limit (exit 2), a browser gets a page in the site's style.
Screenshots go to SHAREVAL_SCREENSHOTS (default: the test's temporary folder)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from shareval.sandbox import bwrap

from .stack import Stack
from .test_browser import CHROMIUM, login
from .coderuns.test_browser_coderuns import blind_code_bundle

MANIFEST = "command: python main.py {input} {output}\n"


@pytest.fixture
def code_stacks(tmp_path):
    """``code_stacks(limit_mb=None)``: a server with a code dataset (tiny,
    eval/eval-code) and alice in Team A, with that upload limit (default: the
    server's own)."""
    work = Path(f"/tmp/shareval-coderuns-limits-{os.getpid()}")     # the sandbox reaches it
    work.mkdir(exist_ok=True)
    os.chmod(work, 0o711)                      # not left to the umask
    made = []

    def start(limit_mb=None):
        (tmp_path / "home").mkdir()
        s = Stack(tmp_path / "home", SHAREVAL_CODERUN_DIR=str(work / "ws"),
                  **({"SHAREVAL_MAX_UPLOAD_MB": str(limit_mb)} if limit_mb else {}))
        made.append(s)
        s.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
        s.cli("server", "load-bundle", blind_code_bundle(tmp_path / "bundle"),
              "--organizer", "org")
        s.cli("server", "add-user", "alice", "--password", "alice-pass-123",
              "--competition", "tiny", "--team", "Team A")
        s.token = s.cli("server", "token", "alice").stdout.strip()
        return s.start()
    yield start
    for s in made:
        s.stop()
    import shutil
    shutil.rmtree(work, ignore_errors=True)


def system(folder: Path, model_mb: float) -> Path:
    """A bundle folder with ``model_mb`` of incompressible model weights."""
    folder.mkdir()
    (folder / "shareval-system.yaml").write_text(MANIFEST)
    (folder / "main.py").write_text("print('hello')\n")
    (folder / "model.bin").write_bytes(os.urandom(int(model_mb * 2 ** 20)))
    return folder


def submit(s: Stack, *args):
    return s.cli("submit", "-c", "tiny", "--server", s.url, "--token", s.token, *args,
                 check=False)


@pytest.mark.skipif(bool(bwrap.probe(bwrap.sandbox_user("pool"))),
                    reason="the server refuses code without the sandbox")
def test_a_bundle_over_5_mb_is_accepted_from_the_command_line(code_stacks, tmp_path):
    r = submit(code_stacks(), "-p", "eval", "-t", "eval-code", "--code",
               system(tmp_path / "mysystem", 6))
    assert r.returncode == 0 and "accepted: code submission" in r.stdout, r.stdout + r.stderr


def test_an_upload_over_the_limit_is_refused_in_one_line_naming_it(code_stacks, tmp_path):
    code_stack = code_stacks(limit_mb=1)
    r = submit(code_stack, "-p", "eval", "-t", "eval-code", "--code",
               system(tmp_path / "mysystem", 3))
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "refused (413): mysystem.tgz: the packed bundle: 3.0 MB, more than the server "
           "accepts (1 MB per upload)\n", ""), r
    big = tmp_path / "run.tsv"
    big.write_bytes(b"item\tlabel\n" * 300_000)
    r = submit(code_stack, "-p", "dev", "-t", "dev", big)
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "refused (413): run.tsv: file: 3.1 MB, more than the server accepts (1 MB per "
           "upload)\n", ""), r


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium")
def test_a_browser_gets_the_refusal_as_a_page_of_the_site(code_stacks, tmp_path, browser):
    code_stack = code_stacks(limit_mb=1)
    shots = Path(os.environ.get("SHAREVAL_SCREENSHOTS", tmp_path))
    bundle = tmp_path / "mysystem.tgz"
    bundle.write_bytes(os.urandom(3 * 2 ** 20))
    page = login(browser, code_stack, "alice")
    violations = []
    page.on("console", lambda m: violations.append(m.text)
            if "Content Security Policy" in m.text else None)
    page.goto(code_stack.url + "/c/tiny/code/")
    page.set_input_files("#file", str(bundle))
    page.click("#submit-button")
    page.wait_for_selector("#error-title")
    page.screenshot(path=str(shots / "upload-too-large.png"), full_page=True)
    assert page.inner_text("#error-title") == "Too large to upload (413)"
    assert "at most 1 MB; this upload was 3.0 MB" in page.inner_text("#limit")
    header = page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
    assert header == "rgb(29, 53, 87)"               # the site's own style, not a bare page
    assert not violations, violations
