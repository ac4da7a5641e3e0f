"""The report's table writer: missing values, bold best per group, escaping, and LaTeX
that compiles."""
import csv
import io
import shutil
import subprocess

import pytest

from shareval.overview.tables import (COUNT, INTERVAL, NUMBER, PVALUE, TEXT, Column, Table,
                                      best_cells, latex_document, to_csv, to_html, to_latex)


def table():
    cols = [Column("key", "Doc", TEXT), Column("team", "Team", TEXT),
            Column("f1", "F1", NUMBER, "max"), Column("err", "Error", NUMBER, "min"),
            Column("n", "#", COUNT), Column("ci", "95% CI", INTERVAL),
            Column("p", "p", PVALUE)]
    rows = [{"key": "d1", "team": "A&B_team", "f1": 0.5, "err": 0.2, "n": 3,
             "ci": (0.4, 0.6), "p": 0.00001},
            {"key": "d1", "team": "=cmd", "f1": 0.50004, "err": float("nan"), "n": 3,
             "ci": None, "p": 0.2},
            {"key": "d2", "team": "A&B_team", "f1": 0.1, "err": 0.9, "n": 5,
             "ci": (0.0, 0.2), "p": None},
            {"key": "d2", "team": "=cmd", "f1": 0.3, "err": 0.1, "n": 5, "ci": (0.2, 0.4),
             "p": 0.5}]
    return Table("t-1", "Results & more", cols, rows, ["a note with 50% and $x$"],
                 group_by="key")


def test_best_is_per_group_and_ties_as_written_are_all_bold():
    bold = best_cells(table())
    # d1: 0.5 and 0.50004 both read 0.5000 -> both bold; error: 0.2 (the NaN is no value)
    assert {(0, "f1"), (1, "f1"), (0, "err")} <= bold
    # d2: 0.3 beats 0.1; error 0.1 beats 0.9
    assert (3, "f1") in bold and (2, "f1") not in bold
    assert (3, "err") in bold and (2, "err") not in bold
    assert not any(k in ("n", "ci", "p", "team") for _, k in bold)


def test_csv_keeps_full_precision_and_blanks_missing_and_defuses_formulas():
    rows = list(csv.reader(io.StringIO(to_csv(table()))))
    assert rows[0] == ["Doc", "Team", "F1", "Error", "#", "95% CI", "p"]
    assert rows[2][1] == "'=cmd"                  # never a spreadsheet formula
    assert rows[2][2] == "0.50004" and rows[2][3] == "" and rows[2][5] == ""
    assert rows[1][5] == "0.4;0.6"
    assert rows[-1] == ["# a note with 50% and $x$"]


def test_html_escapes_and_marks_missing():
    h = to_html(table())
    assert "A&amp;B_team" in h and "<strong>0.5000</strong>" in h
    assert "nan" not in h.lower().replace("notes", "")
    assert h.count(">--<") == 3           # NaN error, missing CI, missing p
    assert "&lt;0.0001" in h              # a p below the digits shown
    assert 'class="group-start"' in h


def test_latex_escapes_and_bolds():
    tex = to_latex(table())
    assert r"A\&B\_team" in tex and r"50\% and \$x\$" in tex
    assert r"\textbf{0.5000}" in tex and r"\textbf{0.3000}" in tex
    assert "nan" not in tex.lower()
    assert tex.count(r"\midrule") == 2    # header rule, then one between the two documents
    assert r"\textless{}0.0001" in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (.ci/services.sh installs texlive)")
def test_latex_document_compiles(tmp_path):
    second = table()
    second.slug = "t-2"
    long = table()                      # 60 rows: a longtable across pages
    long.slug, long.rows = "t-long", [dict(r, key=f"d{i // 2}") for i, r in
                                      enumerate(table().rows * 15)]
    wide = Table("t-wide", "Wide", [Column("s", "", TEXT)] + [
        Column(f"c{j}", f"Team number {j}", PVALUE) for j in range(20)],
        [{"s": f"Team number {i}", **{f"c{j}": 0.01 * j for j in range(20)}} for i in range(20)])
    odd = table()                       # what team names and document ids may hold
    odd.slug = "t-odd"
    odd.rows[0]["key"] = "[0.1]"
    odd.rows[1]["team"] = "中文 Ωmega ≥ ∞ Łódź \\input{/etc/passwd} \\write18{ls}"
    doc = latex_document([table(), second, long, wide, odd], "Competition: phase & test_1")
    assert "?? $\\Omega$mega $\\geq$ $\\infty$ Łódź \\textbackslash{}input" in doc
    assert "{[}0.1{]}" in doc and "written as ?" in doc
    assert r"\begin{longtable}" in doc and r"\resizebox{\linewidth}" in doc
    (tmp_path / "r.tex").write_text(doc)
    for _ in range(2):              # labels and longtable widths settle on the second run
        p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout[-2000:]
    assert (tmp_path / "r.pdf").stat().st_size > 1000
    log = p.stdout.split("Output written")[0]
    assert "Warning" not in log and "Overfull" not in log
