"""The server's start: migrate the database, collect static files, serve with
waitress (and the in-process workers). ``shareval server`` (``commands.py``)
and the demo (``demo.py``) both call these, so neither imports the other."""
from __future__ import annotations

def migrate(verbosity: int = 0) -> None:
    from django.core.management import call_command
    call_command("migrate", interactive=False, verbosity=verbosity)


def collect_static() -> None:
    """Copy the admin's and apps' static files into HOME/static for WhiteNoise."""
    from django.core.management import call_command
    call_command("collectstatic", interactive=False, verbosity=0)


def proxy_options() -> dict:
    """HTTPS mode: believe the scheme and client address sent by the proxy, and only it."""
    from django.conf import settings
    if not settings.HTTPS:
        return {}
    return {"trusted_proxy": settings.TRUSTED_PROXY, "trusted_proxy_count": 1,
            "trusted_proxy_headers": {"x-forwarded-proto", "x-forwarded-for"}}


def check_port(host: str, port: int) -> None:
    """Fail with one plain line (exit 1) when the address is taken, before any slow work."""
    import socket
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)     # as waitress does
        try:
            s.bind((host, port))
        except OSError as e:
            raise SystemExit(f"shareval server: cannot listen on {host}:{port}: {e.strerror}; "
                             f"stop what uses it or pick another port (--port N; "
                             f"make demo PORT=N)") from None


def serve(host: str, port: int, threads: int = 8, worker: bool = True) -> None:
    import tempfile

    check_port(host, port)
    collect_static()      # before the WSGI app exists: WhiteNoise indexes the folder then

    from django.conf import settings

    from shareval.platform.bodylimit import MARGIN, waitress_server
    from shareval.platform.submissions.queue import start_inprocess_worker
    from shareval.platform.wsgi import application
    # request bodies and uploads are spooled inside the data folder, not the
    # system's temporary folder
    tmp = settings.HOME / "tmp"
    tmp.mkdir(mode=0o700, exist_ok=True)
    tempfile.tempdir = str(tmp)
    if worker:
        start_inprocess_worker()
        from shareval.platform.coderuns.queue import start_inprocess_workers
        start_inprocess_workers()
    # uploads waiting for validation hold threads of their own (uploadgate.py)
    waitress_server(application, host=host, port=port,
                    threads=threads + settings.UPLOAD_THREADS, ident="shareval",
                    max_request_body_size=settings.MAX_UPLOAD_BYTES + MARGIN,
                    **proxy_options()).run()
