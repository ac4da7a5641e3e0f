"""Environment builds (sandbox/envs.py): wheels are downloaded on the host
(nothing built, no package code run), then installed inside the sandbox with
no network at all. A participant's requirement can never make the server
contact an address of their choosing, nor run code with the host's network."""
from __future__ import annotations

import base64
import os
import hashlib
import http.server
import io
import json
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from shareval.sandbox import envs

from .conftest import needs_sandbox

pytestmark = needs_sandbox


class Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):
        Counter.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture
def listener():
    """A web server on 127.0.0.1 that counts the requests it gets."""
    Counter.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1], Counter.hits
    srv.shutdown()


def wheel(folder: Path, name: str, code: str) -> Path:
    """A pure-Python wheel ``name-1.0`` whose module holds ``code``."""
    dist = f"{name}-1.0.dist-info"
    files = {f"{name}/__init__.py": code.encode(),
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = ""
    for n, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{n},sha256={digest},{len(data)}\n"
    files[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    return path


def sdist(folder: Path, name: str, setup_py: str) -> Path:
    path = folder / f"{name}-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for n, text in ((f"{name}-1.0/setup.py", setup_py),
                        (f"{name}-1.0/PKG-INFO",
                         f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")):
            data = text.encode()
            info = tarfile.TarInfo(n)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A find-links folder as the only package source of the download step."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    return links


def test_a_source_package_is_never_built(index, listener, workspace, tmp_path):
    port, hits = listener
    marker = tmp_path / "setup-py-ran"
    sdist(index, "evilpkg", f"""
import urllib.request
open({str(marker)!r}, "w").write("ran")
urllib.request.urlopen("http://127.0.0.1:{port}/from-setup-py")
""")
    with pytest.raises(envs.EnvError) as e:
        envs.ensure_env(workspace.root, "evilpkg\n", user=workspace.run_user(),
                        python=workspace.python)
    assert "only packages with a wheel" in e.value.message
    assert "No matching distribution found for evilpkg" in e.value.log
    assert not marker.exists() and hits == []


def test_a_wheel_installs_and_imports_in_the_sandbox(index, workspace):
    wheel(index, "goodpkg", "ANSWER = 42\n")
    built = envs.ensure_env(workspace.root, "goodpkg==1.0\n", user=workspace.run_user(),
                            python=workspace.python)
    assert not built.cached and "Successfully installed goodpkg-1.0" in built.log
    assert list((built.path / "lib").glob("python3*/site-packages/goodpkg/__init__.py"))
    again = envs.ensure_env(workspace.root, "goodpkg == 1.0   # same, written otherwise\n",
                            user=workspace.run_user(), python=workspace.python)
    assert again.cached and again.path == built.path


def test_the_install_step_has_no_network(index, listener, workspace, tmp_path, monkeypatch):
    """pip runs in the sandbox: stand a program in for it that tries the host's
    loopback and the outside, and records what it reached."""
    port, hits = listener
    wheel(index, "goodpkg", "")
    fake = workspace.root / "fakepip"          # where the pool uids can reach it
    fake.mkdir(mode=0o755)
    (fake / "__main__.py").write_text(f"""
import json, socket, urllib.request
got = {{}}
for name, url in (("loopback", "http://127.0.0.1:{port}/from-install"),
                  ("outside", "http://1.1.1.1/")):
    try:
        urllib.request.urlopen(url, timeout=3)
        got[name] = "reached"
    except Exception as e:
        got[name] = type(e).__name__
try:
    socket.getaddrinfo("pypi.org", 443)
    got["dns"] = "resolved"
except OSError as e:
    got["dns"] = "failed"
print(json.dumps(got))
""")
    (fake / "__main__.py").chmod(0o644)
    monkeypatch.setattr(envs, "pip_dir", lambda: fake)
    built = envs.ensure_env(workspace.root, "goodpkg\n", user=workspace.run_user(),
                            python=workspace.python)
    got = json.loads(built.log.strip().splitlines()[-1])
    assert got == {"loopback": "URLError", "outside": "URLError", "dns": "failed"}, got
    assert hits == []


def test_the_download_sees_none_of_the_servers_secrets(index, monkeypatch, workspace):
    monkeypatch.setenv("SHAREVAL_SECRET_KEY", "do-not-show")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret")
    seen = {}

    def fake_run(cmd, **kw):
        seen.update(kw["env"])
        raise envs.EnvError("stop here")
    monkeypatch.setattr(envs.subprocess, "run", fake_run)
    with pytest.raises(envs.EnvError):
        envs.download(Path("r.txt"), workspace.root, envs.BUILD_LIMITS)
    assert "SHAREVAL_SECRET_KEY" not in seen and "DATABASE_URL" not in seen
    assert seen["PIP_FIND_LINKS"] == str(index)


def test_a_requirement_naming_a_planted_archive_never_reaches_pip(index, workspace, tmp_path,
                                                                  monkeypatch):
    """The probe's chain: a run leaves an sdist in its output, another bundle's
    requirement names it by a path relative to pip's working folder
    (``x===/../../../runs/R/output/evil-1.0.tar.gz``), and pip builds it on the host.
    The reading refuses every such line, and pip works in an empty folder of its own."""
    marker = tmp_path / "setup-py-ran"
    planted = workspace.root / "runs" / "R" / "output"
    planted.mkdir(parents=True)
    sdist(planted, "evil", f"open({str(marker)!r}, 'w').write('ran')\n")
    for line in ("x===/../../../runs/R/output/evil-1.0.tar.gz",
                 "x===../../runs/R/output/evil-1.0.tar.gz", "x==1.0+evil.tar.gz"):
        with pytest.raises(envs.EnvError) as e:
            envs.ensure_env(workspace.root, line + "\n", user=workspace.run_user(),
                            python=workspace.python)
        assert e.value.message == "requirements.txt was refused", line
    assert not marker.exists()
    seen = {}

    def fake_run(cmd, **kw):
        seen["cwd"] = kw["cwd"]
        seen["empty"] = os.listdir(kw["cwd"]) == []
        raise envs.EnvError("stop here")
    monkeypatch.setattr(envs.subprocess, "run", fake_run)
    with pytest.raises(envs.EnvError):
        envs.download(Path("r.txt"), workspace.root, envs.BUILD_LIMITS)
    assert seen["empty"] and not Path(seen["cwd"]).is_relative_to(workspace.root)
