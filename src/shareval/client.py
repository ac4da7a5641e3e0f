"""``shareval submit``: the REST client (standard library only, no Django).

Exit codes: 0 accepted (and with --wait, scored or scores hidden), 2 the file
failed validation (every problem printed), 3 quota reached (the next slot is
printed), 1 anything else (authentication, unknown competition, server down).
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

DEFAULT_SERVER = "http://127.0.0.1:8000"


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


def submit(server: str, token: str, path: Path, competition: str, phase: str, task: str,
           dataset: str | None = None, primary: bool = False, description: str = "",
           timeout: float = 600, factsheet: dict | None = None) -> tuple[int, dict]:
    fields = {"competition": competition, "phase": phase, "task": task,
              "primary": "true" if primary else "false", "description": description}
    if factsheet:
        fields["factsheet"] = json.dumps(factsheet, default=str)
    if dataset:
        fields["dataset"] = dataset
    body, ctype = _multipart(fields, "file", path)
    return request(server, "POST", "/api/submissions/", token, body, ctype, timeout)


def submit_command(args, console) -> int:
    server = args.server or os.environ.get("SHAREVAL_SERVER", DEFAULT_SERVER)
    token = args.token or os.environ.get("SHAREVAL_TOKEN")
    if not token:
        console.print("shareval submit: no token: pass --token or set SHAREVAL_TOKEN "
                      "(create one on the server's API tokens page)")
        return 1
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
                            args.dataset, args.primary, args.description, factsheet=sheet)
    except (urllib.error.URLError, OSError) as e:
        console.print(f"shareval submit: cannot reach {server}: {e}")
        return 1
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
