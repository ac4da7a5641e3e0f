"""What to upload, per task: a sentence on the format, a small sample file, the CLI command.

The sample takes its ids from the dataset's released files when the task's
layout is known here (SV-Ident sentences, RCC publications), so that it is the
start of a valid upload for that dataset; it never reads the hidden reference.
Tasks without an entry show their description and a pointer to docs/.
"""
from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

from django.conf import settings

from shareval.platform.access import releases

SAMPLE_IDS = 3


def _public(ds, suffix: str) -> Path | None:
    for f in ds.public_files.all():
        if not releases.open_to_all(f):       # no ids of a file not yet out, or not for all
            continue
        p = (Path(settings.PUBLIC_DIR) / f.path).resolve()
        if f.name.endswith(suffix) and p.is_relative_to(Path(settings.PUBLIC_DIR).resolve()) \
                and p.is_file():
            return p
    return None


def _svident_ids(ds) -> list[str]:
    p = _public(ds, ".tsv")
    if p is None:
        return []
    with open(p, encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t")
        return [r["uuid"] for r, _ in zip(rows, range(SAMPLE_IDS)) if r.get("uuid")]


def _rcc_ids(ds) -> list[str]:
    p = _public(ds, ".json")
    try:
        pubs = json.loads(p.read_text(encoding="utf-8")) if p else []
        return [str(x["publication_id"]) for x in pubs[:SAMPLE_IDS]]
    except (ValueError, KeyError, TypeError):
        return []


def _svident(ds) -> str:
    ids = _svident_ids(ds) or ["b4e5c7a0-0000-4000-8000-000000000001",
                               "b4e5c7a0-0000-4000-8000-000000000002"]
    return json.dumps({u: i % 2 for i, u in enumerate(ids)}, indent=1)


def _rcc(ds) -> str:
    ids = _rcc_ids(ds) or ["100", "105"]
    recs = [{"publication_id": int(i) if i.isdigit() else i, "data_set_id": 1456,
             "mention_list": ["Current Population Survey"], "score": round(0.9 - 0.2 * k, 2)}
            for k, i in enumerate(ids)]
    return "[\n" + ",\n".join(" " + json.dumps(r) for r in recs) + "\n]"     # a record a line


def _classification(ds) -> str:
    return "item\tlabel\ni01\tpos\ni02\tneg\n"


FORMATS = {
    "svident-detection": (
        "A JSON object mapping the uuid of every sentence in the released sentences file to 1 "
        "(mentions a survey variable) or 0; or a TSV file of lines uuid<TAB>0|1. Every sentence "
        "must be predicted exactly once.", "json", _svident),
    "rcc-citations": (
        "A JSON list of records, one per (publication, dataset) pair you claim: publication_id "
        "(from the released publications file), data_set_id (from the RCC dataset catalog), "
        "mention_list (strings, may be empty) and score (your confidence; pairs are ranked by "
        "it for the precision-recall curve).", "json", _rcc),
    "classification": (
        "A TSV file with the header line item<TAB>label and one line per item.", "tsv",
        _classification),
    # MATERIAL (docs/material.md): archives, too big for a sample to help
    "material-clir": (
        "A .tgz archive with one <QueryID>.tsv per query of the released queries file, each "
        "listing every document of the released pack once: DocID<TAB>Y|N<TAB>confidence "
        "(plan 7.3). A name in the plan's form (Team_CLIR-primary-…_BASE-1A-EVAL1EVAL2_"
        "date_time.tgz) makes the run primary or contrastive as it says and shows its "
        "system label; see docs/material.md.", "tgz", None),
    "material-e2e": (
        "A .tgz archive with one folder per query: <QueryID>/<QueryID>.tsv listing every "
        "document (DocID<TAB>Y|N<TAB>confidence<TAB>the summary's metadata file on Y lines), "
        "and for each Y document its summary metadata JSON and image (plan 8.2.2). A name in "
        "the plan's form (Team_E2E-primary-…tgz) decides primary or contrastive; see "
        "docs/material.md.", "tgz", None),
}


def guide(ds, server: str) -> dict:
    """{format, sample, sample_name, command} for the submit page."""
    text, ext, build = FORMATS.get(ds.task.task_name, (None, "txt", None))
    name = f"{ds.slug}-run.{ext}"
    where = ["--competition", ds.phase.competition.slug, "--phase", ds.phase.slug,
             "--task", ds.task.slug]
    if ds.phase.datasets.filter(task=ds.task).count() > 1:
        where += ["--dataset", ds.slug]
    # one line per part, joined by shell continuations: the page never wraps the
    # command inside a word (the server's URL), and the copied text still runs
    lines = [["shareval", "submit", name], where, ["--server", server, "--wait"]]
    return {"format": text or (f"{ds.task.registry_task.description} "
                               "See docs/conventions.md for the file layout."),
            "sample": build(ds) if build else "", "sample_name": name,
            "command": " \\\n    ".join(" ".join(shlex.quote(c) for c in line)
                                         for line in lines)}
