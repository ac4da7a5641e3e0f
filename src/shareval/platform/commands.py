"""``shareval server ...``: migrate, run, worker, load-bundle, add-user, token,
send-reminders, official-tables, report, demo, rcc-study, e2e-judging, workbench.

Django is imported only when a server command runs, so the rest of the CLI
stays fast.
"""
from __future__ import annotations

import argparse
import os

from shareval.platform.server import check_port, migrate, serve


def add_server_parser(sub) -> None:
    sv = sub.add_parser("server", help="the competition server (Django): run it, load "
                                       "bundles, start workers, the demo")
    sv.add_argument("--home", default=None,
                    help="data folder (default: $SHAREVAL_HOME or ./shareval-home)")
    cmds = sv.add_subparsers(dest="server_command", required=True, metavar="SUBCOMMAND")
    cmds.add_parser("migrate", help="create or upgrade the database tables")
    run = cmds.add_parser("run", help="serve HTTP (waitress); scores in-process unless "
                                      "SHAREVAL_BROKER_URL is set")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8000)
    run.add_argument("--threads", type=int, default=8)
    run.add_argument("--no-worker", action="store_true",
                     help="do not score in this process (run `shareval server worker`)")
    w = cmds.add_parser("worker", help="a scoring worker: Celery when SHAREVAL_BROKER_URL is "
                                       "set, else a database-polling worker process")
    w.add_argument("--concurrency", type=int, default=1)
    w.add_argument("--code", action="store_true",
                   help="run code submissions (their own queue) instead of scoring")
    lb = cmds.add_parser("load-bundle", help="create or update a competition from a bundle "
                                             "folder or .tgz")
    lb.add_argument("path")
    lb.add_argument("--organizer", help="username made organizer (and baseline submitter)")
    lb.add_argument("--wait", action="store_true", help="score the baselines before returning")
    ex = cmds.add_parser("export-competition", help="write a competition (configuration, "
                         "teams, submissions, scores, judgments, files) to one .tgz")
    ex.add_argument("slug")
    ex.add_argument("--out", default=None, help="the archive (default: SLUG.tgz)")
    im = cmds.add_parser("import-competition", help="load an archive written by "
                                                    "export-competition into this server")
    im.add_argument("path")
    au = cmds.add_parser("add-user", help="create a user (or reset its password)")
    au.add_argument("username")
    au.add_argument("--password", required=True,
                    help="write it as --password=VALUE when it starts with a dash")
    au.add_argument("--email", help="the address mail goes to (password reset, notices); "
                                    "counted as verified")
    au.add_argument("--organizer", action="store_true", help="staff: may load bundles and "
                                                             "use the admin")
    au.add_argument("--competition", help="with --team: the team's competition")
    au.add_argument("--team", help="make the user an approved member of this team (created, "
                                   "with the user as lead, if it does not exist)")
    tk = cmds.add_parser("token", help="issue an API token for a user (printed once)")
    tk.add_argument("username")
    tk.add_argument("--name", default="cli")
    rm = cmds.add_parser("send-reminders", help="mail deadline reminders and scheduled "
                                                 "result releases (idempotent: run from cron)")
    rm.add_argument("--within-hours", type=float, default=72,
                    help="remind of phases closing within this many hours (default 72)")
    ot = cmds.add_parser("official-tables", help="write a phase's official tables (each "
                                                  "team's primary run per run group) as CSV, "
                                                  "LaTeX and DET plots")
    ot.add_argument("competition")
    ot.add_argument("--phase", required=True)
    ot.add_argument("--out", required=True, help="folder for <group>.csv, <group>.tex, "
                                                 "<group>-det.png and .pdf")
    rp = cmds.add_parser("report", help="every table and figure of an overview paper "
                                        "(results with intervals, significance across all "
                                        "teams, breakdowns, agreement, figures) as CSV, "
                                        "LaTeX, HTML, PNG and PDF")
    rp.add_argument("competition")
    rp.add_argument("--phase", default=None, help="one phase (default: every phase)")
    rp.add_argument("--runs", choices=("primary", "all"), default="primary",
                    help="each team's primary run (default) or every scored run")
    rp.add_argument("--out", required=True, help="folder for index.html, report.tex, "
                                                  "tables/ and figures/")
    rp.add_argument("--properties", action="append", default=[], metavar="PHASE/DATASET=CSV",
                    help="store document properties (doc id, then one column each, e.g. "
                         "vocabulary,year) for a dataset before building; repeatable")
    rp.add_argument("--rule", choices=("majority", "overlap", "judges"), default="majority",
                    help="how RCC research fields and methods rank the teams: agreement "
                         "with the majority of teams, mean overlap with the others, or the "
                         "judges' phase-1 rankings (Borda)")
    rp.add_argument("--samples", type=int, default=10_000,
                    help="resamples of the bootstrap and randomization tests")
    demo = cmds.add_parser("demo", help="demo competition from ../shared/data, demo accounts, "
                                        "scored baselines; then serve")
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--data", default=None)
    demo.add_argument("--no-serve", action="store_true", help="build and score, do not serve")
    from shareval.platform.annotation.cli import add_parser as add_rcc_study
    add_rcc_study(cmds)
    from shareval.platform.judging.cli import add_parser as add_e2e_judging
    add_e2e_judging(cmds)
    from shareval.platform.workbench.cli import add_parser as add_workbench
    add_workbench(cmds)


def _setup(args) -> None:
    from shareval.platform.home import lock, private_umask
    private_umask()              # before the data folder, the database or a file is made
    if args.home:
        os.environ["SHAREVAL_HOME"] = args.home
    from shareval.platform import setup
    setup()
    from django.conf import settings
    lock(settings.HOME, settings.CODERUN_DIR)


def _code_worker(args, console) -> int:
    """A code-run worker: Celery on CODERUN_QUEUE, else database polling."""
    from django.conf import settings
    if settings.BROKER_URL:
        from shareval.platform.celery_app import app
        app.worker_main(["worker", "--loglevel=INFO", f"--concurrency={args.concurrency}",
                         "--pool=prefork" if args.concurrency > 1 else "--pool=solo",
                         "-Q", settings.CODERUN_QUEUE, "-n", f"coderuns@%h-{os.getpid()}"])
        return 0
    from shareval.platform.coderuns.queue import worker_loop
    console.print("code-run worker (database polling); Ctrl-C to stop")
    worker_loop()
    return 0


def run_server_command(args: argparse.Namespace, console) -> int:
    _setup(args)
    from django.conf import settings
    c = args.server_command
    if c == "migrate":
        migrate(verbosity=1)
        return 0
    if c != "worker":
        migrate()           # every command works on a fresh data folder
    if c == "run":
        check_port(args.host, args.port)
        console.print(f"shareval server on http://{args.host}:{args.port}/ (data in "
                      f"{settings.HOME}; database {settings.DATABASES['default']['ENGINE']}; "
                      f"scoring {'celery ' + settings.BROKER_URL if settings.BROKER_URL else 'in-process' if not args.no_worker else 'by separate workers'})")
        serve(args.host, args.port, args.threads, worker=not args.no_worker)
        return 0
    if c == "worker":
        # before Celery or the small-file lane starts a thread or a process: on
        # Linux the nice value is per thread and inherited
        from shareval.platform.submissions.isolate import lower_priority
        lower_priority(settings.BACKGROUND_NICE)
    if c == "worker" and args.code:
        return _code_worker(args, console)
    if c == "worker":
        if settings.BROKER_URL:
            from shareval.platform.celery_app import app
            app.worker_main(["worker", "--loglevel=INFO", f"--concurrency={args.concurrency}",
                             "--pool=prefork" if args.concurrency > 1 else "--pool=solo",
                             "-Q", settings.SCORING_QUEUE, "-n", f"shareval@%h-{os.getpid()}"])
            return 0
        from shareval.platform.submissions.queue import start_small_lane, worker_loop
        console.print("scoring worker (database polling); Ctrl-C to stop")
        start_small_lane()
        worker_loop()
        return 0
    if c == "load-bundle":
        return _load_bundle(args, console)
    if c in ("export-competition", "import-competition"):
        return _archive(args, console)
    if c == "add-user":
        from django.contrib.auth import get_user_model
        u, _ = get_user_model().objects.get_or_create(username=args.username)
        u.set_password(args.password)
        u.is_staff = u.is_staff or args.organizer
        if args.email:
            u.email = args.email
        u.save()
        if args.email:          # an administrator's word: no link needed
            from shareval.platform.accounts.addresses import mark_verified
            from shareval.platform.accounts.models import VerifiedAddress
            mark_verified(u, VerifiedAddress.COMMAND_LINE)
        if args.team:
            from shareval.platform.competitions.models import Competition, Membership, Team
            comp = Competition.objects.filter(slug=args.competition or "").first()
            if comp is None:
                console.print("--team needs --competition with an existing slug")
                return 1
            team, _ = Team.objects.get_or_create(competition=comp, name=args.team,
                                                 defaults={"lead": u})
            Membership.objects.update_or_create(team=team, user=u,
                                                defaults={"status": Membership.APPROVED})
        console.print(f"user {u.username}{' (organizer)' if u.is_staff else ''} ready"
                      + (f", in team {args.team}" if args.team else ""))
        return 0
    if c == "token":
        from django.contrib.auth import get_user_model

        from shareval.platform.accounts.models import ApiToken
        u = get_user_model().objects.filter(username=args.username).first()
        if u is None:
            console.print(f"no user {args.username!r}")
            return 1
        _, key = ApiToken.issue(u, args.name)
        print(key)
        return 0
    if c == "workbench":
        from shareval.platform.workbench.cli import run as workbench
        return workbench(args, console)
    if c == "rcc-study":
        from shareval.platform.annotation.cli import run as rcc_study
        return rcc_study(args, console)
    if c == "e2e-judging":
        from shareval.platform.judging.cli import run as e2e_judging
        return e2e_judging(args, console)
    if c == "send-reminders":
        import datetime as dt

        from shareval.platform.competitions.reminders import send_due
        n = send_due(within=dt.timedelta(hours=args.within_hours))
        console.print(f"{n.pop('reminders')} deadline reminders, {n.pop('primaries', 0)} "
                      f"missing-primary reminders and {n.pop('releases')} release notices "
                      f"mailed")
        for line in n.pop("lines", []):
            console.print(line, markup=False)
        return 0
    if c == "official-tables":
        return _official_tables(args, console)
    if c == "report":
        from shareval.platform.reports.cli import run as report
        return report(args, console)
    if c == "demo":
        if not args.no_serve:
            check_port(args.host, args.port)
        from shareval.platform.demo import run_demo_server
        return run_demo_server(args, console)
    raise AssertionError(c)


def _official_tables(args, console) -> int:
    from pathlib import Path

    from rich.table import Table

    from shareval.platform.competitions.models import Phase
    from shareval.platform.leaderboards import official
    phase = Phase.objects.filter(competition__slug=args.competition, slug=args.phase) \
        .select_related("competition").first()
    if phase is None:
        console.print(f"no phase {args.phase!r} in competition {args.competition!r}")
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for t in official.tables(phase, detailed=True):
        caption = f"{phase.competition.title}, {phase.title}: {t.set.title} (primary runs)"
        (out / f"{t.set.slug}.csv").write_text(official.as_csv(t))
        (out / f"{t.set.slug}.tex").write_text(official.as_latex(t, caption))
        fig = official.det_figure(t)
        if fig is not None:
            for ext in ("png", "pdf"):
                fig.savefig(out / f"{t.set.slug}-det.{ext}", dpi=110)
        shown = Table(title=caption)
        for name in ["Rank", "Team", "Run"] + [label for _, label in t.columns]:
            shown.add_column(name)
        for r in t.rows:
            shown.add_row(str(r["rank"] or "-"), r["team"], r["run"],
                          *("-" if v is None else f"{v:.4f}" for v in r["cells"]))
        console.print(shown)
        if t.without_primary:
            console.print(f"without a primary run: {', '.join(t.without_primary)}")
    console.print(f"written to {out}")
    return 0


def _load_bundle(args, console) -> int:
    from pathlib import Path

    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle, load_bundle_archive
    migrate()
    org = None
    if args.organizer:
        org = get_user_model().objects.filter(username=args.organizer).first()
        if org is None:
            console.print(f"no user {args.organizer!r}: create it with `shareval server "
                          f"add-user {args.organizer} --password … --organizer`")
            return 1
    p = Path(args.path)
    comp, made = (load_bundle(p, org) if p.is_dir() else load_bundle_archive(p, org))
    console.print(f"competition {comp.slug}: {comp.phases.count()} phases, "
                  f"{comp.tasks.count()} tasks, {len(made)} baseline submissions queued")
    if args.wait and made:
        from shareval.platform.submissions.queue import drain
        drain()
    return 0


def _archive(args, console) -> int:
    from pathlib import Path

    from shareval.formats.errors import InvalidInput

    from shareval.platform.bundles.archive import export_competition, import_competition
    from shareval.platform.competitions.models import Competition
    if args.server_command == "export-competition":
        comp = Competition.objects.filter(slug=args.slug).first()
        if comp is None:
            console.print(f"no competition {args.slug!r}")
            return 1
        out = Path(args.out or f"{comp.slug}.tgz")
        n = export_competition(comp, out)
        console.print(f"{out}: competition {comp.slug}, {n} files", markup=False)
        return 0
    try:
        comp, created = import_competition(Path(args.path))
    except InvalidInput as e:
        console.print(e.render(), markup=False)
        return 2
    from shareval.platform.submissions.models import Submission
    n = Submission.objects.filter(dataset__phase__competition=comp).count()
    console.print(f"competition {comp.slug} imported: {comp.phases.count()} phases, "
                  f"{comp.teams.count()} teams, {n} submissions"
                  + (f"; users created without a password: {', '.join(created)}"
                     if created else ""), markup=False)
    return 0

