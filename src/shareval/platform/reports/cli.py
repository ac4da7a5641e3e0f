"""``shareval server report COMPETITION [--phase P] [--runs primary|all] --out DIR``."""
from __future__ import annotations

import time
from pathlib import Path

from shareval.formats.errors import InvalidInput


def run(args, console) -> int:
    from shareval.platform.competitions.models import Competition, Dataset
    from shareval.platform.reports.build import build, store_properties
    from shareval.platform.reports.output import NotAReportFolder, check_out, write
    comp = Competition.objects.filter(slug=args.competition).first()
    if comp is None:
        console.print(f"no competition {args.competition!r}")
        return 1
    try:
        check_out(Path(args.out))                 # before anything is stored or built
    except NotAReportFolder as e:
        console.print(f"--out: {e}", markup=False)
        return 2
    if args.samples < 100:
        console.print("--samples: at least 100")
        return 2
    for spec in args.properties:
        target, _, file = spec.partition("=")
        phase, _, ds = target.partition("/")
        d = Dataset.objects.filter(phase__competition=comp, phase__slug=phase, slug=ds) \
            .select_related("phase__competition").first()
        if not file or d is None:
            console.print(f"--properties {spec}: give PHASE/DATASET=FILE with a dataset of "
                          f"{comp.slug}", markup=False)
            return 2
        try:
            n = store_properties(d, file, Path(file).read_bytes())
        except OSError as e:
            console.print(f"{file}: {e.strerror}", markup=False)
            return 2
        except UnicodeDecodeError:
            console.print(f"{file}: not UTF-8", markup=False)
            return 2
        except InvalidInput as e:
            for line in e.lines():
                console.print(line, markup=False)
            return 2
        console.print(f"{d}: properties of {n} documents stored", markup=False)
    t0 = time.perf_counter()
    try:
        rep = build(comp, args.phase, args.runs, samples=args.samples, rule=args.rule)
    except LookupError as e:
        console.print(str(e).strip("'\""), markup=False)
        return 1
    n = write(rep, Path(args.out))
    for sec in rep.sections:
        console.print(f"{sec.title}: {len(sec.tables)} tables, {len(sec.figures)} figures",
                      markup=False)
        for note in sec.notes:
            console.print(f"  note: {note}", markup=False)
    console.print(f"{n['sections']} sections, {n['tables']} tables, {n['figures']} figures "
                  f"in {time.perf_counter() - t0:.1f} s, written to {args.out} "
                  f"(index.html, report.tex, tables/, figures/)", markup=False)
    return 0
