"""One table of the organizers' report, written three ways: CSV, LaTeX (booktabs,
the best value of each column in bold) and HTML.

A cell with no value is never a blank or a printed NaN: it is ``--`` and the
table's notes say why. Values are kept as numbers until written.
"""
from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import dataclass, field

TEXT, NUMBER, COUNT, INTERVAL, PVALUE = "text", "number", "count", "interval", "p"
MISSING = "--"


@dataclass
class Column:
    key: str
    label: str
    kind: str = NUMBER
    best: str | None = None      # "max" | "min": that value is bold (within each group)
    digits: int = 4
    width: str = ""              # LaTeX: a wrapped column of this width ("0.7\\linewidth")


@dataclass
class Table:
    slug: str                    # file name stem: <slug>.csv, <slug>.tex
    title: str
    columns: list[Column]
    rows: list[dict]             # column key -> value (None: missing)
    notes: list[str] = field(default_factory=list)
    group_by: str | None = None  # the best value is bold within each run of this column
    caption: str = ""
    paper: bool = True           # False: too long for a paper, written as CSV only


def number(v) -> float | None:
    """A finite number, else None (NaN, inf, text, bool are not values)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _text(col: Column, v) -> str:
    if col.kind == TEXT:
        return MISSING if v in (None, "") else str(v)
    if col.kind == INTERVAL:
        if not isinstance(v, (tuple, list)) or len(v) != 2 \
                or number(v[0]) is None or number(v[1]) is None:
            return MISSING
        return f"[{v[0]:.{col.digits}f}, {v[1]:.{col.digits}f}]"
    x = number(v)
    if x is None:
        return MISSING
    if col.kind == COUNT:
        return str(int(round(x)))
    if col.kind == PVALUE and x < 10 ** -col.digits:
        return f"<{10 ** -col.digits:.{col.digits}f}"
    return f"{x:.{col.digits}f}"


def _groups(t: Table) -> list[list[int]]:
    """Row indices in runs of equal ``group_by`` value (all rows when none)."""
    if not t.group_by:
        return [list(range(len(t.rows)))]
    out: list[list[int]] = []
    prev = object()
    for i, r in enumerate(t.rows):
        if r.get(t.group_by) != prev:
            out.append([])
            prev = r.get(t.group_by)
        out[-1].append(i)
    return out


def best_cells(t: Table) -> set[tuple[int, str]]:
    """(row index, column key) of the best value per column and group, ties all bold;
    compared as written (4 decimals), as a reader compares them."""
    bold = set()
    for col in t.columns:
        if col.best not in ("max", "min"):
            continue
        for idx in _groups(t):
            shown = {i: round(x, col.digits) for i in idx
                     if (x := number(t.rows[i].get(col.key))) is not None}
            if not shown:
                continue
            top = (max if col.best == "max" else min)(shown.values())
            bold.update((i, col.key) for i, v in shown.items() if v == top)
    return bold


def to_csv(t: Table) -> str:
    """Full precision numbers (as stored, repr), empty cells for missing values,
    then the notes as '# ' lines."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([_csv_safe(c.label) for c in t.columns])
    for r in t.rows:
        row = []
        for c in t.columns:
            v = r.get(c.key)
            if c.kind == INTERVAL:
                row.append("" if _text(c, v) == MISSING else f"{v[0]!r};{v[1]!r}")
            elif c.kind == TEXT:
                row.append("" if v is None else _csv_safe(str(v)))
            else:
                x = number(v)
                row.append("" if x is None else (str(int(x)) if c.kind == COUNT else repr(x)))
        w.writerow(row)
    for n in t.notes:
        w.writerow([f"# {n}"])
    return buf.getvalue()


def _sentence(note: str) -> str:
    """A note as a sentence, so that notes run on in a paragraph read apart."""
    note = note.strip()
    note = note[:1].upper() + note[1:]
    return note if note.endswith((".", "?", "!", ")")) else note + "."


def _csv_safe(s: str) -> str:
    """A team name cannot become a spreadsheet formula."""
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
                  # "\\ [0.1]" would read a row's first cell as the rule's spacing
                  "[": "{[}", "]": "{]}",
                  "≥": r"$\geq$", "≤": r"$\leq$", "≠": r"$\neq$", "∞": r"$\infty$",
                  "→": r"$\rightarrow$", "−": "-"}
# what pdflatex (utf8 inputenc, T1 fonts) sets: ASCII, Latin-1 and Latin Extended-A but
# for a few letters, and common punctuation (found by compiling every character)
_LATIN_GAPS = {0x126, 0x127, 0x138, 0x13F, 0x140, 0x149, 0x166, 0x167}
_PUNCTUATION = {0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2020, 0x2021, 0x2022,
                0x2026, 0x2030, 0x20AC, 0x2122}
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
          "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi",
          "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma",
          "Upsilon", "Phi", "Psi", "Omega"}
UNSET = "?"


def _latex_char(ch: str) -> str:
    if ch in LATEX_SPECIALS:
        return LATEX_SPECIALS[ch]
    o = ord(ch)
    if o < 0x80:
        return ch if ch.isprintable() else " "
    if 0xA0 <= o <= 0x17E and o not in _LATIN_GAPS or o in _PUNCTUATION:
        return ch
    import unicodedata
    name = unicodedata.name(ch, "")
    if name.startswith("GREEK ") and " LETTER " in name:
        word = name.rsplit(" ", 1)[-1].lower()
        word = word.capitalize() if "CAPITAL" in name else word
        if word in _GREEK:
            return rf"$\{word}$"
    return UNSET


def latex_escape(s: str) -> str:
    """Text set as written: LaTeX's special characters escaped, a character pdflatex
    cannot set (CJK, most symbols) written as '?' (the CSV and HTML keep it)."""
    return "".join(_latex_char(ch) for ch in str(s))


def latex_unset(s: str) -> bool:
    return any(_latex_char(ch) == UNSET and ch != UNSET for ch in str(s))


LONG_ROWS = 40        # more rows: a longtable that breaks across pages
WIDE_COLUMNS = 10    # more columns: scaled to the line width


def to_latex(t: Table) -> str:
    """A ``table`` float with a booktabs ``tabular`` (scaled to the line when it has many
    columns), or a ``longtable`` when it has many rows; a rule between groups; the notes
    in small print under it. Needs booktabs, longtable and graphicx."""
    bold = best_cells(t)
    spec = "".join(f"p{{{c.width}}}" if c.width else "l" if c.kind == TEXT else "r"
                   for c in t.columns)
    head = " & ".join(latex_escape(c.label) for c in t.columns) + r" \\"
    body = []
    for g, idx in enumerate(_groups(t)):
        if g and t.group_by:
            body.append(r"\midrule")
        for i in idx:
            cells = []
            for c in t.columns:
                text = latex_escape(_text(c, t.rows[i].get(c.key)))
                cells.append(rf"\textbf{{{text}}}" if (i, c.key) in bold else text)
            body.append(" & ".join(cells) + r" \\")
    texts = [c.label for c in t.columns] + [str(v) for r in t.rows for v in r.values()
                                             if isinstance(v, str)] + [t.title, t.caption]
    extra = ["Characters pdflatex cannot set are written as ?; the CSV and HTML keep "
             "them."] if any(latex_unset(x) for x in texts) else []
    notes = " ".join(latex_escape(_sentence(n)) for n in t.notes + extra)
    caption = rf"\caption{{{latex_escape(t.caption or t.title)}}}"
    label = rf"\label{{tab:{latex_escape(t.slug)}}}"
    if len(t.rows) > LONG_ROWS:
        lines = [r"{\small", rf"\begin{{longtable}}{{{spec}}}", caption + label + r" \\",
                 r"\toprule", head, r"\midrule", r"\endfirsthead", r"\toprule", head,
                 r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot", *body,
                 r"\end{longtable}}"]
        if notes:
            lines.append(r"{\footnotesize " + notes + r"\par}")
        return "\n".join(lines) + "\n"
    tabular = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", head, r"\midrule", *body,
               r"\bottomrule", r"\end{tabular}"]
    if len(t.columns) > WIDE_COLUMNS:
        tabular = [r"\resizebox{\linewidth}{!}{%", *tabular, "}"]
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small", *tabular]
    if notes:
        lines.append(r"\par\smallskip\parbox{\linewidth}{\footnotesize " + notes + "}")
    lines += [caption, label, r"\end{table}"]
    return "\n".join(lines) + "\n"


def latex_document(tables: list[Table], title: str) -> str:
    """Every table in one compilable document (report.tex)."""
    body = "\n".join(to_latex(t) + r"\clearpage" for t in tables)
    return "\n".join([r"\documentclass[a4paper]{article}", r"\usepackage[utf8]{inputenc}",
                      r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}", r"\usepackage{longtable}",
                      r"\usepackage{graphicx}",
                      r"\usepackage[margin=1.5cm,landscape]{geometry}",
                      rf"\title{{{latex_escape(title)}}}", r"\date{}", r"\begin{document}",
                      r"\author{}", r"\maketitle", body, r"\end{document}"]) + "\n"


def to_html(t: Table) -> str:
    """A <table> with the best cells in <strong>, notes in a list below; all text escaped."""
    bold = best_cells(t)
    e = html.escape
    out = [f'<table class="report" id="{e(t.slug)}"><caption>{e(t.title)}</caption><thead><tr>']
    out += [f'<th class="{"num" if c.kind != TEXT else "text"}">{e(c.label)}</th>'
            for c in t.columns]
    out.append("</tr></thead><tbody>")
    groups = _groups(t)
    for g, idx in enumerate(groups):
        for n, i in enumerate(idx):
            cls = ' class="group-start"' if t.group_by and g and n == 0 else ""
            out.append(f"<tr{cls}>")
            for c in t.columns:
                text = e(_text(c, t.rows[i].get(c.key)))
                if (i, c.key) in bold:
                    text = f"<strong>{text}</strong>"
                out.append(f'<td class="{"num" if c.kind != TEXT else "text"}">{text}</td>')
            out.append("</tr>")
    out.append("</tbody></table>")
    if t.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in t.notes)
                   + "</ul>")
    return "".join(out)
