"""``shareval submit`` asks a busy server again: a 503 with Retry-After (the
server's upload gate in a deadline rush) is retried after that many seconds, at
most BUSY_TRIES times; any other answer is returned at once."""
from __future__ import annotations

import http.server
import json
import threading

import pytest

from shareval import client


class _Server(http.server.ThreadingHTTPServer):
    answers: list[tuple[int, dict]]
    bodies: list[bytes]


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.send_response_only(100)
            self.end_headers()
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(body)
        code, headers = self.server.answers.pop(0)
        payload = json.dumps({"status": code}).encode()
        self.send_response(code)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.answers, srv.bodies = [], []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _send(srv, waits):
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    return client.upload(url, "/api/submissions/", "tok", b"the run", "text/plain",
                         timeout=10, sleep=waits.append)


def test_a_busy_server_is_asked_again_after_its_retry_after(server):
    server.answers = [(503, {"Retry-After": "7"}), (503, {"Retry-After": "600"}),
                      (201, {})]
    waits: list[float] = []
    code, answer = _send(server, waits)
    assert (code, answer) == (201, {"status": 201})
    assert waits == [7.0, client.BUSY_WAIT_MAX]         # the server's word, capped
    assert server.bodies == [b"the run"] * 3


def test_it_gives_up_after_the_last_try_with_the_busy_answer(server):
    server.answers = [(503, {"Retry-After": "1"})] * client.BUSY_TRIES
    waits: list[float] = []
    code, _ = _send(server, waits)
    assert code == 503 and len(waits) == client.BUSY_TRIES - 1
    assert len(server.bodies) == client.BUSY_TRIES


@pytest.mark.parametrize("answer", [(503, {}), (400, {"Retry-After": "1"}), (201, {})])
def test_other_answers_return_at_once(server, answer):
    server.answers = [answer]
    waits: list[float] = []
    code, _ = _send(server, waits)
    assert code == answer[0] and waits == [] and len(server.bodies) == 1
