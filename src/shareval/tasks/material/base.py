"""MATERIAL's shared part: the reference pack, reading a submission folder or
``.tgz`` of ``<ID>.tsv`` files (checked line by line, with file:line problems),
the reference relevance, and beta.

The tasks built on it: ``clir.py`` (AQWV, MQWV, oracle, AUC), ``identification.py``
(DomainID, LangID) and ``e2e.py`` (end to end with judged summaries).
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ...formats.archive import Limits, Stored, iter_folder, iter_tgz, parse_archive_name
from ...formats.errors import InvalidInput, Problem, Problems
from ...formats.material import Pack, read_judgment_lines, read_output_lines, read_pack
from ...formats.material_check import output_file_clean
from ...progress import progress
from ..base import Task, load_checked


IN_FLIGHT_BYTES = 8 << 20        # past this, a submission's files are scanned one ahead
# validate: the files are checked with numpy (no numba: ~110 MB less for an upload) until
# this many bytes of the submission as stored (a .tgz's packed bytes) are read; then the
# numba scanner, ~10x faster a line, checks the rest, its fixed memory under 3x the
# upload's size (uploads' memory, issue 41)
NUMPY_CHECK_BYTES = 64 << 20


def _done(value) -> Future:
    """A result ready now, settled like a worker's future (``_parse``)."""
    f: Future = Future()
    f.set_result(value)
    return f


def scan_file(*args, **kwargs):
    """``formats.scan.scan_file``, imported on first use as ``formats.material`` does:
    the scanner is compiled by numba, whose import (0.35 s of CPU) every ``shareval``
    command would pay otherwise, since the command line loads every task."""
    from ...formats.scan import scan_file as scan
    return scan(*args, **kwargs)


@dataclass
class Submission:
    path: str
    ids: list[str]                    # query, domain or language ids, in pack order
    decision: np.ndarray | None       # ids x documents, bool (None: only checked, validate)
    ticks: np.ndarray | None          # ids x documents, int32 confidence in units of 1e-5
    metadata: dict[str, list[str]] | None = None
    files: dict[str, bytes] | None = None
    warnings: list[str] = field(default_factory=list)
    system: str | None = None         # <TeamID>.<SysLabel> (E2E: its judgments are keyed so)


def restrict(sub: Submission, rows) -> Submission:
    """``sub`` with only the given rows (query indexes), e.g. the closed queries."""
    rows = np.asarray(rows, dtype=int)
    if np.array_equal(rows, np.arange(len(sub.ids))):
        return sub                        # every row: no copy of the large matrices
    return replace(sub, ids=[sub.ids[k] for k in rows], decision=sub.decision[rows],
                   ticks=sub.ticks[rows], warnings=[])


def pack_limits(pack: Pack) -> Limits:
    """Archive limits from pack.yaml ``limits`` (max_bytes, max_files, max_member_bytes)."""
    given = pack.settings.get("limits") or {}
    return Limits(**{k: int(v) for k, v in given.items() if k in Limits.__dataclass_fields__})


def iter_submission_files(path, problems: Problems, limits: Limits = Limits(),
                          stored: Stored | None = None):
    """(name, bytes) of each file of a submission folder or .tgz (bytearray), one at a time."""
    p = Path(path)
    if p.is_dir():
        return iter_folder(p, problems, limits, stored)
    if p.is_file():                     # bytearrays: every reader here takes them
        return iter_tgz(p, problems, limits, mutable=True, stored=stored)
    problems.fatal(p, None, "file", "does not exist")
    return iter(())


def _reference_ids(pack: Pack, sub: str) -> list[str]:
    folder = pack.root / sub
    return sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []


class _MaterialTask(Task):
    kind = ""                    # "clir", "domainid", "langid"
    beta_task = "clir"           # which column of the plan's Table 1 gives beta
    id_name = ""                 # "query", "domain", "language"
    columns = 3
    conventions = {
        "reference": "a pack folder: documents.tsv (the collection), queries.tsv, and one "
                     "<ID>.tsv of DocID<TAB>Y|N per query, domain or language (unlisted = N)",
        "submission": "a folder or .tgz with one <ID>.tsv per ID at its root; every line "
                      "DocID<TAB>Y|N<TAB>confidence, one per collection document, LF only",
        "confidence": "one digit, a point, 1 to 5 digits, no exponent, 0.0 <= cf <= 1.0 (plan 7.4)",
    }

    def load_reference(self, path):
        return load_checked(read_pack, path)

    def ids(self, pack: Pack) -> list[str]:
        raise NotImplementedError

    def expected_docs(self, pack: Pack) -> np.ndarray:
        return np.ones(len(pack.doc_ids), dtype=bool)

    def submission(self, sub, reference=None, name: str | None = None):
        if isinstance(sub, (str, Path)):
            return self.load_submission(sub, reference, name)
        return sub

    def validate(self, submission, reference=None, name: str | None = None) -> list[str]:
        """The warnings, or InvalidInput, of loading the submission, found without
        decoding it (``_parse``'s check_only): what the upload child holds is the pack
        and a file or two, not numba and the decoded matrices (issue 41)."""
        if not isinstance(submission, (str, Path)):
            return super().validate(submission, reference, name)
        ref = self.reference(reference) if reference is not None else None
        return list(self.load_submission(submission, ref, name, check_only=True).warnings)

    def load_submission(self, path, reference=None, name: str | None = None,
                        check_only: bool = False):
        """``name``: the archive's own name when it is stored under another (the
        server's uploads); its plan-8.2.1.2 fields are checked either way.
        ``check_only``: checked, not decoded (``validate``)."""
        if reference is None:
            raise InvalidInput([Problem("<arguments>", None, "reference",
                                        f"{self.name} needs --reference PACK: the collection's "
                                        f"document list is part of the reference pack")])
        problems = Problems()
        fields = self._check_archive_name(Path(path), name or Path(path).name, reference,
                                          problems)
        stored = Stored()
        sub = self._parse(Path(path), iter_submission_files(path, problems,
                                                            pack_limits(reference), stored),
                          reference, problems, check_only, stored)
        problems.raise_if_any()
        if fields:
            sub.warnings.append("archive name: " + ", ".join(
                f"{k}={'-'.join(v) if isinstance(v, list) else v}" for k, v in fields.items()
                if k != "syslabel"))
            if sub.system is None and "team" in fields:
                sub.system = f"{fields['team']}.{fields['sys']}"
        return sub

    TASK_IN_NAME = {"clir": "CLIR", "domainid": "DomainID", "langid": "LangID"}

    def _check_archive_name(self, path: Path, name: str, pack: Pack,
                            problems: Problems) -> dict:
        """Fields of a plan-8.2.1.2 archive ``name``; they must agree with the task and pack."""
        if not path.is_file():
            return {}
        fields = parse_archive_name(name)
        if isinstance(fields, str) or "task" not in fields:
            return {}                       # a web upload (<SysLabel>.tgz) or a free name
        task = "E2E" if self.name == "material-e2e" else self.TASK_IN_NAME[self.kind]
        if fields["task"] != task:
            problems.add(path, None, "archive name", f"says task {fields['task']}, but this "
                                                     f"is {self.name}")
        if pack.language and fields["lang"] != pack.language:
            problems.add(path, None, "archive name", f"says language {fields['lang']}, the "
                                                     f"pack is {pack.language}")
        period = pack.settings.get("eval_period")
        if period and fields["period"] != str(period):
            problems.add(path, None, "archive name", f"says evaluation period "
                                                     f"{fields['period']}, the pack is {period}")
        dataset = pack.settings.get("dataset_name")
        if dataset and fields["dataset"] != str(dataset):
            problems.add(path, None, "archive name", f"says dataset {fields['dataset']}, the "
                                                     f"pack is {dataset}")
        queryset = pack.settings.get("queryset")
        if queryset and self.id_name == "query" and fields["set"] != str(queryset):
            problems.add(path, None, "archive name", f"says query set {fields['set']}, the "
                                                     f"pack is {queryset}")
        return fields

    def _parse(self, root: Path, files, pack: Pack, problems: Problems,
               check_only: bool = False, stored: Stored | None = None) -> Submission:
        """Check each file's name against the pack and parse it as it arrives.
        ``check_only``: the verdict alone (``validate``): nothing is decoded into
        matrices; the files are checked with numpy (``material_check``), without
        loading numba, while ``stored.read`` (the submission's bytes as stored: a
        .tgz's packed bytes) is under NUMPY_CHECK_BYTES, then scanned; a file either
        refuses goes to the line validator as before."""
        ids = self.ids(pack)
        row = {f"{i}.tsv": k for k, i in enumerate(ids)}
        expected = self.expected_docs(pack)
        n = len(pack.doc_ids)
        decision = ticks = None
        if not check_only:
            decision = np.zeros((len(ids), n), dtype=bool)
            ticks = np.zeros((len(ids), n), dtype=np.int32)
        found = np.zeros(len(ids), dtype=bool)
        member = (lambda name: f"{root}!{name}") if root.is_file() else (lambda name: root / name)

        def fast(name, data):
            # runs on a worker thread: the numba scanner releases the GIL. The bytes go
            # back to this thread (freed on a worker, they doubled score's system time)
            return name, len(data), data, scan_file(data, pack.table(), expected, self.columns)

        def check(name, data):
            clean = self.columns == 3 and output_file_clean(data, pack.doc_ids, expected)
            return _done((name, len(data), None if clean else data, clean or None))

        pending: deque = deque()

        def settle() -> int:
            """The oldest file's rows; how many bytes it held. Problems are reported here,
            in the files' order, whichever way the files were checked."""
            name, size, data, scanned = pending.popleft().result()
            k = row[name]
            if scanned is None:                      # line validator, in order, on this thread
                scanned = read_output_lines(str(member(name)), data, pack, problems,
                                            self.columns, expected)
                del data
            if scanned is not None and decision is not None:
                decision[k] = scanned.decision
                ticks[k] = scanned.ticks
            return size

        if check_only:
            pack.doc_ids.lookup()
        else:
            pack.table()
        stopped_early = False
        in_flight = 0                                # bytes of the pending files
        checked = 0                                  # bytes checked with numpy
        with ThreadPoolExecutor(2) as pool:
            for name, data in progress(files, total=len(ids), what=f"reading {root.name}"):
                if problems.full:
                    stopped_early = True         # unread files are not missing ones
                    break
                if "/" in name:
                    problems.add(member(name), None, "member",
                                 "files must be at the archive root (plan 8.2.1.3)")
                elif name not in row:
                    problems.add(member(name), None, "member",
                                 f"unexpected file: not <{self.id_name}>.tsv for a "
                                 f"{self.id_name} of the pack")
                else:
                    found[row[name]] = True
                    if check_only and (checked if stored is None else stored.read) \
                            < NUMPY_CHECK_BYTES:
                        checked += len(data)
                        pending.append(check(name, data))
                    else:
                        pack.table()                 # built here, not on two workers
                        pending.append(pool.submit(fast, name, data))
                    in_flight += len(data)
                    del data
                    # bounded: a few files in memory at once, and few bytes (a .tgz of
                    # large members is read one member ahead: uploads' memory, issue 41)
                    while len(pending) > 4 or (len(pending) > 1 and in_flight > IN_FLIGHT_BYTES):
                        in_flight -= settle()
            while pending:
                settle()
        if not stopped_early:
            problems.summarize(root, "file", [f"{ids[k]}.tsv" for k in np.flatnonzero(~found)],
                               "{n} file is missing", "{n} files are missing")
        return Submission(str(root), ids, decision, ticks)

    def relevance(self, pack: Pack, ids: list[str]) -> np.ndarray:
        """Reference Y/N per (ID, document); files are scanned on two threads."""
        problems = Problems()
        every_doc = np.ones(len(pack.doc_ids), dtype=bool)
        paths = [pack.root / self.kind / f"{i}.tsv" for i in ids]
        pack.table()

        def fast(path: Path):
            try:
                data = path.read_bytes()
            except OSError:
                return None
            return scan_file(data, pack.table(), every_doc, 2, require_all=False)

        rel = np.zeros((len(ids), len(pack.doc_ids)), dtype=bool)
        with ThreadPoolExecutor(2) as pool:
            for k, (path, scanned) in enumerate(zip(paths, pool.map(fast, paths))):
                if scanned is not None:
                    rel[k] = scanned.decision
                elif not path.exists():
                    problems.add(path, None, "file", f"the pack has no reference for {ids[k]}")
                else:                                 # the line reader reports the problems
                    r = read_judgment_lines(path, pack, problems)
                    if r is not None:
                        rel[k] = r
        problems.raise_if_any()
        return rel

    def beta(self, pack: Pack, override):
        if override is not None:
            return float(override)
        b = pack.beta(self.beta_task)
        if b is None:
            raise InvalidInput([Problem(str(pack.root / "pack.yaml"), None, "beta",
                                        "language unknown: set language (1A, 1B, 1S) or beta "
                                        "in pack.yaml, or pass --beta")])
        return b
