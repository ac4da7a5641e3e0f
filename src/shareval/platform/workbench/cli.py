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
    ex = sub.add_parser("export", help="the gold (or one annotator's work) in a format")
    ex.add_argument("competition")
    ex.add_argument("slug")
    ex.add_argument("format", choices=["rcc", "svident", "redocred", "xmi", "webanno", "brat"])
    ex.add_argument("--out", required=True, help="a folder to write into")
    ex.add_argument("--who", help="this annotator's work instead of the gold")
    im = sub.add_parser("import", help="annotations from a file, as one user's")
    im.add_argument("competition")
    im.add_argument("slug")
    im.add_argument("format", choices=["rcc", "svident", "redocred", "xmi", "webanno", "brat"])
    im.add_argument("file")
    im.add_argument("--as", dest="user", required=True, help="whose annotations they become")
    im.add_argument("--create-units", action="store_true",
                    help="make a unit for each document the project lacks")
    ds = sub.add_parser("dataset", help="a new dataset whose reference is the gold")
    ds.add_argument("competition")
    ds.add_argument("slug")
    ds.add_argument("phase")
    ds.add_argument("dataset")
    ds.add_argument("--task", help="the competition's task (default: the kind's own)")
    ds.add_argument("--organizer", required=True)


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
    from shareval.formats.errors import InvalidInput
    from shareval.platform.workbench import service, sources, transfer
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
        if args.wb == "export":
            return _export(pr, args, console)
        users = _users([args.organizer if args.wb == "dataset" else args.user], console)
        if users is None:
            return 1
        if args.wb == "import":
            return _import(pr, args, users[0], console)
        if args.wb == "dataset":
            ds, rep = transfer.make_dataset(pr, args.phase, args.dataset, users[0], args.task)
            console.print(f"dataset {ds} ({ds.task.task_name}): the gold of {rep.units} units")
            for line in rep.lines():
                console.print(f"  left out {line}", markup=False)
            return 0
        console.print(f"{args.user} curates {service.add_curator(pr, users[0])} more units")
        return 0
    except InvalidInput as e:
        for p in e.problems[:20]:
            console.print(str(p), markup=False)
        return 1
    except (ValueError, OSError) as e:          # SourceError, ImportRefused are ValueErrors
        console.print(f"workbench {args.wb}: {e}")
        return 1


def _export(pr, args, console) -> int:
    from django.contrib.auth import get_user_model

    from shareval.platform.workbench import exports, transfer
    if args.who:
        user = get_user_model().objects.filter(username=args.who).first()
        if user is None:
            console.print(f"no such user: {args.who}")
            return 1
        docs = transfer.annotator_docs(pr, user)
        rep = None
    else:
        docs, rep = transfer.gold_docs(pr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = exports.write_format(pr, docs, args.format, out / f"{pr.slug}-{args.format}")
    console.print(f"wrote {path} ({len(docs)} units)", markup=False)
    for line in rep.lines() if rep else []:
        console.print(f"  left out {line}", markup=False)
    return 0


def _import(pr, args, user, console) -> int:
    from shareval.platform.workbench import exports, transfer
    docs = exports.read_format(pr, Path(args.file), args.format)
    rep = transfer.import_docs(pr, docs, user, args.file, create_units=args.create_units)
    console.print(f"imported {rep.units} units as {user.username}'s annotations")
    for line in rep.lines():
        console.print(f"  {line}", markup=False)
    return 0
