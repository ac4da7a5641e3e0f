"""The demo teams' submission archives (plan 8.2): CLIR and E2E, canonical names.

An E2E archive holds one folder per query: ``<QueryID>.tsv`` whose Y lines
name ``<TeamID>.<SysLabel>.<QueryID>.<DocID>.json``, that summary metadata
(plan 7.2.4.3) and its image (a PNG exactly 1024 px wide, 7.2.4.5). The
summary is the document's sentences that best match the query, at most 100
words. Archives are written byte for byte the same every time (fixed member
times and order), so the demo's files can be compared across builds.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from shareval.platform.demo_material import summary_image
from shareval.platform.demo_material.corpus import DATASET_NAME, PERIOD, QUERYSET, Topic
from shareval.platform.demo_material.systems import Index, System, query_words, run, tokens

# the runs' nominal creation time (names and metadata): fixed, so that the names the
# docs show are the names the demo writes, whenever it is built
RUN_DAY = "20261120"
RUN_TIME = "2026-11-20T10:15:00+00:00"
MAX_WORDS = 100


@dataclass(frozen=True)
class Run:
    team: str              # TeamID (alphanumeric)
    task: str              # "CLIR" or "E2E"
    kind: str              # "primary" or "contrastive"
    system: System
    lang: str
    pack: str              # "devtest" or "eval"
    clock: str             # HHMMSS of the name, to keep names apart

    @property
    def name(self) -> str:
        return (f"{self.team}_{self.task}-{self.kind}-unconstrained-{QUERYSET}-"
                f"{self.system.label}_{PERIOD}-{self.lang}-{DATASET_NAME[self.pack]}_"
                f"{RUN_DAY}_{self.clock}.tgz")


def _sentences(text: str) -> list[str]:
    """Sentences of a translation; a transcript (no punctuation) in 14-word pieces."""
    parts = [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]
    if len(parts) > 1:
        return parts
    words = text.split()
    return [" ".join(words[i:i + 14]) for i in range(0, len(words), 14)]


def summarize(text: str, words: list[str], most: int) -> list[str]:
    """Up to ``most`` sentences with the most query words, in document order, <= 100 words."""
    sents = _sentences(text)
    ranked = sorted(range(len(sents)), key=lambda i: (-sum(w in words for w in tokens(sents[i])),
                                                      i))
    chosen, total = [], 0
    for i in ranked[:most]:
        n = len(sents[i].split())
        if total + n > MAX_WORDS:
            break
        chosen.append(i)
        total += n
    return [sents[i] for i in sorted(chosen)] or [" ".join(text.split()[:MAX_WORDS])]


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    tar.addfile(info, io.BytesIO(data))


def write_archive(path: Path, members: dict[str, bytes]) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(members):
            _add(tar, name, members[name])
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0,
                                              filename="") as gz:
        gz.write(buf.getvalue())
    return path


def _lines(rows, meta=None) -> bytes:
    if meta is None:
        return "".join(f"{d}\t{y}\t{c}\n" for d, y, c in rows).encode()
    return "".join(f"{d}\t{y}\t{c}\t{meta(d) if y == 'Y' else ''}\n"
                   for d, y, c in rows).encode()


def make_run(r: Run, index: Index, texts: dict[str, str], queries: list[Topic],
             out: Path, images: dict) -> Path:
    """Write one archive into ``out``; ``images`` caches rendered summaries."""
    decided = run(r.system, index, queries)
    members: dict[str, bytes] = {}
    if r.task == "CLIR":
        for q in queries:
            members[f"{q.query_id}.tsv"] = _lines(decided[q.query_id])
        return write_archive(out / r.name, members)
    most = 3 if r.system.expand else 2
    for q in queries:
        base = lambda d: f"{r.team}.{r.system.label}.{q.query_id}.{d}"     # noqa: E731
        members[f"{q.query_id}/{q.query_id}.tsv"] = _lines(decided[q.query_id],
                                                           lambda d: base(d) + ".json")
        words = query_words(q, r.system.expand)
        for d, y, _ in decided[q.query_id]:
            if y != "Y":
                continue
            content = summarize(texts[d], words, most)
            meta = {"team_id": r.team, "sys_label": r.system.label,
                    "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"shareval-demo/{base(d)}")),
                    "query_id": q.query_id, "document_id": d,
                    "run_name": r.name[:-len(".tgz")], "run_date_time": RUN_TIME,
                    "image_filename": base(d) + ".png", "content_list": content}
            members[f"{q.query_id}/{base(d)}.json"] = json.dumps(meta, indent=1).encode()
            key = (q.query_id, tuple(content))
            if key not in images:
                images[key] = summary_image.render(q.query_string, content)
            members[f"{q.query_id}/{base(d)}.png"] = images[key]
    return write_archive(out / r.name, members)
