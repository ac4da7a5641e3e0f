"""The RCC catalog: dataset entries, their n-gram index and per-entry facts.

Everything here depends only on the catalog (and, for the embeddings, on the
encoder), so ``rcc_cache`` stores it between runs.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..progress import progress
from .text import MAX_N, STOPWORDS, YEAR, normalize, tokens

_MAIN_TITLE = re.compile(r"[,:(\[]")
EMBED_CHARS = 300       # characters of an entry's strings that are embedded


@dataclass
class Catalog:
    """Dataset entries: id -> strings (title first, then known mentions)."""
    ids: list[str]
    strings: list[list[str]]
    # n-gram -> entry numbers: a dict when built, a GramIndex when read from the cache
    index: Mapping[str, list[int]] = field(default_factory=dict)
    prefixes: set = field(default_factory=set)      # or GramIndex.rows (same ``in``)
    title_tokens: list[list[str]] = field(default_factory=list)
    entry_tokens: list[frozenset] = field(default_factory=list)
    years: list[frozenset] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    title_years: list[tuple] = field(default_factory=list)   # (first, last) year of the title
    main_titles: list[list[str]] = field(default_factory=list)
    _vectors: np.ndarray | None = None

    @classmethod
    def from_value(cls, value, show_progress: bool = False) -> "Catalog":
        """Accept ``{id: "title and mentions"}``, ``{id: {title, mentions}}`` or a list of
        ``{data_set_id, title, mentions}`` records (``name`` / ``mention_list`` also read).
        ``show_progress``: a progress bar while indexing (on a terminal)."""
        ids, strings = [], []
        items = value.items() if isinstance(value, dict) else (
            (r.get("data_set_id"), r) for r in value)
        for key, entry in items:
            if isinstance(entry, str):
                texts = [entry]
            elif isinstance(entry, dict):
                title = entry.get("title") or entry.get("name") or ""
                more = entry.get("mentions") or entry.get("mention_list") or []
                if isinstance(more, str):
                    more = [more]
                texts = [title, *more]
            else:
                raise ValueError(f"catalog entry {key!r}: expected a string or an object")
            texts = [normalize(t) for t in texts if isinstance(t, str) and t.strip()]
            if key is None or not texts:
                continue
            ids.append(str(key))
            strings.append(texts)
        if not ids:
            raise ValueError("the catalog has no entries")
        cat = cls(ids, strings)
        cat._build(show_progress)
        return cat

    @classmethod
    def load(cls, path: str | Path) -> "Catalog":
        return cls.from_value(json.loads(Path(path).read_text(encoding="utf-8")))

    def _build(self, show_progress: bool = False) -> None:
        index: dict[str, set] = defaultdict(set)
        entries = enumerate(self.strings)
        if show_progress:
            entries = progress(entries, len(self.strings), "indexing the catalog")
        for e, texts in entries:
            all_tokens: set[str] = set()
            for text in texts:
                toks = tokens(text)
                all_tokens.update(toks)
                for n in range(1, MAX_N + 1):
                    for i in range(len(toks) - n + 1):
                        gram = toks[i:i + n]
                        if _useful(gram):
                            index[" ".join(gram)].add(e)
            title = tokens(texts[0])[:12]
            self.title_tokens.append(title)
            self.entry_tokens.append(frozenset(t for t in all_tokens if t not in STOPWORDS))
            self.years.append(frozenset(YEAR.findall(" ".join(texts))))
            # entries with many known mentions are the often-cited ones
            self.sizes.append(sum(len(tokens(t)) for t in texts))
            self.title_years.append(title_span(tokens(texts[0])[:20]))
            self.main_titles.append(tokens(_MAIN_TITLE.split(texts[0], 1)[0])[:15])
        self.index = {g: sorted(es) for g, es in index.items()}
        # every word prefix of an indexed n-gram: a scan stops extending once it leaves them
        self.prefixes = set()
        for g in self.index:
            words = g.split(" ")
            for n in range(1, len(words) + 1):
                self.prefixes.add(" ".join(words[:n]))

    def phrase(self, e: int) -> str:
        """The entry's strings as one space-padded run of tokens, for substring tests."""
        return f" {' '.join(tokens(' '.join(self.strings[e])))} "

    def embedding_texts(self) -> list[str]:
        return [" ".join(t)[:EMBED_CHARS] for t in self.strings]

    def vectors(self, embed) -> np.ndarray:
        """Embeddings of each entry's strings (computed once per catalog; ``rcc_cache``
        keeps them between runs)."""
        if self._vectors is None:
            self._vectors = embed(self.embedding_texts())
        return self._vectors


class GramIndex(Mapping):
    """The n-gram index as read from a cache file: ``rows`` maps every word prefix of an
    n-gram to the n-gram's row (-1 for a prefix that is no n-gram), and a row's entry
    numbers are ``entries[starts[r]:starts[r + 1]]``, made into a list on first use.
    Reading 174,000 lists up front cost 0.2 s of a short run; a publication looks up a
    few thousand. Behaves as the ``{n-gram: [entry, ...]}`` dict that ``_build`` makes
    (same lists, same order); ``rows`` serves as the prefix set."""

    def __init__(self, rows: dict[str, int], starts: list[int], entries: list[int]):
        self.rows = rows
        self._starts = starts
        self._entries = entries
        self._lists: list = [None] * (len(starts) - 1)

    def get(self, key, default=None):
        r = self.rows.get(key, -1)
        if r < 0:
            return default
        found = self._lists[r]
        if found is None:
            found = self._lists[r] = self._entries[self._starts[r]:self._starts[r + 1]]
        return found

    def __getitem__(self, key):
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return self.rows.get(key, -1) >= 0

    def __len__(self) -> int:
        return len(self._lists)

    def __iter__(self):
        grams = [None] * len(self._lists)
        for g, r in self.rows.items():
            if r >= 0:
                grams[r] = g
        return iter(grams)


def _useful(gram: list[str]) -> bool:
    if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
        return False
    if len(gram) == 1:
        t = gram[0]
        return len(t) >= 3 and not t.isdigit()
    return not all(t.isdigit() for t in gram)


_SPAN_JOINS = frozenset("""to through thru until and january february march april may june
july august september october november december fall spring summer winter""".split())


def title_span(toks: list[str]) -> tuple[int, int] | None:
    """First and last year of the first run of years in a title's tokens: "2003 2004",
    "1992 to 1994", "1998 2006 and 2012", "september 1992 may 1993". Only the first
    run counts, because a flat catalog string goes on with the known mentions right
    after the title: in "NHANES, 2003-2004 (NHANES) 1999-2006 ..." the span is 2003-2004,
    not the 1999-2006 that all the series' waves list."""
    run: list[int] = []
    gap = 0
    for t in toks:
        if YEAR.fullmatch(t):
            run.append(int(t))
            gap = 0
        elif run and t in _SPAN_JOINS and gap == 0:
            gap = 1
        elif run:
            break
    return (min(run), max(run)) if run else None
