"""Uploads leave the pages their threads (issue 41's deadline rush): at most
UPLOAD_THREADS uploads are taken at once, one more is answered 503 at once,
and pages are served whatever the uploads hold."""
from __future__ import annotations

import threading

from django.http import HttpResponse
from django.test import RequestFactory

from shareval.platform import uploadgate


def test_an_upload_beyond_the_upload_threads_is_answered_503_and_pages_still_pass(settings):
    settings.UPLOAD_THREADS = 1
    inside, release = threading.Event(), threading.Event()

    def view(request):
        if uploadgate.is_upload(request):
            inside.set()
            release.wait(30)
        return HttpResponse("ok")

    gate = uploadgate.UploadGate(view)
    rf = RequestFactory()
    upload = lambda: rf.post("/api/submissions/", {"f": "x"})            # noqa: E731
    first = {}
    t = threading.Thread(target=lambda: first.setdefault("r", gate(upload())))
    t.start()
    try:
        assert inside.wait(30)
        r = gate(upload())
        assert r.status_code == 503 and r["Retry-After"] == "60"
        assert b"1 uploads at once" in r.content
        assert gate(rf.get("/c/x/leaderboard/")).status_code == 200
        assert gate(rf.post("/accounts/login/", "a=1", content_type="application/"
                            "x-www-form-urlencoded")).status_code == 200    # not an upload
    finally:
        release.set()
        t.join(30)
    assert first["r"].status_code == 200
    assert gate(upload()).status_code == 200           # the slot is free again
    assert uploadgate._in_flight == 0


def test_the_server_runs_the_gate(client, settings, db):
    settings.UPLOAD_THREADS = 0
    r = client.post("/api/submissions/", {"competition": "x", "file": b"x"})
    assert r.status_code == 503
    assert client.get("/api/competitions/").status_code == 200


def test_a_page_form_gets_a_page_and_the_api_json(client, settings, db):
    settings.UPLOAD_THREADS = 0
    r = client.post("/c/demo/submit/", {"file": b"x"})
    assert r.status_code == 503 and r["Retry-After"] == "60"
    assert r["Content-Type"].startswith("text/html")
    assert b"taking as many uploads as it can" in r.content and b"Nothing was stored" in r.content
    r = client.post("/api/submissions/", {"file": b"x"})
    assert r.status_code == 503 and r.json()["error"].startswith("the server is taking 0")
