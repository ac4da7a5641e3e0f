"""``shareval server rcc-study``: create an RCC phase-2 study (sample, snapshot
the teams' runs, add members) from the command line; prints the sample."""
from __future__ import annotations

from pathlib import Path


def add_parser(cmds) -> None:
    p = cmds.add_parser("rcc-study", help="create an RCC phase-2 human evaluation study "
                                          "(docs/annotation.md)")
    p.add_argument("competition")
    p.add_argument("phase")
    p.add_argument("dataset", help="an rcc-citations dataset with scored team runs")
    p.add_argument("--slug", default="phase2")
    p.add_argument("--title", default="RCC phase-2 human evaluation")
    p.add_argument("--designer", required=True, help="organizer who makes the final pass")
    p.add_argument("--per-topic", type=int, default=20)
    p.add_argument("--mix", default="5:4:1", help="titled:untitled:none (default 5:4:1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--topics", help="comma-separated topic areas to sample (default: all)")
    p.add_argument("--strata", help="CSV publication_id,topic,stratum (default: guessed)")
    p.add_argument("--agree", type=int, default=0,
                   help="instead: this many publications on which all teams agree")
    p.add_argument("--qualitative", type=int, default=0,
                   help="publications for phase-1 rankings (besides the sample)")
    p.add_argument("--rankers", type=int, default=2, help="judges per ranked publication")
    p.add_argument("--texts", help="folder of <publication_id>.json|.txt full texts")
    p.add_argument("--catalog", help="data set catalog JSON for readable labels")
    p.add_argument("--coder", help="the reference coder (username)")
    p.add_argument("--reviewer", action="append", default=[])
    p.add_argument("--judge", action="append", default=[],
                   help="username, or username:Topic A,Topic B (repeatable)")


def run(args, console) -> int:
    from django.contrib.auth import get_user_model

    from shareval.formats.errors import InvalidInput
    from shareval.platform.competitions.models import Dataset

    from shareval.platform.annotation import service, sources
    User = get_user_model()
    ds = Dataset.objects.filter(phase__competition__slug=args.competition,
                                phase__slug=args.phase, slug=args.dataset).first()
    if ds is None:
        console.print(f"no dataset {args.competition}/{args.phase}/{args.dataset}")
        return 1

    def user(name):
        u = User.objects.filter(username=name).first()
        if u is None:
            raise SystemExit(f"no user {name!r}")
        return u
    try:
        mix = dict(zip(("titled", "untitled", "none"), (int(x) for x in args.mix.split(":"))))
        strata = sources.read_strata(Path(args.strata).read_text(encoding="utf-8"),
                                     args.strata) if args.strata else None
        st = _create(args, ds, user, strata, mix)
    except InvalidInput as e:
        console.print(f"rcc-study:\n{e.render()}", markup=False)
        return 1
    except (service.BadInput, service.NotAllowed, ValueError) as e:
        console.print(f"rcc-study: {e}", markup=False)
        return 1
    sample = st.config["sample"]
    console.print(f"study {st.pk} '{st.title}' on {ds}: teams {', '.join(st.teams)}")
    for topic, got in sample.get("got", {}).items() if isinstance(sample.get("got"), dict) \
            else []:
        want = sample["wanted"][topic]
        console.print(f"  {topic:<18} " + "  ".join(f"{s} {got[s]}/{want[s]}" for s in got))
    for s in sample.get("shortfall", []):
        console.print(f"  short: {s}")
    console.print(f"  {st.publications.filter(purpose='qualitative').count()} publications "
                  f"for phase-1 rankings")
    console.print(f"pages: /c/{args.competition}/annotation/{st.pk}/ (organizers: the overview; "
                  f"members: their work, also under 'Your work' in the site's header)")
    return 0


def _create(args, ds, user, strata, mix):
    # django is imported here, not at the top: the parser is built by every
    # ``shareval`` command, also where only the core is installed (a code
    # submission's sandbox runs ``shareval run``)
    from django.db import transaction
    with transaction.atomic():
        return _create_in(args, ds, user, strata, mix)


def _create_in(args, ds, user, strata, mix):
    from shareval.platform.annotation import service
    from shareval.platform.annotation.models import Member
    st = service.create_study(
        ds, args.slug, args.title, user(args.designer), per_topic=args.per_topic, mix=mix,
        seed=args.seed, qualitative=args.qualitative, rankers=args.rankers, strata=strata,
        agree=args.agree, texts_dir=Path(args.texts) if args.texts else None,
        catalog=Path(args.catalog) if args.catalog else None,
        topics=[t.strip() for t in args.topics.split(",")] if args.topics else None)
    designer = user(args.designer)
    if args.coder:
        service.add_member(st, designer, user(args.coder), Member.CODER)
    for r in args.reviewer:
        service.add_member(st, designer, user(r), Member.REVIEWER)
    for j in args.judge:
        name, _, topics = j.partition(":")
        service.add_member(st, designer, user(name), Member.JUDGE,
                           [t.strip() for t in topics.split(",") if t.strip()] or None)
    return st
