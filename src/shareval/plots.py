"""PNG plots of scorer outputs (matplotlib, no display needed)."""
from __future__ import annotations

from pathlib import Path


def _axes():
    import matplotlib
    matplotlib.use("Agg")            # files only: no display on servers
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=(6, 5), dpi=100)


def _save(fig, ax, path, title: str) -> Path:
    import matplotlib.pyplot as plt
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_pr_curve(curve: list[dict], path: str | Path, title: str = "") -> Path:
    """Precision against recall, one point per score threshold, best-F1 point marked."""
    fig, ax = _axes()
    if curve:
        r = [c["recall"] for c in curve]
        p = [c["precision"] for c in curve]
        ax.plot(r, p, marker="o", linewidth=1.5, markersize=4, label="pairs with score ≥ threshold")
        best = max(curve, key=lambda c: c["f1"])
        ax.scatter([best["recall"]], [best["precision"]], color="crimson", zorder=3,
                   label=f"best F1 {best['f1']:.3f} at score ≥ {best['threshold']:.3g}")
        ax.legend(loc="best", fontsize=8)
        # a weak system's curve is a few pixels in the corner of the unit square: zoom in
        # (the axis ticks show the range) when all points sit in the lower half
        ax.set_xlim(0, 1.02 if max(r) > 0.5 else max(r) * 1.25 + 0.01)
        ax.set_ylim(0, 1.02 if max(p) > 0.5 else max(p) * 1.25 + 0.01)
    else:
        ax.text(0.5, 0.5, "no submitted pairs", ha="center", va="center")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
    ax.set_xlabel("Recall")
    ax.set_ylabel("Precision")
    return _save(fig, ax, path, title)


def plot_det(p_miss, p_fa, actual: tuple[float, float], path: str | Path, title: str = "",
             max_points: int = 5000) -> Path:
    """DET curve: miss against false-alarm probability on normal-deviate axes.

    One point per distinct confidence (thinned evenly to ``max_points``); the
    system's actual decision point is marked. Probabilities are clipped to
    [1e-5, 1 - 1e-5] so that 0 and 1 stay on the chart.
    """
    from statistics import NormalDist

    import numpy as np

    inv = np.vectorize(NormalDist().inv_cdf)
    lo = 1e-5
    p_miss = np.clip(np.asarray(p_miss, dtype=float), lo, 1 - lo)
    p_fa = np.clip(np.asarray(p_fa, dtype=float), lo, 1 - lo)
    if p_miss.size > max_points:
        idx = np.unique(np.linspace(0, p_miss.size - 1, max_points).round().astype(int))
        p_miss, p_fa = p_miss[idx], p_fa[idx]
    fig, ax = _axes()
    if p_miss.size:
        ax.plot(inv(p_fa), inv(p_miss), linewidth=1.5, label="Threshold sweep")
    am, af = (min(max(v, lo), 1 - lo) if v == v else 0.5 for v in actual)
    ax.scatter([inv(af)], [inv(am)], color="crimson", zorder=3, label="Actual decisions")
    ticks = [1e-4, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99]
    ax.set_xticks(inv(ticks), [f"{t:g}" for t in ticks], fontsize=7)
    ax.set_yticks(inv(ticks), [f"{t:g}" for t in ticks], fontsize=7)
    ax.set_xlabel("False-alarm probability (normal deviate scale)")
    ax.set_ylabel("Miss probability (normal deviate scale)")
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, ax, path, title)


def plot_unit_bars(values: dict[str, float], path: str | Path, title: str = "",
                   xlabel: str = "", max_units: int = 60) -> Path:
    """One horizontal bar per unit (document, query ...), lowest at the bottom;
    with more than ``max_units`` units, the lowest and highest halves are kept."""
    items = sorted(values.items(), key=lambda kv: kv[1])
    if len(items) > max_units:
        half = max_units // 2
        title = f"{title} (lowest {half} and highest {half} of {len(items)})".strip()
        items = items[:half] + items[-half:]
    fig, ax = _axes()
    fig.set_size_inches(6, max(2.5, 0.5 + 0.28 * len(items)))
    names = [k for k, _ in items]
    ax.barh(range(len(items)), [v for _, v in items], color="#457b9d")
    ax.set_yticks(range(len(items)), names, fontsize=8)
    for i, (_, v) in enumerate(items):
        ax.text(v, i, f" {v:.3f}", va="center", fontsize=7)
    top = max([v for _, v in items] + [1.0])
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel(xlabel)
    return _save(fig, ax, path, title)


def plot_unit_histogram(values: dict[str, float], path: str | Path, title: str = "",
                        xlabel: str = "", unit: str = "units", bins: int = 20) -> Path:
    """How many units (publications, documents ...) reach each value: for more units
    than bars can show one by one; the mean is marked."""
    v = [float(x) for x in values.values()]
    fig, ax = _axes()
    fig.set_size_inches(6, 3.6)
    top = max(v + [1.0])
    ax.hist(v, bins=bins, range=(0, top), color="#457b9d", edgecolor="white")
    mean = sum(v) / len(v) if v else 0.0
    ax.axvline(mean, color="crimson", linewidth=1.5, label=f"mean {mean:.3f}")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_xlim(0, top)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"Number of {unit}")
    return _save(fig, ax, path, title)
