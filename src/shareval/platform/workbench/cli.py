"""``shareval server workbench …``: create an annotation project from a corpus,
assign units, add a curator (docs/workbench.md)."""
from __future__ import annotations

from pathlib import Path


def add_parser(cmds) -> None:
    wb = cmds.add_parser("workbench", help="annotation projects: create, assign, curate, "
                                           "export, import (docs/workbench.md)")
    sub = wb.add_subparsers(dest="wb", required=True)
    c = sub.add_parser("create", help="a project from a corpus")
    c.add_argument("competition")
    c.add_argument("slug")
    c.add_argument("--kind", required=True,
                   choices=["rcc-pairs", "rcc-publications", "svident", "kbp", "text"])
    c.add_argument("--title")
    c.add_argument("--organizer", required=True, help="an organizer of the competition")
    c.add_argument("--texts", help="RCC: folder of <publication_id>.json|.txt|.pdf")
    c.add_argument("--publications", help="RCC: comma-separated ids, or a file with one a line")
    c.add_argument("--catalog", help="RCC: the data set catalog JSON")
    c.add_argument("--citations", help="RCC: data_set_citations.json giving known pairs")
    c.add_argument("--families", help="CSV key,family (default: guessed from titles)")
    c.add_argument("--sentences", help="SV-Ident: a TSV of sentences")
    c.add_argument("--vocabulary", help="SV-Ident: the variable vocabulary TSV")
    c.add_argument("--documents", help="Re-DocRED-style documents JSON")
    c.add_argument("--limit", type=int, help="SV-Ident / Re-DocRED: the first N units")
    c.add_argument("--codebook", help="a markdown file shown to annotators")
    c.add_argument("--per-unit", type=int, default=1, help="annotators per unit")
    c.add_argument("--no-suggestions", action="store_true")
    a = sub.add_parser("assign", help="give the units not yet assigned to annotators")
    a.add_argument("competition")
    a.add_argument("slug")
    a.add_argument("users", nargs="+")
    a.add_argument("--per-unit", type=int)
    a.add_argument("--calibration", type=int, default=0,
                   help="the first N new units go to every annotator (agreement)")
    cu = sub.add_parser("curator", help="a curator for units two or more annotators finished")
    cu.add_argument("competition")
    cu.add_argument("slug")
    cu.add_argument("user")


def _project(args, console):
    from shareval.platform.workbench.models import Project
    pr = Project.objects.filter(competition__slug=args.competition, slug=args.slug).first()
    if pr is None:
        console.print(f"no annotation project {args.competition}/{args.slug}")
    return pr


def _users(names, console):
    from django.contrib.auth import get_user_model
    users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
    missing = [n for n in names if n not in users]
    if missing:
        console.print(f"no such user: {', '.join(missing)}")
        return None
    return [users[n] for n in names]


def _ids(value: str) -> list[str]:
    p = Path(value)
    if p.is_file():
        return [x.strip() for x in p.read_text(encoding="utf-8").split() if x.strip()]
    return [x.strip() for x in value.split(",") if x.strip()]


def run(args, console) -> int:
    from django.db import transaction

    from shareval.platform.competitions.models import Competition
    from shareval.platform.workbench import service, sources
    try:
        if args.wb == "create":
            comp = Competition.objects.filter(slug=args.competition).first()
            if comp is None:
                console.print(f"no competition {args.competition}")
                return 1
            who = _users([args.organizer], console)
            if who is None:
                return 1
            if not comp.is_organizer(who[0]):
                console.print(f"{args.organizer} is not an organizer of {args.competition}")
                return 1
            need = {"rcc-pairs": ("texts", "publications", "catalog"),
                    "rcc-publications": ("texts", "publications", "catalog"),
                    "svident": ("sentences",), "kbp": ("documents",), "text": ("documents",)}
            lacking = [f"--{n}" for n in need[args.kind] if not getattr(args, n)]
            if lacking:
                console.print(f"--kind {args.kind} needs {', '.join(lacking)}")
                return 1
            codebook = Path(args.codebook).read_text(encoding="utf-8") if args.codebook else ""
            with transaction.atomic():
                pr = service.create_project(comp, args.slug, args.title or args.slug, args.kind,
                                            who[0], codebook=codebook, per_unit=args.per_unit,
                                            suggestions=not args.no_suggestions)
                suggest = not args.no_suggestions
                if args.kind.startswith("rcc"):
                    n = sources.load_rcc(pr, Path(args.texts), _ids(args.publications),
                                         Path(args.catalog),
                                         Path(args.citations) if args.citations else None,
                                         Path(args.families) if args.families else None, suggest)
                elif args.kind == "svident":
                    n = sources.load_svident(pr, Path(args.sentences),
                                             Path(args.vocabulary) if args.vocabulary else None,
                                             args.limit, suggest)
                else:
                    n = sources.load_redocred(pr, Path(args.documents), args.limit)
            console.print(f"project {comp.slug}/{pr.slug}: {n['units']} units, "
                          f"{n['suggestions']} suggestions, {n['entries']} entries in "
                          f"{n['families']} families")
            console.print(f"its page: /c/{comp.slug}/workbench/{pr.slug}/")
            return 0
        pr = _project(args, console)
        if pr is None:
            return 1
        if args.wb == "assign":
            users = _users(args.users, console)
            if users is None:
                return 1
            n = service.assign(pr, users, args.per_unit, args.calibration)
            console.print(f"{n['assignments']} assignments on {n['units']} units "
                          f"({n['calibration']} shared for calibration)")
            return 0
        users = _users([args.user], console)
        if users is None:
            return 1
        console.print(f"{args.user} curates {service.add_curator(pr, users[0])} more units")
        return 0
    except (ValueError, OSError) as e:          # SourceError is a ValueError
        console.print(f"workbench {args.wb}: {e}")
        return 1
