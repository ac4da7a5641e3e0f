"""A simulation of PDF-to-text output, made from the processed JSON texts.

    python bench/pdf_form.py --data ../shared/data OUT [--count 200] [--width 80]

The shared data holds no PDFs and no PDF-to-text files for its publications, so
this renders each held-out publication's JSON text the way ``pdftotext`` lays out
pages: the words re-wrapped at ``--width`` characters, long words hyphenated
across line ends ("conduc-" / "ted"), pages of 48 lines separated by a form feed,
each page after the first opening with a running header (the title and the
authors' line, alternating) and closing with a page number. It writes
``OUT/<id>.txt`` for the first ``--count`` held-out publications (in id order);
``bench/quality.py --raw OUT`` then scores them in both forms.

It is a simulation: a real conversion also splits columns, keeps the reference
entries (the JSON texts dropped lines with many digits) and garbles tables and
ligatures, which this does not reproduce. It is deterministic.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from shareval.systems.text import read_document
from shareval.systems.training import rcc_held_out

LINES_PER_PAGE = 48


def _wrap(words: list[str], width: int) -> list[str]:
    lines, line = [], ""
    for w in words:
        while True:
            if not line:
                room = width
            else:
                room = width - len(line) - 1
            if len(w) <= room:
                line = f"{line} {w}" if line else w
                break
            # hyphenate a long alphabetic word when at least 3 letters fit and 3 remain
            cut = room - 1
            if w.isalpha() and len(w) >= 7 and 3 <= cut <= len(w) - 3:
                lines.append(f"{line} {w[:cut]}-" if line else f"{w[:cut]}-")
                line, w = "", w[cut:]
                continue
            if line:
                lines.append(line)
                line = ""
                continue
            lines.append(w)              # a word longer than the line
            break
    if line:
        lines.append(line)
    return lines


def render(text: str, width: int = 80) -> str:
    """``text`` laid out as pages of ``pdftotext`` output (see the module docstring)."""
    source = [ln.strip() for ln in text.splitlines() if ln.strip()]
    long = [ln for ln in source if len(ln.split()) >= 3] or source or [""]
    title = long[min(1, len(long) - 1)][:60]        # the first line is often "Abstract ..."
    authors = long[0].split()[0] + " et al."
    body = _wrap(" ".join(source).split(), width)
    pages = []
    for k, start in enumerate(range(0, len(body), LINES_PER_PAGE)):
        lines = body[start:start + LINES_PER_PAGE]
        if k:
            header = title if k % 2 else authors
            lines = [header, "", *lines]
        pages.append("\n".join([*lines, "", str(k + 1)]))
    return "\f".join(pages) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--width", type=int, default=80)
    args = ap.parse_args()
    texts = args.data / "rcc" / "train" / "texts"
    held = sorted((p for p in texts.glob("*.json") if rcc_held_out(p.stem)),
                  key=lambda p: int(p.stem))[:args.count]
    args.out.mkdir(parents=True, exist_ok=True)
    for p in held:
        (args.out / f"{p.stem}.txt").write_text(render(read_document(p), args.width),
                                                encoding="utf-8")
    print(f"{len(held)} publications written to {args.out}")


if __name__ == "__main__":
    main()
