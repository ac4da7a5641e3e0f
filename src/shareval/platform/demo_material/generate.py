"""Write the MATERIAL demo's files: packs, released data, team runs, judgments.

Layout under ``out`` (``out/demo-server/material-demo`` after ``make demo``)::

    packs/<lang>-devtest/, packs/<lang>-eval/   reference packs (+ translations.tsv)
    public/<lang>-queries.tsv                   the queries, as teams receive them
    public/<lang>-devtest.tgz, <lang>-eval.tgz  documents, translations and queries
    public/<lang>-eval-open-relevance.tsv       the open queries' relevant Eval documents
    runs/<canonical name>.tgz                   the teams' runs (plan 8.2.1.2)
    judgments/<lang>-eval-judgments.tsv         simulated judges of every E2E run's summaries
"""
from __future__ import annotations

import random
import tarfile
from dataclasses import dataclass
from pathlib import Path

from shareval.platform.demo_material import corpus
from shareval.platform.demo_material.runs import Run, make_run, write_archive
from shareval.platform.demo_material.systems import Index, System

TEAMS = {"Alpha": "Team Alpha", "Beta": "Team Beta", "Gamma": "Team Gamma"}
ALPHA = System("bm25", "bm25", 0.4, expand=True)
ALPHA_STRICT = System("bm25strict", "bm25", 0.55, expand=True)
ALPHA_PLAIN = System("bm25plain", "bm25", 0.4)
BETA = System("overlap", "overlap", 0.6)
BETA_LOW = System("overlaplow", "overlap", 0.45)
BETA_HIGH = System("overlaphigh", "overlap", 0.75)
GAMMA = System("bm25k2", "bm25", 0.5, k1=2.0)
GAMMA_CLIR = System("bm25k2low", "bm25", 0.35, k1=2.0)
# the evaluation week, per language: (team, task, kind, system); Gamma forgets its primary
WEEK = [("Alpha", "E2E", "primary", ALPHA), ("Alpha", "CLIR", "contrastive", ALPHA_STRICT),
        ("Alpha", "CLIR", "contrastive", ALPHA_PLAIN),
        ("Beta", "E2E", "primary", BETA), ("Beta", "CLIR", "contrastive", BETA_LOW),
        ("Beta", "CLIR", "contrastive", BETA_HIGH),
        ("Gamma", "E2E", "contrastive", GAMMA), ("Gamma", "CLIR", "contrastive", GAMMA_CLIR)]
DEVELOPMENT = [("Alpha", "CLIR", "primary", ALPHA), ("Alpha", "CLIR", "contrastive", ALPHA_PLAIN),
               ("Beta", "CLIR", "primary", BETA), ("Gamma", "CLIR", "primary", GAMMA)]
JUDGES = ("judge1", "judge2", "judge3")
# simulated judges: a summary of a relevant document is judged relevant with 0.85, of
# another with 0.1 (people err both ways)
JUDGE_YES = {True: 0.85, False: 0.1}


@dataclass
class Language:
    lang: str
    queries: list
    packs: dict          # "devtest"/"eval" -> pack folder
    runs: list           # (Run, archive path)
    judgments: Path


def generate(out: Path) -> dict[str, Language]:
    out = Path(out)
    for sub in ("packs", "public", "runs", "judgments"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    langs = {}
    for lang in corpus.LANGUAGES:
        queries = corpus.topics(lang)
        corpus.write_queries(out / "public" / f"{lang}-queries.tsv", queries)
        packs, runs, docs = {}, [], {}
        images: dict = {}
        for pack in corpus.PACKS:
            docs[pack] = corpus.collection(lang, pack, queries)
            root = corpus.write_pack(out / "packs" / f"{lang}-{pack}", lang, pack, queries,
                                     docs[pack])
            packs[pack] = root
            write_archive(out / "public" / f"{lang}-{pack}.tgz", {
                name: (root / name).read_bytes()
                for name in ("pack.yaml", "documents.tsv", "translations.tsv", "queries.tsv")})
            texts = {d.doc_id: d.text for d in docs[pack]}
            index = Index(texts)
            plan = DEVELOPMENT if pack == "devtest" else WEEK
            for k, (team, task, kind, system) in enumerate(plan):
                r = Run(team, task, kind, system, lang, pack, f"{10 + k:02d}{15 + k:02d}00")
                runs.append((r, make_run(r, index, texts, queries, out / "runs", images)))
        _open_relevance(out / "public" / f"{lang}-eval-open-relevance.tsv", queries,
                        docs["eval"])
        judged = _judgments(out / "judgments" / f"{lang}-eval-judgments.tsv", lang,
                            docs["eval"], [(r, p) for r, p in runs
                                           if r.task == "E2E" and r.pack == "eval"])
        langs[lang] = Language(lang, queries, packs, runs, judged)
    return langs


def _open_relevance(path: Path, queries, docs) -> None:
    """The open queries' relevance annotations of the Eval pack (released after the week)."""
    rows = [f"{q.query_id}\t{d.doc_id}\tY\n" for q in queries if q.status == "open"
            for d in docs if q.query_id in d.relevant]
    path.write_text("query_id\tdoc_id\trelevant\n" + "".join(rows))


def _judgments(path: Path, lang: str, docs, runs) -> Path:
    """Three simulated judges per summary of every E2E run (the 5-column judgments form,
    docs/material.md)."""
    rel = {d.doc_id: d.relevant for d in docs}
    rng = random.Random(f"{corpus.SEED}-{lang}-judges")
    rows = []
    for r, archive in runs:
        with tarfile.open(archive) as tar:
            for m in tar.getmembers():
                if not m.name.endswith(".tsv"):
                    continue
                qid = m.name.split("/")[0]
                for line in tar.extractfile(m).read().decode().splitlines():
                    doc, y = line.split("\t")[:2]
                    if y != "Y":
                        continue
                    p = JUDGE_YES[qid in rel[doc]]
                    rows += [f"{qid}\t{doc}\t{r.team}.{r.system.label}\t{j}\t"
                             f"{'Y' if rng.random() < p else 'N'}\n" for j in JUDGES]
    path.write_text("query_id\tdoc_id\tsystem\tjudge\trelevant\n" + "".join(rows))
    return path
