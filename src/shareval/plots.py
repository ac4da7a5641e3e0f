"""PNG plots of scorer outputs (matplotlib, no display needed)."""
from __future__ import annotations

from pathlib import Path


def plot_pr_curve(curve: list[dict], path: str | Path, title: str = "") -> Path:
    """Precision against recall, one point per score threshold, best-F1 point marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(6, 5), dpi=100)
    if curve:
        r = [c["recall"] for c in curve]
        p = [c["precision"] for c in curve]
        ax.plot(r, p, marker=".", linewidth=1.5, markersize=4, label="score >= threshold")
        best = max(curve, key=lambda c: c["f1"])
        ax.scatter([best["recall"]], [best["precision"]], color="crimson", zorder=3,
                   label=f"best F1 {best['f1']:.3f} at score >= {best['threshold']:.3g}")
        ax.legend(loc="lower left")
    else:
        ax.text(0.5, 0.5, "no submitted pairs", ha="center", va="center")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
