"""What a study is drawn from: the dataset's hidden reference (publication
titles, catalog citations), the teams' leaderboard runs, and optionally the
publications' texts and a data-set catalog for human-readable labels.

Nothing here writes; :mod:`.service` snapshots what it reads into the study,
so later runs or edits to the files do not change what judges saw.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from shareval.assessment.rcc_phase2 import STRATA, Candidate, stratum_proxy, topic_of
from shareval.formats.errors import Problems
from shareval.formats.rcc import read_citations
from shareval.platform.judging.build import team_runs
from shareval.platform.workbench.sources import publication_text

from shareval.platform.annotation.spans import clean_text

DATA_WORDS = re.compile(r"\b(data(?:set|base)?s?|survey|sample|panel|census|registry|"
                        r"questionnaire|interview|respondents?|cohort|study)\b", re.I)
MAX_PASSAGES = 8
PASSAGE = 420


def reference_publications(dataset) -> tuple[dict[str, str], set[str]]:
    """(publication id -> title, publications citing a catalog data set) from the
    dataset's reference folder (publications.json beside data_set_citations.json)."""
    ref = dataset.reference_file
    if ref is None or not ref.is_dir():
        raise ValueError(f"{dataset}: the reference must be an RCC folder with "
                         f"publications.json and data_set_citations.json")
    pubs = json.loads((ref / "publications.json").read_text(encoding="utf-8"))
    titles = {str(p["publication_id"]): str(p.get("title") or "").strip() for p in pubs}
    problems = Problems()
    cits = read_citations(ref, problems, submission=False)
    cited = {c.publication_id for c in cits.records} if cits else set()
    return titles, cited


def baseline_teams(dataset) -> set[str]:
    return {team for team, sub in team_runs(dataset).items() if sub.team.is_baseline}


def team_outputs(dataset) -> dict[str, dict[str, list[str]]]:
    """team -> publication -> data set ids, from each team's leaderboard run."""
    if dataset.task.task_name != "rcc-citations":
        raise ValueError(f"{dataset}: RCC phase-2 studies compare rcc-citations runs, "
                         f"not {dataset.task.task_name}")
    out: dict[str, dict[str, list[str]]] = {}
    for team, sub in sorted(team_runs(dataset).items()):
        problems = Problems()
        cits = read_citations(sub.path, problems, submission=True)
        per: dict[str, list[str]] = {}
        for c in cits.records if cits else []:
            if c.data_set_id not in per.setdefault(c.publication_id, []):
                per[c.publication_id].append(c.data_set_id)
        out[team] = per
    return out


def read_strata(text: str, name: str = "strata.csv") -> dict[str, tuple[str, str]]:
    """A strata list: CSV with columns publication_id, topic, stratum (titled,
    untitled, none); the sampler's reading of each publication."""
    problems = Problems()
    rows = csv.DictReader(io.StringIO(text))
    need = {"publication_id", "topic", "stratum"}
    if not rows.fieldnames or not need <= set(rows.fieldnames):
        problems.fatal(name, 1, "header", f"needs columns {sorted(need)}")
        problems.raise_if_any()
    out = {}
    for line, r in enumerate(rows, 2):
        pub, topic, stratum = (r["publication_id"] or "").strip(), (r["topic"] or "").strip(), \
            (r["stratum"] or "").strip()
        if not pub or not topic:
            problems.add(name, line, "publication_id/topic", "required")
        elif stratum not in STRATA:
            problems.add(name, line, "stratum", f"one of {', '.join(STRATA)}")
        elif pub in out:
            problems.add(name, line, "publication_id", f"{pub} repeats")
        else:
            out[pub] = (topic, stratum)
    problems.raise_if_any()
    return out


def candidates(titles: dict[str, str], cited: set[str],
               outputs: dict[str, dict[str, list[str]]],
               strata: dict[str, tuple[str, str]] | None = None) -> list[Candidate]:
    """Every reference publication with its topic and stratum: from the strata
    list when given (publications it leaves out are not candidates), else
    guessed (:func:`topic_of`, :func:`stratum_proxy`)."""
    if strata is not None:
        problems = Problems()
        for p in sorted(set(strata) - set(titles)):
            problems.add("strata", None, "publication_id",
                         f"{p} is not in the dataset's reference")
        problems.raise_if_any()
        return [Candidate(p, t, s) for p, (t, s) in sorted(strata.items())]
    return [Candidate(p, topic_of(title),
                      stratum_proxy(p in cited, sum(bool(o.get(p)) for o in outputs.values())))
            for p, title in sorted(titles.items())]


def passages(texts_dir: Path | None, publication: str) -> dict:
    """The opening and the passages that speak of data (a data word highlighted
    by the page), from ``<texts_dir>/<id>.json`` ({abstract, reduced_content})
    or ``<id>.txt``; {} when there is no text."""
    if texts_dir is None:
        return {}
    path = Path(texts_dir) / f"{publication}.json"
    if path.exists():
        doc = json.loads(path.read_text(encoding="utf-8"))
        text = max((str(doc.get(k) or "") for k in ("abstract", "reduced_content", "text")),
                   key=len)
    elif (Path(texts_dir) / f"{publication}.txt").exists():
        text = (Path(texts_dir) / f"{publication}.txt").read_text(encoding="utf-8",
                                                                   errors="replace")
    else:
        return {}
    flat = re.sub(r"\s+", " ", text.replace("\x00", "")).strip()     # PostgreSQL stores no NUL
    out, seen = [], set()
    for m in DATA_WORDS.finditer(flat):
        start = max(0, flat.rfind(". ", 0, max(0, m.start() - PASSAGE // 2)) + 2)
        chunk = flat[start:start + PASSAGE]
        if any(abs(start - s) < PASSAGE for s in seen):
            continue
        seen.add(start)
        out.append(chunk)
        if len(out) >= MAX_PASSAGES:
            break
    return {"opening": flat[:PASSAGE], "passages": out}


def full_text(texts_dir: Path | None, publication: str) -> str:
    """The whole text the coder selects references in (the workbench's reading:
    abstract, blank line, body; or .txt, .pdf), as the browser will hold it;
    "" when there is none. A file that is there but unreadable raises, naming it."""
    if texts_dir is None or not any((Path(texts_dir) / f"{publication}.{x}").exists()
                                    for x in ("json", "txt", "pdf")):
        return ""
    return clean_text(publication_text(Path(texts_dir), publication))


def catalog_labels(path: Path | None, ids: set[str], width: int = 140) -> dict[str, str]:
    """Data set id -> a short title from a catalog JSON ({id: text} or a list of
    {data_set_id, title}); ids it lacks are left out."""
    if path is None:
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = {str(d.get("data_set_id")): d.get("title") or d.get("name") or "" for d in data}
    out = {}
    for i in ids:
        text = re.sub(r"\s+", " ", str(data.get(i) or data.get(str(i)) or "")).strip()
        if text:
            out[i] = text if len(text) <= width else text[:width - 1] + "…"
    return out
