"""Sandbox benchmark (issue 25): start-up overhead, environment build, throughput.

    python bench/sandbox.py [--repeat 20] [--runs 20] [--workers 2] [--requirements "six tabulate"]

1. overhead: the same command (``python -c pass`` of an empty bundle venv) run
   ``--repeat`` times as a bare subprocess and in the sandbox (``sandbox.run``
   with its watchdog, the way code runs use it); median and p90 of each and the
   difference (target: at most 100 ms per run);
2. environment: a venv with ``--requirements`` installed inside the build
   sandbox from the machine's configured index, cold (fresh cache) and cached
   (target: cached environment ready in at most 2 s);
3. throughput: ``--runs`` bundle runs (each writes a small output file, about
   0.3 s of CPU) queued for ``--workers`` threads, each taking the next run from
   the queue as the code workers do; wall time and runs per second.

Runs as root (each run drops to a fresh pool uid) or as an unprivileged user. Prints a table
in Markdown.
"""
from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from shareval.sandbox import bwrap, envs  # noqa: E402
from shareval.sandbox.bundle import Manifest  # noqa: E402
from shareval.sandbox.run import Limits, run  # noqa: E402
from shareval.sandbox.workspace import Workspace  # noqa: E402


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def overhead(ws: Workspace, repeat: int) -> dict:
    bare, boxed = [], []
    env = envs.ensure_env(ws.root, "", user=ws.user, python=ws.python)
    py = str(env.path / "bin" / "python")           # the same venv, outside the sandbox
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([py, "-c", "pass"], check=True, env={})
        bare.append(time.perf_counter() - t)
        spec = bwrap.Spec(argv=["/env/bin/python", "-c", "pass"],
                          mounts=[bwrap.Mount(env.path, "/env")])
        t = time.perf_counter()
        r = run(spec, Limits(wall_seconds=30), user=ws.user, python=ws.python)
        boxed.append(time.perf_counter() - t)
        assert r.state == "ok", r
    return {"bare_ms": 1000 * statistics.median(bare), "sandbox_ms": 1000 * statistics.median(boxed),
            "bare_p90_ms": 1000 * pct(bare, 0.9), "sandbox_p90_ms": 1000 * pct(boxed, 0.9),
            "overhead_ms": 1000 * (statistics.median(boxed) - statistics.median(bare))}


def env_build(ws_root: Path, user, requirements: str) -> dict:
    ws = Workspace(ws_root, user)
    cold = envs.ensure_env(ws.root, requirements, user=user, python=ws.python)
    cached = envs.ensure_env(ws.root, requirements, user=user, python=ws.python)
    assert not cold.cached and cached.cached
    return {"cold_s": cold.seconds, "cached_s": cached.seconds}


PROGRAM = """
import sys, pathlib, hashlib
h = b"x"
for _ in range(60000):
    h = hashlib.sha256(h).digest()
pathlib.Path(sys.argv[2], "out.txt").write_text(h.hex())
"""


def throughput(ws: Workspace, runs: int, workers: int) -> dict:
    inp = ws.root / "bench-input"
    inp.mkdir(exist_ok=True)
    os.chmod(inp, 0o755)
    files = {"shareval-system.yaml": b"command: python main.py {input} {output}\n",
             "main.py": PROGRAM.encode()}
    manifest = Manifest(["python", "main.py", "{input}", "{output}"])
    q: queue.Queue = queue.Queue()
    for i in range(runs):
        q.put(i)
    states: list[str] = []

    def worker():
        while True:
            try:
                q.get_nowait()
            except queue.Empty:
                return
            code = ws.prepare_code(files)
            rep = ws.execute(code, manifest, inp, Limits(wall_seconds=60))
            states.append(rep.result.state)
            Workspace.remove(code.parent)
    t = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    return {"runs": runs, "workers": workers, "wall_s": wall, "per_s": runs / wall,
            "ok": states.count("ok")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--requirements", default="six tabulate")
    args = ap.parse_args()
    user = bwrap.sandbox_user("pool")
    why = bwrap.probe(user)
    if why:
        print(why)
        return 1
    base = Path(tempfile.mkdtemp(prefix="shareval-bench-sandbox-", dir="/tmp"))
    os.chmod(base, 0o711)
    ws = Workspace(base / "ws", user)
    o = overhead(ws, args.repeat)
    e = env_build(base / "envs-cold", user, "\n".join(args.requirements.split()))
    t = throughput(ws, args.runs, args.workers)
    try:
        from shareval.sandbox import cgroup
        cg = "a memory cgroup per run" if cgroup.parents() else "no cgroup"
    except ImportError:                     # a version of shareval without cgroups
        cg = "no cgroup"
    load = os.getloadavg()[0]
    print(f"sandbox benchmark ({os.cpu_count()} cores, load {load:.1f}, as "
          f"{'root -> a pool uid per run' if user else 'uid ' + str(os.getuid())}, {cg}, "
          f"bubblewrap {subprocess.run(['bwrap', '--version'], capture_output=True, text=True).stdout.split()[-1]})\n")
    print("| measure | value | target |\n|---|---|---|")
    print(f"| bare subprocess `python -c pass`, median (p90) | {o['bare_ms']:.0f} ms "
          f"({o['bare_p90_ms']:.0f} ms) | |")
    print(f"| same in the sandbox, median (p90) | {o['sandbox_ms']:.0f} ms "
          f"({o['sandbox_p90_ms']:.0f} ms) | |")
    print(f"| sandbox overhead per run (medians) | {o['overhead_ms']:.0f} ms | <= 100 ms |")
    print(f"| environment `{args.requirements}`, cold | {e['cold_s']:.2f} s | |")
    print(f"| same, cached | {e['cached_s'] * 1000:.1f} ms | <= 2 s |")
    print(f"| {t['runs']} queued runs on {t['workers']} workers | {t['wall_s']:.1f} s "
          f"({t['per_s']:.2f} runs/s, {t['ok']} ok) | |")
    import shutil
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
