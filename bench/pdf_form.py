"""A simulation of PDF-to-text output, made from the processed JSON texts.

    python bench/pdf_form.py --data ../shared/data OUT [--count 200] [--width 80] [--keep-lines]
                             [--references]

The shared data holds no PDFs and no PDF-to-text files for its publications, so
this renders each held-out publication's JSON text the way ``pdftotext`` lays out
pages: the words re-wrapped at ``--width`` characters, long words hyphenated
across line ends ("conduc-" / "ted"), pages of 48 lines separated by a form feed,
each page after the first opening with a running header (the title and the
authors' line, alternating) and closing with a page number. It writes
``OUT/<id>.txt`` for the first ``--count`` held-out publications (in id order);
``bench/quality.py --raw OUT`` then scores them in both forms.

``--keep-lines`` keeps the JSON text's own line breaks, which are the lines of the
competition's conversion that the JSON kept, instead of re-wrapping the words (a
rule that reads lines, such as dropping digit-heavy ones, sees other lines in a
re-wrapped text than in the conversion). Only the page furniture and the reference
entries are added; there is then no hyphenation.

``--references`` also appends a made-up reference list, since a real conversion
keeps every entry while the JSON texts lost most of them (lines with many digits
were dropped): a "References" heading and 20-45 entries in author-year form
("Surname, I., Surname, I. (2004). Title. Journal, 12(3), 45-67."), seeded by the
publication id, their years within the 25 years up to the latest the text names.
Each entry's title is, with probability ``OTHER``, a phrase naming a dataset that
another training publication's gold citations mention ("Trends in the Health and
Retirement Study"), else a run of 6-12 words from another training
publication; each dataset the publication itself cites gets an entry of its own with
probability ``OWN`` (papers cite the documentation of the data they use). How often
real reference lists name datasets is not known here; OTHER and OWN are guesses, not
fitted to anything. Headings (short lines) stay on lines of their own, as
``pdftotext`` keeps them.

It is a simulation: a real conversion also splits columns and garbles tables and
ligatures, which this does not reproduce. It is deterministic.
"""
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from shareval.systems.text import YEAR, read_document
from shareval.systems.training import rcc_held_out

LINES_PER_PAGE = 48
OTHER = 0.2         # share of reference entries naming another publication's dataset
OWN = 0.3           # chance that a dataset the publication cites has an entry
_SURNAMES = ("Smith", "Johnson", "Garcia", "Brown", "Miller", "Davis", "Martinez", "Wilson",
             "Anderson", "Taylor", "Thomas", "Moore", "Jackson", "Martin", "Lee", "Thompson",
             "White", "Harris", "Clark", "Lewis", "Robinson", "Walker", "Young", "Allen",
             "King", "Wright", "Scott", "Green", "Baker", "Adams", "Nelson", "Hill", "Kessler",
             "Duncan", "Hauser", "Card", "Heckman", "Schmidt", "Wagner", "Chen", "Wang")
_JOURNALS = ("American Journal of Public Health", "Demography", "Journal of Health Economics",
             "Social Science & Medicine", "American Economic Review", "Pediatrics",
             "Journal of Marriage and Family", "Health Affairs", "Review of Economics and "
             "Statistics", "American Sociological Review", "JAMA", "Medical Care")
_TEMPLATES = ("Evidence from the {}", "Trends in the {}", "{}: design and methods",
              "An analysis of the {}", "Sampling and weighting in the {}",
              "Measurement error in the {}", "{}, user's guide", "Findings from the {}")
_HEADING_LINE = re.compile(r"^[A-Z0-9][^.!?]{0,40}$")


class Simulator:
    """Reference lists for publications (``--references``), from the training
    publications' gold mentions and texts."""

    def __init__(self, data: Path, pool: int = 300):
        train = data / "rcc" / "train"
        self.mentions: dict[str, list[str]] = {}
        for c in json.loads((train / "data_set_citations.json").read_text()):
            if not rcc_held_out(c["publication_id"]):
                self.mentions.setdefault(str(c["publication_id"]), []).extend(
                    " ".join(m.split()) for m in c.get("mention_list") or [] if m.strip())
        self.own: dict[str, list[list[str]]] = {}
        for c in json.loads((train / "data_set_citations.json").read_text()):
            self.own.setdefault(str(c["publication_id"]), []).append(
                [" ".join(m.split()) for m in c.get("mention_list") or [] if m.strip()])
        ids = sorted(self.mentions, key=int)
        rng = random.Random(0)
        self.windows: list[tuple[str, str]] = []      # (publication id, words)
        for pid in rng.sample(ids, min(pool, len(ids))):
            words = read_document(train / "texts" / f"{pid}.json").split()
            for _ in range(20):
                k, n = rng.randrange(max(1, len(words) - 12)), rng.randint(6, 12)
                self.windows.append((pid, " ".join(words[k:k + n]).strip(".,;:")))
        self.names = [(pid, m) for pid in ids for m in self.mentions[pid]]

    def references(self, pid: str, text: str = "") -> list[str]:
        """Entries of a made-up reference list for publication ``pid`` (seeded by it).
        Their years lie in the 25 years up to the latest year ``text`` names (a paper
        cites older work; 2005 when it names none)."""
        rng = random.Random(int(pid))
        years = sorted(int(y) for y in YEAR.findall(text) if int(y) <= 2018)
        latest = years[int(0.95 * (len(years) - 1))] if years else 2005
        titles = []
        for _ in range(rng.randint(20, 45)):
            if rng.random() < OTHER:
                other, name = rng.choice(self.names)
                if other != pid:
                    titles.append(rng.choice(_TEMPLATES).format(name))
                    continue
            other, words = rng.choice(self.windows)
            if other != pid and words:
                titles.append(words[0].upper() + words[1:])
        for names in self.own.get(pid, []):
            if names and rng.random() < OWN:
                titles.append(rng.choice(_TEMPLATES).format(rng.choice(names)))
        entries = []
        for title in titles:
            authors = [f"{rng.choice(_SURNAMES)}, {chr(65 + rng.randrange(26))}."
                       for _ in range(rng.randint(1, 4))]
            year = rng.randint(latest - 25, latest)
            entries.append(f"{', '.join(authors)} ({year}). {title}. "
                           f"{rng.choice(_JOURNALS)}, {rng.randint(1, 90)}"
                           f"({rng.randint(1, 12)}), {rng.randint(1, 900)}-"
                           f"{rng.randint(901, 990)}.")
        return sorted(entries)


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


def render(text: str, width: int = 80, references: list[str] | None = None,
           keep_lines: bool = False) -> str:
    """``text`` laid out as pages of ``pdftotext`` output (see the module docstring),
    followed by a "References" heading and ``references`` (one entry per paragraph)
    when given; headings then stay on lines of their own. ``keep_lines`` keeps the
    text's own lines (the conversion's lines that the JSON kept) instead of re-wrapping
    them; only the reference entries are wrapped."""
    source = [ln.strip() for ln in text.splitlines() if ln.strip()]
    long = [ln for ln in source if len(ln.split()) >= 3] or source or [""]
    title = long[min(1, len(long) - 1)][:60]        # the first line is often "Abstract ..."
    authors = long[0].split()[0] + " et al."
    if keep_lines:
        body = list(source)
    elif references is None:
        body = _wrap(" ".join(source).split(), width)
    else:
        body, block = [], []
        for ln in source:
            if len(ln.split()) <= 4 and _HEADING_LINE.match(ln):
                body += [*_wrap(" ".join(block).split(), width), ln]
                block = []
            else:
                block.append(ln)
        body += _wrap(" ".join(block).split(), width)
    if references is not None:
        body += ["", "References"]
        for entry in references:
            body += _wrap(entry.split(), width)
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
    ap.add_argument("--references", action="store_true",
                    help="append a made-up reference list (see the module docstring)")
    ap.add_argument("--keep-lines", action="store_true",
                    help="keep the JSON text's own lines instead of re-wrapping them")
    args = ap.parse_args()
    sim = Simulator(args.data) if args.references else None
    texts = args.data / "rcc" / "train" / "texts"
    held = sorted((p for p in texts.glob("*.json") if rcc_held_out(p.stem)),
                  key=lambda p: int(p.stem))[:args.count]
    args.out.mkdir(parents=True, exist_ok=True)
    for p in held:
        text = read_document(p)
        refs = sim.references(p.stem, text) if sim else None
        (args.out / f"{p.stem}.txt").write_text(render(text, args.width, refs, args.keep_lines),
                                                encoding="utf-8")
    print(f"{len(held)} publications written to {args.out}")


if __name__ == "__main__":
    main()
