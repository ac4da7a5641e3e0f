"""JSON-over-HTTP service for one reference system (``shareval serve-system``).

Routes: ``GET /`` describes the API, ``GET /health`` answers ``{"status": "ok"}``,
and each system's ``POST`` routes take and return JSON. Bodies over
``MAX_BODY`` bytes are refused (413), malformed JSON or fields give 400 with
every problem listed, unknown routes 404. The server binds to 127.0.0.1 by
default; put a reverse proxy in front of it to expose it.
"""
from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .registry import RequestError, System

MAX_BODY = 20 * 1024 * 1024


def make_server(system: System, options: dict, host: str = "127.0.0.1", port: int = 8100,
                quiet: bool = False) -> ThreadingHTTPServer:
    routes = system.service(options)
    description = {"system": system.name, "description": system.description,
                   "routes": {"GET /": "this description", "GET /health": "liveness",
                              **{f"POST {path}": doc for path, (_, doc) in routes.items()}}}

    class Handler(BaseHTTPRequestHandler):
        server_version = "shareval-system"

        def _send(self, status: int, value) -> None:
            data = json.dumps(value, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/":
                self._send(200, description)
            elif self.path == "/health":
                self._send(200, {"status": "ok", "system": system.name})
            elif self.path in routes:
                self._send(405, {"error": f"use POST for {self.path}"})
            else:
                self._send(404, {"error": f"no route {self.path}"})

        def do_POST(self):
            if self.path not in routes:
                self._send(404, {"error": f"no route {self.path}; see GET /"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                self._send(413, {"error": f"body must be 0 to {MAX_BODY} bytes"})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except (ValueError, UnicodeDecodeError) as exc:
                self._send(400, {"error": f"body: not JSON ({exc})"})
                return
            if not isinstance(body, dict):
                self._send(400, {"error": "body: expected a JSON object"})
                return
            handler, _ = routes[self.path]
            try:
                self._send(200, handler(body))
            except RequestError as exc:
                self._send(400, {"error": str(exc)})
            except Exception as exc:          # never a traceback to the client
                print(f"shareval serve-system: {type(exc).__name__}: {exc}", file=sys.stderr)
                self._send(500, {"error": "internal error"})

        def log_message(self, fmt, *args):
            if not quiet:
                super().log_message(fmt, *args)

    return ThreadingHTTPServer((host, port), Handler)
