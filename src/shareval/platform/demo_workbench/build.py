"""Build the demo's workbench projects in an existing competition."""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from shareval.platform.workbench import service, sources

RCC_PUBLICATIONS = ["1853", "1497", "460"]      # each cites two years of one survey
SVIDENT_SENTENCES = 24
CODEBOOK = Path(__file__).with_name("codebook.md")


def build_projects(comp, data: Path, users: dict, console=None) -> dict:
    """``rcc-gold`` (pairs, suggestions on, every unit coded by ``annotator`` and
    ``judge`` for agreement) and ``svident-gold`` (sentences of the trial data,
    variables suggested). Returns {slug: project}."""
    say = console.print if console else (lambda *a, **k: None)
    made = {}
    rcc = data / "rcc"
    if comp.workbench_projects.filter(slug="rcc-gold").exists():
        return {p.slug: p for p in comp.workbench_projects.all()}
    with transaction.atomic():
        pr = service.create_project(comp, "rcc-gold", "RCC data set mentions (gold)",
                                    "rcc-pairs", users["organizer"],
                                    codebook=CODEBOOK.read_text(encoding="utf-8"), per_unit=2)
        n = sources.load_rcc(pr, rcc / "train" / "texts", RCC_PUBLICATIONS,
                             rcc / "catalog" / "dataset_text_dict.json",
                             rcc / "train" / "data_set_citations.json")
        service.assign(pr, [users["annotator"], users["judge"]], per_unit=2,
                       calibration=n["units"], by=users["organizer"])
        coded = code_first_publication(pr)
        made[pr.slug] = pr
    say(f"annotation project rcc-gold: {n['units']} publication–data set pairs, "
        f"{n['suggestions']} suggestions; the pairs of publication {RCC_PUBLICATIONS[0]} "
        f"coded by both annotators ({coded} units), so gold, agreement and exports show")
    trial = data / "sv-ident" / "trial"
    if (trial / "train" / "en.tsv").exists():
        with transaction.atomic():
            sv = service.create_project(comp, "svident-gold", "SV-Ident variables (gold)",
                                        "svident", users["organizer"], per_unit=1)
            n = sources.load_svident(sv, trial / "train" / "en.tsv",
                                     trial / "vocabulary" / "en.tsv", SVIDENT_SENTENCES)
            service.assign(sv, [users["annotator"], users["judge"]], per_unit=1,
                           calibration=6, by=users["organizer"])
            made[sv.slug] = sv
        say(f"annotation project svident-gold: {n['units']} sentences, "
            f"{n['suggestions']} variable suggestions")
    return made


def code_first_publication(pr) -> int:
    """Both annotators accept every suggestion of the first publication's pairs, answer
    "uses the data set" and finish: the demo's gold is not empty. Returns the units."""
    units = pr.units.filter(meta__publication_id=RCC_PUBLICATIONS[0])
    for unit in units:
        for a in unit.assignments.select_related("user"):
            ops = [{"op": "verdict", "suggestion": s.pk, "accepted": True}
                   for s in unit.suggestions.all()]
            a.refresh_from_db()
            service.apply_ops(a, a.user, a.version, ops + [
                {"op": "answer", "key": "cited", "value": "yes"},
                {"op": "status", "value": "done"}])
    return units.count()
