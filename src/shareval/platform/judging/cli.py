"""``shareval server e2e-judging``: the MATERIAL E2E judging loop from the command
line (docs/assessment.md): build a campaign's items from the primary E2E runs,
write its judgments file, publish each team's E2E AQWV from its own judgments."""
from __future__ import annotations

from pathlib import Path


def add_parser(cmds) -> None:
    p = cmds.add_parser("e2e-judging", help="MATERIAL E2E summary judging: build, export, "
                                            "publish (docs/assessment.md)")
    p.add_argument("action", choices=("build", "export", "publish"))
    p.add_argument("competition")
    p.add_argument("campaign", help="the campaign's number (its page's address) or slug")
    p.add_argument("--out", help="export: the judgments file (default: print it)")
    p.add_argument("--force", default="", help="publish although items lack judgments; "
                                               "the reason is recorded")


def run(args, console) -> int:
    from shareval.formats.digits import is_digits
    from shareval.formats.errors import InvalidInput

    from shareval.platform.judging import e2e_items, e2e_publish, results
    from shareval.platform.judging.models import Campaign
    camps = Campaign.objects.filter(dataset__phase__competition__slug=args.competition)
    by_pk = is_digits(args.campaign)
    camp = (camps.filter(pk=int(args.campaign)) if by_pk else
            camps.filter(slug=args.campaign)).first()
    if camp is None or (not by_pk and
                        camps.filter(slug=args.campaign).count() > 1):
        console.print(f"no single campaign {args.campaign!r} in {args.competition!r}",
                      markup=False)
        return 1
    try:
        if args.action == "build":
            for line in e2e_items.report(e2e_items.build_from_primaries(camp)):
                console.print(line, markup=False)
        elif args.action == "export":
            text = results.e2e_judgments(camp)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
                console.print(f"{args.out}: {text.count(chr(10)) - 1} judgments", markup=False)
            else:
                print(text, end="")
        else:
            done = e2e_publish.publish(camp, "command line", args.force)
            for team, value in sorted(done.scored.items()):
                console.print(f"{team}: E2E AQWV {value} (now the current score)", markup=False)
            for team in done.unchanged:
                console.print(f"{team}: already scored from these judgments", markup=False)
            for team, why in sorted(done.failed.items()):
                console.print(f"{team}: not scored, nothing stored:\n{why}", markup=False)
            return 2 if done.failed else 0
    except (ValueError, InvalidInput) as e:
        console.print(f"e2e-judging {args.action}: {e}", markup=False)
        return 2
    return 0
