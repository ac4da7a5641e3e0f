"""Making a project from the browser: the same corpora as ``shareval server workbench
create``, uploaded (RCC texts as a zip of ``<id>.json|.txt|.pdf``). Uploads are
hostile: a zip is read through formats.zipped (size cap, no paths out of it), each
member written under a fresh temporary folder by a name made safe here."""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from django.db import transaction

from shareval.formats.digits import natural_key
from shareval.formats.errors import Problems
from shareval.formats.zipped import read_files

from . import service, sources

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,48}$")
TEXT_SUFFIXES = (".json", ".txt", ".pdf")


class CreateRefused(ValueError):
    pass


def _save(upload, folder: Path, name: str) -> Path:
    path = folder / name
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return path


def upload_name(name: str) -> str:
    """An uploaded file's own name, made safe to write in a fresh folder."""
    base = Path(name or "upload").name
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in base)[:120] or "upload"


def without(folder: Path, text: str) -> str:
    """A message about files of a temporary folder, naming them as uploaded."""
    return text.replace(str(folder) + "/", "")


def _texts(upload, folder: Path) -> tuple[Path, list[str]]:
    """Unpack the texts zip (or one text) into ``folder/texts``; the publication ids."""
    (folder / "upload").mkdir()
    raw = _save(upload, folder / "upload", upload_name(upload.name))
    problems = Problems()
    files = read_files(raw, problems, TEXT_SUFFIXES)
    if problems.total or not files:
        raise CreateRefused(without(folder / "upload", "; ".join(
            str(p) for p in problems.items[:3]) or f"{upload.name}: no .json, .txt or .pdf "
                                                   f"file in it"))
    out = folder / "texts"
    out.mkdir()
    ids = []
    for name, data in files.items():
        stem, suffix = Path(name).stem, Path(name).suffix.lower()
        if not re.fullmatch(r"[\w.-]{1,100}", stem) or stem.startswith("."):
            raise CreateRefused(f"{upload.name}/{name}: a text is named by its publication "
                                f"id (letters, digits, - _ .)")
        if stem in ids:
            raise CreateRefused(f"{upload.name}/{name}: publication {stem} is there twice")
        (out / f"{stem}{suffix}").write_bytes(data)
        ids.append(stem)
    return out, sorted(ids, key=natural_key)


def create_from_uploads(comp, user, fields: dict, files: dict):
    """The project and what was loaded; ``CreateRefused`` names the field or file."""
    slug, kind = fields.get("slug", "").strip(), fields.get("kind", "")
    if not SLUG.match(slug):
        raise CreateRefused("slug: lower-case letters, digits and dashes")
    if kind not in ("rcc-pairs", "rcc-publications", "svident", "kbp"):
        raise CreateRefused("kind: choose one")
    need = {"rcc-pairs": ("texts", "catalog"), "rcc-publications": ("texts", "catalog"),
            "svident": ("sentences",), "kbp": ("documents",)}[kind]
    lacking = [n for n in need if n not in files]
    if lacking:
        raise CreateRefused(f"a {kind} project needs the file(s): {', '.join(lacking)}")
    try:
        per_unit = int(fields.get("per_unit") or 1)
    except ValueError:
        raise CreateRefused("annotators per unit: a whole number") from None
    tmp = Path(tempfile.mkdtemp(prefix="wb-create-"))
    try:
        with transaction.atomic():
            pr = service.create_project(comp, slug, fields.get("title", "").strip() or slug,
                                        kind, user, codebook=fields.get("codebook", ""),
                                        per_unit=per_unit,
                                        suggestions=fields.get("suggestions") == "on")
            if kind.startswith("rcc"):
                texts, ids = _texts(files["texts"], tmp)
                n = sources.load_rcc(
                    pr, texts, ids, _save(files["catalog"], tmp, "catalog.json"),
                    _save(files["citations"], tmp, "citations.json") if "citations" in files
                    else None,
                    _save(files["families"], tmp, "families.csv") if "families" in files
                    else None, pr.suggestions)
            elif kind == "svident":
                n = sources.load_svident(
                    pr, _save(files["sentences"], tmp, "sentences.tsv"),
                    _save(files["vocabulary"], tmp, "vocabulary.tsv") if "vocabulary" in files
                    else None, None, pr.suggestions)
            else:
                n = sources.load_redocred(pr, _save(files["documents"], tmp, "documents.json"))
        return pr, n
    except (sources.SourceError, UnicodeDecodeError) as e:
        raise CreateRefused(str(e).replace(str(tmp) + "/", "")) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
