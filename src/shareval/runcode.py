"""``shareval run-code BUNDLE --input DIR --output DIR``: run a code bundle
locally in the server's sandbox, with its checks and limits, and say how it
ended. Exit 0 when the run is ``ok`` (and, with ``--task``, its output valid),
1 for any other state, 2 when the bundle or its requirements are refused."""
from __future__ import annotations

import sys
from pathlib import Path

from .formats.errors import InvalidInput

EXIT_OTHER, EXIT_REFUSED = 1, 2
TAIL_LINES = 20


def add_parser(sub) -> None:
    p = sub.add_parser("run-code", help="run a code bundle in the server's sandbox, with its "
                                        "limits, on a local input folder",
                       description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("bundle", help="a folder with shareval-system.yaml, or a .tgz/.zip of one")
    p.add_argument("--input", required=True, help="the folder the system reads ({input})")
    p.add_argument("--output", required=True,
                   help="where the files the system writes ({output}) are copied")
    p.add_argument("--limits", default="",
                   help="NAME=NUMBER,... over the server's defaults and the manifest's "
                        "requests, e.g. wall_seconds=60,memory_mb=512")
    p.add_argument("--task", help="validate the output as this task's submission (as the "
                                  "server's test run does)")
    p.add_argument("--reference", help="with --task: score the output against this reference")
    p.add_argument("--workspace", help="environments and run folders (default: "
                                       "$SHAREVAL_CODERUN_DIR, /var/lib/shareval-sandbox as "
                                       "root, else ~/.cache/shareval/coderuns)")


def command(args, console) -> int:
    from .sandbox.local import parse_limits, run_bundle
    try:
        limits = parse_limits(args.limits)
    except ValueError as e:
        sys.stderr.write(f"shareval: {e}\n")
        return EXIT_REFUSED
    check = (lambda path: _check_output(args, path)) if args.task else None
    try:
        local = run_bundle(Path(args.bundle), Path(args.input), Path(args.output), limits,
                           Path(args.workspace) if args.workspace else None, check)
    except InvalidInput as e:
        sys.stderr.write(e.render() + "\n")
        sys.stderr.write(f"{e.total} problem(s) found; the bundle was refused, nothing ran.\n")
        return EXIT_REFUSED
    rep, r = local.report, local.report.result
    state, message = r.state, r.message
    scored = None
    if local.checked:
        state, note, scored = local.checked
        message = message + note
    console.print(f"state: {state} ({message})")
    if rep.env_cached:
        console.print("environment: ready (cached)")
    elif r.state != "error":
        console.print(f"environment: built in {rep.env_seconds:.1f} s")
    entries = f"{r.output_entries} {'entry' if r.output_entries == 1 else 'entries'}"
    console.print(f"resources: wall {r.wall_seconds:.2f} s, CPU {r.cpu_seconds:.2f} s, "
                  f"peak memory {r.peak_mb:.1f} MB, output {r.output_bytes:,} bytes "
                  f"({entries})")
    console.print(f"limits: {_limits_text(local.limits)}")
    for f in local.output_files:
        console.print(f"output: {Path(args.output) / f}")
    if scored:
        console.print("score: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else
                                            f"{k} {v}" for k, v in scored.items()))
    for name, text in (("environment build", rep.env_log if not rep.env_cached else ""),
                       ("stdout", r.stdout), ("stderr", r.stderr)):
        lines = text.rstrip("\n").splitlines()
        if lines:
            console.print(f"--- {name} (last {min(len(lines), TAIL_LINES)} of "
                          f"{len(lines)} lines) ---", markup=False)
            console.print("\n".join(lines[-TAIL_LINES:]), markup=False, highlight=False)
    if rep.output and rep.output.notes:
        console.print("--- output ---\n" + "\n".join(rep.output.notes), markup=False)
    return 0 if state == "ok" else EXIT_OTHER


def _check_output(args, path: Path):
    """The test run's check: the output validated (and scored) as the task's
    submission. Returns (state, what to add to the message, metrics or None)."""
    from . import tasks
    task = tasks.get(args.task)
    try:
        task.validate(str(path), args.reference)
        if args.reference:
            return "ok", "; output valid", task.score(args.reference, str(path)).metrics
    except InvalidInput as e:
        text = e.render().replace(str(path), "output")
        return "invalid", "; the output did not pass validation:\n" + text, None
    return "ok", "; output valid", None


def _limits_text(lim) -> str:
    return (f"wall {lim.wall_seconds:g} s, CPU {lim.cpu_seconds} s, memory {lim.memory_mb} MB, "
            f"{lim.processes} processes, output {lim.output_mb} MB / {lim.output_files} files, "
            f"/tmp {lim.tmp_mb} MB, /dev/shm {lim.shm_mb} MB")
