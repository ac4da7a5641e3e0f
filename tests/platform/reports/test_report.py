"""The organizers' report end to end on an SV-Ident detection competition scored by the
real worker: one cell of each table kind recomputed by hand, notes instead of blanks,
the command line, the page (organizers only) and report.tex compiled.

World: 12 documents (d00-d05 English, d06-d11 German), 6 sentences each; in every
document sentences 0 and 1 mention a variable (explicit and implicit), the rest do not.
Two annotators: A1 agrees with the reference, A2 also marks sentence 2 of every
document (implicit). Teams: Oracle predicts the reference, Zeros predicts 0 everywhere,
Half predicts the reference in English and 0 in German; Lonely has no primary.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from ..factories import Upload

DOCS = [f"d{i:02d}" for i in range(12)]


def lang(doc):
    return "en" if int(doc[1:]) < 6 else "de"


def reference() -> str:
    head = ["sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang",
            "mention_type", "is_variable@A1", "variable@A1", "mention_type@A1",
            "is_variable@A2", "variable@A2", "mention_type@A2"]
    rows = ["\t".join(head)]
    for d in DOCS:
        for s in range(6):
            pos = s < 2
            typ = ("explicit" if s == 0 else "implicit") if pos else ""
            var = f"v{s}" if pos else ""
            a2 = pos or s == 2
            rows.append("\t".join([f"Sentence {s} of {d}.", str(int(pos)), var, "ZA1" if pos else "",
                                   d, f"{d}-s{s}", lang(d), typ, str(int(pos)), var, typ,
                                   str(int(a2)), var or ("v9" if a2 else ""),
                                   typ or ("implicit" if a2 else "")]))
    return "\n".join(rows) + "\n"


def run(rule) -> str:
    lines = ["uuid\tis_variable"]
    for d in DOCS:
        for s in range(6):
            lines.append(f"{d}-s{s}\t{int(rule(d, s))}")
    return "\n".join(lines) + "\n"


RUNS = {"Oracle": lambda d, s: s < 2, "Zeros": lambda d, s: False,
        "Half": lambda d, s: s < 2 and lang(d) == "en"}


@pytest.fixture
def comp(db, tmp_path, settings):
    # a private folder of the test's own: stored properties and built reports live there
    settings.PRIVATE_DIR = tmp_path / "private"
    settings.UPLOAD_DIR = tmp_path / "uploads"
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions import queue, service
    root = tmp_path / "b"
    root.mkdir()
    (root / "ref.tsv").write_text(reference())
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "sv", "title": "SV-Ident & co",
        "tasks": [{"slug": "t1", "task": "svident-detection"}],
        "phases": [{"slug": "test", "title": "Test", "start": (now - dt.timedelta(days=1))
                    .isoformat(), "end": (now + dt.timedelta(days=9)).isoformat(),
                    "datasets": [{"slug": "t1-test", "task": "t1", "reference": "ref.tsv"},
                                 {"slug": "t1-other", "task": "t1", "reference": "ref.tsv"}],
                    "boards": [{"slug": "both", "title": "Both sets",
                                "datasets": ["t1-test", "t1-other"],
                                "columns": [{"metric": "f1_macro", "combine": "mean",
                                             "label": "mean F1"},
                                            {"metric": "f1_macro", "combine": "mean_rank",
                                             "label": "mean rank"}]}]}]}))
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    c, _ = load_bundle(root, org)
    ds = c.phases.get().datasets.get(slug="t1-test")
    other = c.phases.get().datasets.get(slug="t1-other")
    for name in list(RUNS) + ["Lonely"]:
        u = User.objects.create_user(name.lower(), password="x-pass-123")
        t = Team.objects.create(competition=c, name=name, lead=u)
        Membership.objects.create(team=t, user=u, status=Membership.APPROVED)
        rule = RUNS.get(name, RUNS["Zeros"])
        service.submit(u, t, ds, Upload("run.tsv", run(rule)), primary=name != "Lonely")
        if name in ("Oracle", "Zeros"):      # Half sends nothing to the other set
            service.submit(u, t, other, Upload("run.tsv", run(RUNS["Half"] if name == "Zeros"
                                                              else rule)), primary=True)
    assert queue.drain() == 6
    return {"comp": c, "ds": ds, "org": org}


def section(comp, **kw):
    from shareval.platform.reports.build import build
    rep = build(comp["comp"], samples=2000, **kw)
    return {t.slug: t for t in rep.sections[0].tables}, rep


def test_results_table_ranks_with_intervals_groups_and_notes(comp):
    tables, _ = section(comp)
    t = tables["test-t1-test-results"]
    rows = {r["team"]: r for r in t.rows}
    assert [r["team"] for r in t.rows] == ["Oracle", "Half", "Zeros"]
    assert rows["Oracle"]["f1_macro"] == 1.0 and rows["Oracle"]["rank"] == 1
    # Zeros, by hand: per document class 0 has P 4/6, R 1, F1 0.8; class 1 F1 0 -> 0.4
    assert rows["Zeros"]["f1_macro"] == pytest.approx(0.4)
    # Half: English documents 1.0, German 0.4; mean over languages 0.7
    assert rows["Half"]["f1_macro"] == pytest.approx(0.7)
    lo, hi = rows["Half"]["ci"]
    assert lo - 1e-9 <= 0.7 <= hi + 1e-9        # every document of a language scores alike
    assert rows["Oracle"]["group"] != rows["Zeros"]["group"]
    assert any("Lonely" in n and "no scored primary" in n for n in t.notes)


def test_significance_cell_is_holm_of_the_compare_commands_p(comp):
    from shareval.platform.submissions.models import Score
    from shareval.stats import compare_unit_stats
    from shareval.tasks.base import UnitStats
    tables, rep = section(comp)
    m = rep.sections[0].matrix
    stats = {s.submission.team.name: UnitStats.from_dict(s.unit_stats)
             for s in Score.objects.filter(submission__kind="primary")}
    raw = {}
    for a, b in (("Oracle", "Half"), ("Oracle", "Zeros"), ("Half", "Zeros")):
        r = compare_unit_stats("svident-detection", stats[a], stats[b], a, b, samples=2000)
        raw[(a, b)] = r.metrics["p_randomization"]
    # Holm by hand over the 3 pairs: sorted p times 3, 2, 1, running maximum, capped at 1
    order = sorted(raw, key=raw.get)
    adj, top = {}, 0.0
    for k, pair in zip((3, 2, 1), order):
        top = max(top, min(1.0, k * raw[pair]))
        adj[pair] = top
    for pair, p in adj.items():
        assert m.tests[pair].p_holm == pytest.approx(p)
    mat = tables["test-t1-test-significance"]
    row = next(r for r in mat.rows if r["system"] == "Oracle")
    assert row[f"c{m.systems.index('Zeros')}"] == pytest.approx(adj[("Oracle", "Zeros")])


def test_breakdown_tables_carry_counts_types_and_annotators(comp):
    tables, _ = section(comp)
    doc = tables["test-t1-test-per-document"]
    r = next(r for r in doc.rows if r["key"] == "d07" and r["system"] == "Zeros")
    assert (r["p:positives"], r["p:negatives"], r["p:lang"]) == (2, 4, "de")
    assert r["v:f1_macro"] == pytest.approx(0.4)
    lang_t = tables["test-t1-test-per-language"]
    r = next(r for r in lang_t.rows if r["key"] == "de" and r["system"] == "Half")
    assert r["v:f1_macro"] == pytest.approx(0.4)
    types = tables["test-t1-test-per-mention-type"]
    keys = {r["key"] for r in types.rows}
    assert {"explicit", "implicit"} <= keys
    ann = tables["test-t1-test-per-annotator"]
    assert {"A1", "A2", "agreed"} <= {r["key"] for r in ann.rows}
    # Oracle against A2: A2 also marks sentence 2, so per document class 1 has P 1, R 2/3
    # (F1 0.8) and class 0 P 3/4, R 1 (F1 6/7): macro (0.8 + 6/7) / 2
    r = next(r for r in ann.rows if r["key"] == "A2" and r["system"] == "Oracle")
    assert r["v:f1_macro"] == pytest.approx((0.8 + 6 / 7) / 2)


def test_agreement_table_by_sklearn(comp):
    from sklearn.metrics import cohen_kappa_score
    tables, _ = section(comp)
    ag = {r["lang"]: r for r in tables["test-t1-test-agreement"].rows}
    a1 = [int(s < 2) for _ in range(6) for s in range(6)]
    a2 = [int(s < 3) for _ in range(6) for s in range(6)]
    assert ag["en"]["kappa"] == pytest.approx(cohen_kappa_score(a1, a2))


def test_correlation_with_document_properties(comp, tmp_path):
    from scipy.stats import spearmanr

    from shareval.platform.reports.build import store_properties
    vocab = {d: 100 + 7 * i for i, d in enumerate(DOCS)}
    text = "doc_id,vocabulary,year\n" + "".join(f"{d},{v},{2000 + i % 3}\n"
                                                for i, (d, v) in enumerate(vocab.items()))
    assert store_properties(comp["ds"], "props.csv", text.encode()) == 12
    tables, _ = section(comp)
    corr = {(r["system"], r["property"]): r for r in tables["test-t1-test-correlation"].rows}
    # Half scores 1.0 on d00-d05 and 0.4 on d06-d11, whose vocabularies are larger
    expected = spearmanr(list(vocab.values()), [1.0] * 6 + [0.4] * 6).statistic
    assert corr[("Half", "vocabulary")]["rho"] == pytest.approx(expected)
    assert corr[("Half", "vocabulary")]["n"] == 12
    # Oracle is 1.0 everywhere: rho undefined, said in a note, never a number
    assert corr[("Oracle", "vocabulary")]["rho"] is None or \
        np.isnan(corr[("Oracle", "vocabulary")]["rho"])
    assert any("cannot decide" in n for n in tables["test-t1-test-correlation"].notes)
    doc = tables["test-t1-test-per-document"]
    assert next(r for r in doc.rows if r["key"] == "d03")["o:vocabulary"] == 121.0


def test_combined_board_of_the_phase(comp):
    from shareval.platform.reports.build import build
    rep = build(comp["comp"], samples=200)
    sec = next(s for s in rep.sections if s.slug == "test-board-both")
    t = sec.tables[0]
    rows = {r["team"]: r for r in t.rows}
    # mean F1 over the two sets, by hand: Oracle (1 + 1) / 2; Zeros (0.4 + 0.7) / 2
    assert rows["Oracle"]["mean:f1_macro"] == pytest.approx(1.0)
    assert rows["Zeros"]["mean:f1_macro"] == pytest.approx(0.55)
    # Half has no primary on the other set: no combined value, and a note says so
    assert rows["Half"]["mean:f1_macro"] is None
    assert any(n.startswith("Half:") for n in t.notes)


def test_bad_properties_name_line_and_field(comp):
    from shareval.formats.errors import InvalidInput
    from shareval.platform.reports.build import store_properties, stored_properties
    with pytest.raises(InvalidInput) as e:
        store_properties(comp["ds"], "p.csv", b"doc_id,vocabulary\nd00,1\nd00,2\nd01\n")
    text = str(e.value)
    assert "p.csv:3" in text and "given twice" in text and "p.csv:4" in text
    assert stored_properties(comp["ds"]) == {}           # nothing stored
    # a header only is no document: refused, and what was stored stays
    assert store_properties(comp["ds"], "ok.csv", b"doc_id,year\nd00,2005\n") == 1
    with pytest.raises(InvalidInput, match="header only"):
        store_properties(comp["ds"], "empty.csv", b"doc_id,year\n")
    with pytest.raises(InvalidInput, match="control character"):
        store_properties(comp["ds"], "nul.csv", b"doc_id,year\nd\x0001,1\n")
    assert stored_properties(comp["ds"]) == {"d00": {"year": 2005}}      # an int, not 2005.0


def test_every_run_and_command_line_and_latex(comp, tmp_path):
    from rich.console import Console

    from shareval.platform.reports.cli import run as report_cli
    tables, _ = section(comp, runs="all")
    assert len(tables["test-t1-test-results"].rows) == 4       # Lonely's run too

    class Args:
        competition, phase, runs, out, properties, samples, rule = \
            "sv", None, "primary", str(tmp_path / "out"), [], 500, "majority"
    buf = io.StringIO()
    assert report_cli(Args, Console(file=buf, width=200)) == 0
    out = tmp_path / "out"
    assert (out / "index.html").is_file() and (out / "report.zip").is_file()
    rows = list(csv.reader(io.StringIO((out / "tables" / "test-t1-test-results.csv")
                                       .read_text())))
    assert rows[0][:4] == ["Rank", "Team", "Run", "F1 macro"]
    assert rows[1][1] == "Oracle" and float(rows[1][3]) == 1.0
    assert (out / "figures" / "test-t1-test-pr.pdf").stat().st_size > 1000
    assert (out / "figures" / "test-t1-test-languages.png").stat().st_size > 1000
    html = (out / "index.html").read_text()
    assert "SV-Ident &amp; co" in html and "nan" not in html.lower().replace("nonce", "")
    # a second build replaces the report; a folder holding anything else is refused whole
    assert report_cli(Args, Console(file=buf, width=200)) == 0
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.tex").write_text("my draft")
    Args.out = str(tmp_path / "paper")
    assert report_cli(Args, Console(file=buf, width=200)) == 2
    assert (tmp_path / "paper" / "paper.tex").read_text() == "my draft"
    assert "is not a report folder" in buf.getvalue()
    Args.out = str(out)
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (.ci/services.sh installs texlive)")
    p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                        "report.tex"], cwd=out, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]


def test_page_is_for_organizers_only(comp, client):
    from django.contrib.auth import get_user_model
    url = "/c/sv/report/"
    client.force_login(get_user_model().objects.get(username="oracle"))
    assert client.get(url).status_code == 404
    assert client.get("/c/sv/report/all-phases--primary/index.html").status_code == 404
    client.force_login(comp["org"])
    r = client.get(url, follow=True)
    assert r.status_code == 200 and b"Not built yet" in r.content
    r = client.post("/c/sv/report/all-phases--primary/", {"action": "build"}, follow=True)
    assert b"report built" in r.content and b"test-t1-test-results" in r.content
    assert client.get("/c/sv/report/all-phases--primary/figures/test-t1-test-pr.png") \
        .status_code == 200
    assert client.get("/c/sv/report/all-phases--primary/../../x").status_code == 404
    assert client.get("/c/sv/report/all-phases--primary/tables/..%2f..%2fx.csv") \
        .status_code == 404
    assert client.get("/c/sv/report/nophase--primary/").status_code == 404
    assert client.get("/c/sv/report/all-phases--primary/tables/" + "a" * 300 + ".csv") \
        .status_code == 404                   # a name too long for the file system


def test_statistics_of_another_metric_give_no_interval(comp):
    """KBP ranks by judged F1 while its stored per-unit statistics are entity F1: such
    statistics never lend their interval or test to the primary metric."""
    from shareval.platform.submissions.models import Score
    sc = Score.objects.get(submission__team__name="Half")
    sc.unit_stats = {**sc.unit_stats, "metric": "precision_macro"}
    sc.save()
    tables, _ = section(comp)
    row = next(r for r in tables["test-t1-test-results"].rows if r["team"] == "Half")
    assert row["ci"] is None
    assert any("statistics are of precision_macro, not of the primary metric f1_macro" in n
               for n in tables["test-t1-test-results"].notes)
