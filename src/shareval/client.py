"""``shareval submit``: the REST client (standard library only, no Django).

Exit codes: 0 accepted (and with --wait, scored or scores hidden), 2 the file
failed validation (every problem printed) or is larger than the server
accepts, 3 quota reached (the next slot is printed), 1 anything else
(authentication, unknown competition, server down).
"""
from __future__ import annotations

import http.client
import json
import os
import re
import select
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

DEFAULT_SERVER = "http://127.0.0.1:8000"
CONTINUE_WAIT = 3.0     # seconds an upload waits for the server's go-ahead, then sends anyway


def _multipart(fields: dict[str, str], file_field: str, path: Path) -> tuple[bytes, str]:
    boundary = "shareval-" + uuid.uuid4().hex
    parts = []
    for k, v in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n'
                     f"{v}\r\n".encode())
    name = path.name.replace('"', "_")
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                 f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode())
    parts.append(path.read_bytes())
    parts.append(f"\r\n--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def request(server: str, method: str, path: str, token: str | None, body: bytes | None = None,
            content_type: str | None = None, timeout: float = 600) -> tuple[int, dict]:
    """One JSON request; ``token`` None sends it anonymously."""
    req = urllib.request.Request(server.rstrip("/") + path, data=body, method=method)
    if token:
        req.add_header("Authorization", f"Token {token}")
    req.add_header("Accept", "application/json")
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"error": raw.decode("utf-8", "replace")[:500] or e.reason}


class Unsent(OSError):
    """The server closed the connection while the body was being sent, without an answer."""


BUSY_TRIES = 4          # a server taking all the uploads it can (503) is asked again
BUSY_WAIT_MAX = 60.0    # seconds between two tries at most, whatever Retry-After says


def upload(server: str, path: str, token: str, body: bytes, content_type: str,
           timeout: float = 600, tries: int = BUSY_TRIES, sleep=time.sleep) -> tuple[int, dict]:
    """:func:`upload_once`, sent again after the server's Retry-After while it answers
    503 (busy with other uploads, as in the hour before a deadline)."""
    for attempt in range(tries):
        code, answer, retry_after = upload_once(server, path, token, body, content_type,
                                                timeout)
        if code != 503 or retry_after is None or attempt == tries - 1:
            return code, answer
        sleep(min(retry_after, BUSY_WAIT_MAX))
    return code, answer


def upload_once(server: str, path: str, token: str, body: bytes, content_type: str,
                timeout: float = 600) -> tuple[int, dict, float | None]:
    """POST an upload announced with ``Expect: 100-continue``: a server that refuses
    it from its headers (413, larger than it accepts) answers before the body is
    sent, so the refusal arrives instead of a broken pipe. A server that says
    nothing within CONTINUE_WAIT seconds gets the body anyway. Returns the status,
    the JSON answer and the Retry-After seconds (None without one)."""
    url = urllib.parse.urlsplit(server.rstrip("/") + path)
    conn = (http.client.HTTPSConnection if url.scheme == "https" else
            http.client.HTTPConnection)(url.hostname, url.port, timeout=timeout)
    try:
        conn.putrequest("POST", url.path + (f"?{url.query}" if url.query else ""))
        for k, v in (("Authorization", f"Token {token}"), ("Accept", "application/json"),
                     ("Content-Type", content_type), ("Content-Length", str(len(body))),
                     ("Expect", "100-continue")):
            conn.putheader(k, v)
        conn.endheaders()
        reader = conn.sock.makefile("rb")
        if not _answered_first(conn.sock, reader):
            try:
                conn.sock.sendall(body)
            except (BrokenPipeError, ConnectionResetError) as e:
                raise Unsent(f"the server closed the connection while {len(body) / 2**20:.1f} "
                             f"MB were being sent ({e.strerror})") from None
        return _answer(reader)
    finally:
        conn.close()


def _answered_first(sock, reader) -> bool:
    """Whether the server answered for good before the body (a refusal); False after
    its "100 Continue" or its silence."""
    if not select.select([sock], [], [], CONTINUE_WAIT)[0]:
        return False
    head = reader.peek(12)[:12]         # the start of a status line: "HTTP/1.1 100" or not
    return not (re.match(rb"HTTP/1\.\d 100", head) or b"HTTP/1.1 100".startswith(head))


class _Buffered:
    """What HTTPResponse reads from: the reader that already holds the answer's start."""

    def __init__(self, reader):
        self.reader = reader

    def makefile(self, *args, **kwargs):
        return self.reader


def _answer(reader) -> tuple[int, dict, float | None]:
    r = http.client.HTTPResponse(_Buffered(reader), method="POST")
    r.begin()                                   # skips an interim "100 Continue"
    raw = r.read()
    retry = r.getheader("Retry-After", "")
    retry_after = float(retry) if retry.strip().isdigit() else None
    try:
        return r.status, json.loads(raw or b"{}"), retry_after
    except ValueError:
        return r.status, {"error": raw.decode("utf-8", "replace")[:500] or r.reason}, retry_after


def too_large_line(code: int, body: dict, file: Path, what: str = "file") -> str:
    """A 413 in one line: what was sent, and the server's limit."""
    limit = body.get("limit_mb")
    if limit is None:
        m = re.search(r"(?:uploads: |limit is )(\d+) MB", str(body.get("error", "")))
        limit = m.group(1) if m else "?"
    return (f"refused ({code}): {file.name}: {what}: {file.stat().st_size / 2**20:.1f} MB, "
            f"more than the server accepts ({limit} MB per upload)")


def submit(server: str, token: str, path: Path, competition: str, phase: str, task: str,
           dataset: str | None = None, primary: bool = False, description: str = "",
           timeout: float = 600, factsheet: dict | None = None,
           contrastive: bool = False) -> tuple[int, dict]:
    fields = {"competition": competition, "phase": phase, "task": task,
              "primary": "true" if primary else "false", "description": description}
    if contrastive:                  # an explicit choice; a canonical file name may not contradict it
        fields["kind"] = "contrastive"
    if factsheet:
        fields["factsheet"] = json.dumps(factsheet, default=str)
    if dataset:
        fields["dataset"] = dataset
    body, ctype = _multipart(fields, "file", path)
    return upload(server, "/api/submissions/", token, body, ctype, timeout)


def submit_code(server: str, token: str, folder: Path, competition: str, phase: str,
                task: str, dataset: str | None = None, primary: bool = False,
                description: str = "", timeout: float = 600) -> tuple[int, dict]:
    """Pack ``folder`` (see docs/code-submissions.md) and upload it as a code submission."""
    import tempfile
    from .sandbox.bundle import pack
    fields = {"competition": competition, "phase": phase, "task": task,
              "primary": "true" if primary else "false", "description": description}
    if dataset:
        fields["dataset"] = dataset
    with tempfile.TemporaryDirectory(prefix="shareval-code-") as tmp:
        archive = Path(tmp) / (Path(folder).resolve().name + ".tgz")
        archive.write_bytes(pack(Path(folder)))
        body, ctype = _multipart(fields, "file", archive)
        code, answer = upload(server, "/api/code/", token, body, ctype, timeout)
        if code == 413:
            answer["refusal"] = too_large_line(code, answer, archive, "the packed bundle")
    return code, answer


def _code_command(args, console, server, token) -> int:
    try:
        code, body = submit_code(server, token, Path(args.code), args.competition, args.phase,
                                 args.task, args.dataset, args.primary, args.description)
    except ValueError as e:
        console.print(f"shareval submit --code: {e}", markup=False)
        return 2
    except Unsent as e:
        console.print(f"shareval submit: {e}; the bundle may be larger than the server "
                      f"accepts", markup=False)
        return 1
    except (urllib.error.URLError, OSError) as e:
        console.print(f"shareval submit: cannot reach {server}: {e}")
        return 1
    if code == 201:
        console.print(f"accepted: code submission {body['id']}; runs: " +
                      ", ".join(f"{r['stage']} {r['state']}" for r in body["runs"]))
        console.print(f"page: {server.rstrip('/')}{body['page']}", markup=False)
        return 0
    if code == 413:
        console.print(body["refusal"], markup=False)
        return 2
    console.print(f"refused ({code}): {body.get('error', body)}", markup=False)
    for p in body.get("problems", []):
        console.print(f"  {p}", markup=False)
    return {400: 2, 429: 3}.get(code, 1)


def submit_command(args, console) -> int:
    server = args.server or os.environ.get("SHAREVAL_SERVER", DEFAULT_SERVER)
    token = args.token or os.environ.get("SHAREVAL_TOKEN")
    if not token:
        console.print("shareval submit: no token: pass --token or set SHAREVAL_TOKEN "
                      "(create one on the server's API tokens page)")
        return 1
    if getattr(args, "code", None):
        return _code_command(args, console, server, token)
    if not args.file:
        console.print("shareval submit: give a FILE, or --code DIR for a code submission")
        return 2
    path = Path(args.file)
    if not path.is_file():
        console.print(f"{path}: file: does not exist")
        return 2
    try:
        sheet = read_factsheet(getattr(args, "factsheet", None), getattr(args, "method", None))
    except ValueError as e:
        console.print(str(e), markup=False)
        return 2
    try:
        code, body = submit(server, token, path, args.competition, args.phase, args.task,
                            args.dataset, args.primary, args.description, factsheet=sheet,
                            contrastive=getattr(args, "contrastive", False))
    except Unsent as e:
        console.print(f"shareval submit: {e}; the file may be larger than the server "
                      f"accepts", markup=False)
        return 1
    except (urllib.error.URLError, OSError) as e:
        console.print(f"shareval submit: cannot reach {server}: {e}")
        return 1
    if code == 413:
        console.print(too_large_line(code, body, path), markup=False)
        return 2
    if code == 201:
        console.print(f"accepted: submission {body['id']} ({body['kind']}), state {body['state']}")
        if args.wait:
            page = server.rstrip("/") + body.get("page", f"/s/{body['id']}/")
            code = _wait(server, token, body["id"], args.timeout, console)
            console.print(f"result page: {page}", markup=False)
            return code
        return 0
    console.print(f"refused ({code}): {body.get('error', body)}")
    for p in body.get("problems", []):
        console.print(f"  {p}", markup=False)
    if body.get("next_slot"):
        console.print(f"next slot opens {body['next_slot']}")
    return {400: 2, 429: 3}.get(code, 1)


def read_factsheet(path: str | None, method: str | None) -> dict:
    """The ``--factsheet`` file (a YAML or JSON mapping) with ``--method`` on top."""
    sheet: dict = {}
    if path:
        import yaml
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{path}: file: does not exist")
        try:
            sheet = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(sheet, dict):
            raise ValueError(f"{path}: expected a mapping of fact-sheet fields")
        sheet = {str(k): v for k, v in sheet.items()}
    if method:
        sheet["method"] = method
    return sheet


def _wait(server, token, sid, timeout, console) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        code, body = request(server, "GET", f"/api/submissions/{sid}/", token)
        if code != 200:
            console.print(f"shareval submit: {code} {body.get('error')}")
            return 1
        if body["state"] in ("scored", "failed"):
            score = body.get("score") or {}
            if body["state"] == "failed":
                console.print("scoring failed: " + body["events"][-1]["message"], markup=False)
                return 1
            if "hidden" in score:
                console.print(f"scored; {score['hidden']}")
            else:
                for k, v in score.get("metrics", {}).items():
                    # tab-separated, for scripts; Infinity/NaN arrive as strings
                    print(f"{k}\t{v:.4f}" if isinstance(v, (int, float)) else f"{k}\t{v}",
                          flush=True)
            return 0
        time.sleep(1)
    console.print(f"still {body['state']} after {timeout:.0f} s")
    return 1
