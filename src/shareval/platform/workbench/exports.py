"""Files out of and into a project, in the formats people use (formats.transfer_io)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from shareval.formats.errors import InvalidInput, Problems

from .models import Project

FORMATS = {"rcc": "RCC gold folder (data_set_citations.json, data_set_mentions.json, "
                  "publications.json)",
           "svident": "SV-Ident TSV (is_variable, variable)",
           "redocred": "Re-DocRED JSON (vertexSet, labels)",
           "xmi": "UIMA CAS XMI (INCEpTION, dkpro-cassis)",
           "webanno": "WebAnno TSV 3.3 (INCEpTION)",
           "brat": "brat standoff (.txt + .ann)"}
OF_KIND = {"rcc-pairs": ("rcc", "xmi", "webanno", "brat"),
           "rcc-publications": ("rcc", "xmi", "webanno", "brat"),
           "svident": ("svident", "xmi", "webanno"),
           "kbp": ("redocred", "xmi", "webanno", "brat"),
           "text": ("xmi", "webanno", "brat")}


def formats_of(project: Project) -> list[tuple[str, str]]:
    return [(f, FORMATS[f]) for f in OF_KIND[project.kind]]


SUFFIX = {"xmi": ".zip", "webanno": ".zip", "brat": ".zip", "svident": ".tsv", "rcc": ""}


def write_format(project: Project, docs, fmt: str, dest: Path) -> Path:
    """Write ``docs`` in ``fmt`` as ``dest`` (plus the format's suffix): a zip, a TSV, an
    RCC gold folder, or a Re-DocRED folder (documents and relations.json); the path
    written."""
    from shareval.formats.kbp import DOCUMENTS
    from shareval.formats.transfer_io import write_export
    if fmt not in OF_KIND[project.kind]:
        raise ValueError(f"a {project.get_kind_display()} project exports "
                         f"{', '.join(OF_KIND[project.kind])}, not {fmt}")
    dest = Path(dest)
    if fmt == "redocred":
        dest.mkdir(parents=True, exist_ok=True)
        relations = {r: r for r in project.schema.get("relations") or []} or None
        write_export(docs, fmt, dest / DOCUMENTS, relations)
        return dest
    return write_export(docs, fmt, dest.with_name(dest.name + SUFFIX[fmt]))


def export_archive(project: Project, docs, fmt: str) -> tuple[Path, Path]:
    """(a temporary folder, the single file to send: the format's own file, or a zip
    of its folder). The caller removes the folder."""
    tmp = Path(tempfile.mkdtemp(prefix="wb-export-"))
    out = write_format(project, docs, fmt, tmp / f"{project.slug}-{fmt}")
    if out.is_dir():
        out = Path(shutil.make_archive(str(tmp / f"{project.slug}-{fmt}"), "zip", out))
    return tmp, out


def read_format(project: Project, path: Path, fmt: str):
    """Documents from an uploaded file; ``InvalidInput`` with every problem (file, line,
    field) when it does not fit the project's units."""
    from shareval.formats.transfer_io import read_import
    if fmt not in OF_KIND[project.kind]:
        raise ValueError(f"a {project.get_kind_display()} project imports "
                         f"{', '.join(OF_KIND[project.kind])}, not {fmt}")
    expected = dict(project.units.values_list("key", "text"))
    problems = Problems()
    docs = read_import(Path(path), fmt, expected, problems)
    if problems.total or docs is None:
        raise InvalidInput(problems.items)
    return docs
