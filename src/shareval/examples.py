"""``shareval examples``: the sample inputs every README example reads, in ``out/demo``.

``make test`` and ``make demo`` run it first, so the README's commands run as
written after either. The scoring files are ``shareval demo``'s (perturbed
copies of ../shared/data's gold, or of a synthetic sample without it); the
rest is made here: a research-methods pair, a submission with three problems
(``bad.json``) and one with a syntax error (``broken.json``), a small
synthetic MATERIAL reference pack with system outputs and system inputs, a
few RCC publications for ``shareval run rcc``, and a small code bundle with
its input and gold labels for ``shareval run-code``. Real data is only read, and
copied into ``out/demo`` (which git ignores), never into the package.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from rich.console import Console

from .demo import find_data, run_demo
from .formats.summary import JUDGMENT_HEADER

# MATERIAL: six documents (the last one conversational speech), three queries
DOCS = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, 7)]
DOC_TEXTS = [
    "The ebola outbreak spread quickly and hospitals treated many patients with the virus.",
    "Die Ebola-Epidemie breitete sich aus; Krankenhäuser behandelten viele Patienten.",
    "Parliament passed the new tax law after a long debate among the ministers.",
    "The football team won the championship match with a late goal.",
    "Musicians played traditional music at the wedding celebration all night.",
    "uh yes I think so, we talked on the phone yesterday about the music",
]
QUERIES = ("query_id\tquery\ttype\nquery1\tebola:Physical-And-Mental-Health\tlexical\n"
           'query2\t"panel of judges":Government-And-Politics\tconceptual\n'
           "query3\tmusic:Lifestyle\tlexical\n")
RELEVANT = {"query1": {0, 1}, "query2": set(), "query3": {4}}
DOMAINS = {"GOV": {0, 2}, "MIL": {1}}
# a system that finds doc 0 for query1 with a false alarm on doc 2, and misses query3's doc 4
DETECTED = {"query1": {0: 0.9, 2: 0.8}, "query2": {}, "query3": {}}
TEAM, SYSTEM = "TEAMX", "Sys1"


def write_examples(out: str | Path, data: str | None = None) -> Path:
    out = Path(out)
    run_demo(data, str(out), Console(file=io.StringIO(), width=120))   # the scoring files
    root = find_data(data) or out / "synthetic-data"
    _fields_methods(out)
    _bad_submissions(out, root / "sv-ident" / "train" / "train.tsv")
    _demo_competition_run(out, root / "sv-ident" / "train" / "train.tsv")
    _material(out)
    _code_bundle(out)
    texts = root / "rcc" / "train" / "texts"
    if texts.is_dir():
        pubs = out / "rcc-pubs"
        pubs.mkdir(exist_ok=True)
        for p in sorted(texts.iterdir())[:3]:
            shutil.copyfile(p, pubs / p.name)
    return out


CODE_MAIN = """\
# A tiny system: labels each item by its number (even: pos, odd: neg).
import pathlib, sys
items = pathlib.Path(sys.argv[1], "items.txt").read_text().split()
print(f"labelling {len(items)} items")
rows = "".join(f"{i}\\t{'pos' if int(i[1:]) % 2 == 0 else 'neg'}\\n" for i in items)
pathlib.Path(sys.argv[2], "labels.tsv").write_text("item\\tlabel\\n" + rows)
"""


def _code_bundle(out: Path) -> None:
    """code-system/ (a bundle), code-input/ (what it reads), code-gold.tsv."""
    system, inp = out / "code-system", out / "code-input"
    system.mkdir(exist_ok=True)
    inp.mkdir(exist_ok=True)
    (system / "shareval-system.yaml").write_text(
        "command: python main.py {input} {output}\nlimits: {wall_seconds: 60}\n")
    (system / "main.py").write_text(CODE_MAIN)
    items = [f"i{k:02d}" for k in range(12)]
    (inp / "items.txt").write_text("".join(i + "\n" for i in items))
    gold = "".join(f"{i}\t{'pos' if k % 3 else 'neg'}\n" for k, i in enumerate(items))
    (out / "code-gold.tsv").write_text("item\tlabel\n" + gold)


def _fields_methods(out: Path) -> None:
    a = [{"publication_id": 1, "method": "regression", "score": 0.9},
         {"publication_id": 1, "method": "survey"}, {"publication_id": 2, "method": "Regression"},
         {"publication_id": 3, "method": "interviews"}]
    b = [{"publication_id": 1, "method": "regression"},
         {"publication_id": 2, "method": "interviews"}, {"publication_id": 3, "method": "panel"}]
    (out / "methods.json").write_text(json.dumps(a, indent=1), encoding="utf-8")
    (out / "other_methods.json").write_text(json.dumps(b, indent=1), encoding="utf-8")


def _bad_submissions(out: Path, reference: Path) -> None:
    """bad.json: the first sentence predicted 2, the last document left out, one unknown
    uuid; broken.json: a missing ':' on line 3."""
    with open(reference, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    last_doc = rows[-1]["doc_id"]
    kept = [r for r in rows if r["doc_id"] != last_doc]
    lines = [f'"{r["uuid"]}": {2 if i == 0 else int(r["is_variable"])}'
             for i, r in enumerate(kept)] + ['"not-a-uuid": 0']
    (out / "bad.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    good = [f'"{r["uuid"]}": {int(r["is_variable"])}' for r in rows[:3]]
    good[1] = good[1].replace(":", "", 1)
    (out / "broken.json").write_text("{\n" + ",\n".join(good) + "\n}\n", encoding="utf-8")


def _demo_competition_run(out: Path, reference: Path) -> None:
    """A team's run for the server demo's SV-Ident development set (the README's `shareval
    submit` example): its gold labels with every sixth flipped."""
    from .platform.demo import svident_split
    with open(reference, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))         # as the server demo reads it
    part = svident_split(rows)
    run = {r["uuid"]: int(r["is_variable"]) ^ (i % 6 == 0)
           for i, r in enumerate(r for r in rows if part.get(r["doc_id"]) == 0)}
    (out / "svident-dev-team-a.json").write_text(json.dumps(run, indent=0), encoding="utf-8")


def _rows(decisions: dict[int, float], docs=DOCS) -> str:
    return "".join(f"{d}\t{'Y' if i in decisions else 'N'}\t{decisions.get(i, 0.1)}\n"
                   for i, d in enumerate(docs))


def _material(out: Path) -> None:
    pack = out / "material-pack"
    for sub in ("clir", "domainid", "langid", "e2e"):
        (pack / sub).mkdir(parents=True, exist_ok=True)
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    genres = "doc_id\tgenre\n" + "".join(f"{d}\t{'CS' if i == 5 else 'text'}\n"
                                         for i, d in enumerate(DOCS))
    (pack / "documents.tsv").write_text(genres)
    (pack / "queries.tsv").write_text(QUERIES)
    for sub, refs in (("clir", RELEVANT), ("domainid", DOMAINS),
                      ("langid", {"1A": set(range(6))})):
        for name, rel in refs.items():
            (pack / sub / f"{name}.tsv").write_text(
                "".join(f"{d}\t{'Y' if i in rel else 'N'}\n" for i, d in enumerate(DOCS)))
    # judges: query1/doc0 3 of 3 relevant, query1/doc2 1 of 3, query3/doc4 1 of 2
    votes = [("query1", 0, [1, 1, 1]), ("query1", 2, [1, 0, 0]), ("query3", 4, [1, 0])]
    judgments = ["\t".join(JUDGMENT_HEADER)] + [
        f"{q}\t{DOCS[j]}\t{TEAM}.{SYSTEM}\tj{n}\t{'Y' if v else 'N'}" for q, j, vs in votes
        for n, v in enumerate(vs)]
    (pack / "e2e" / "judgments.tsv").write_text("\n".join(judgments) + "\n")
    (out / "judgments.tsv").write_text("\n".join(judgments) + "\n")

    clir = out / "material-clir"
    clir.mkdir(exist_ok=True)
    for q, dec in DETECTED.items():
        (clir / f"{q}.tsv").write_text(_rows(dec))
    dom = out / "material-domainid"
    dom.mkdir(exist_ok=True)
    (dom / "GOV.tsv").write_text(_rows({0: 0.8, 3: 0.6}, DOCS[:5]))   # no speech (plan 7.2.2)
    (dom / "MIL.tsv").write_text(_rows({}, DOCS[:5]))
    _e2e(out / "material-e2e")

    inp = out / "material-input"
    (inp / "documents").mkdir(parents=True, exist_ok=True)
    for d, text in zip(DOCS, DOC_TEXTS):
        (inp / "documents" / f"{d}.txt").write_text(text, encoding="utf-8")
    (inp / "queries.tsv").write_text(QUERIES)
    (inp / "documents.tsv").write_text(genres)
    (inp / "domains.json").write_text(json.dumps({"GOV": "GOV", "MIL": "Military"}))


def _e2e(root: Path) -> None:
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (1024, 300), "white").save(buf, format="PNG")
    for q, dec in DETECTED.items():
        (root / q).mkdir(parents=True, exist_ok=True)
        lines = []
        for i, d in enumerate(DOCS):
            if i not in dec:
                lines.append(f"{d}\tN\t0.1\t")
                continue
            base = f"{TEAM}.{SYSTEM}.{q}.{d}"
            meta = {"team_id": TEAM, "sys_label": SYSTEM,
                    "uuid": "dc91049e-d934-40d7-a175-5af32cbabbca", "query_id": q,
                    "document_id": d, "run_name": "run1",
                    "run_date_time": "2018-03-27T13:51:00-05:00",
                    "image_filename": f"{base}.png", "content_list": ["ebola", "patients"]}
            (root / q / f"{base}.json").write_text(json.dumps(meta))
            (root / q / f"{base}.png").write_bytes(buf.getvalue())
            lines.append(f"{d}\tY\t{dec[i]}\t{base}.json")
        (root / q / f"{q}.tsv").write_text("\n".join(lines) + "\n")
