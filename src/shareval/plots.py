"""PNG plots of scorer outputs (matplotlib, no display needed): scorers compute, these
draw. A display is made from a result and draws on an axes, as scikit-learn's
``Display.from_estimator(...).plot(ax)``; ``save_figure`` writes it for the command
line and the server alike."""
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


class PrCurveDisplay:
    """Precision against recall, one point per score threshold, best-F1 point marked
    (``result.figure["pr_curve"]`` of rcc-citations: every point, not the thinned
    curve of the JSON)."""

    def __init__(self, curve: list[dict], title: str = ""):
        self.curve, self.title = curve, title

    @classmethod
    def from_result(cls, result) -> "PrCurveDisplay":
        return cls(result.figure["pr_curve"], result.figure.get("title", ""))

    def plot(self, ax) -> None:
        curve = self.curve
        if curve:
            r = [c["recall"] for c in curve]
            p = [c["precision"] for c in curve]
            ax.plot(r, p, marker="o", linewidth=1.5, markersize=4,
                    label="pairs with score ≥ threshold")
            best = max(curve, key=lambda c: c["f1"])
            ax.scatter([best["recall"]], [best["precision"]], color="crimson", zorder=3,
                       label=f"best F1 {best['f1']:.3f} at score ≥ {best['threshold']:.3g}")
            ax.legend(loc="best", fontsize=8)
            # a weak system's curve is a few pixels in the corner of the unit square: zoom
            # in (the axis ticks show the range) when all points sit in the lower half
            ax.set_xlim(0, 1.02 if max(r) > 0.5 else max(r) * 1.25 + 0.01)
            ax.set_ylim(0, 1.02 if max(p) > 0.5 else max(p) * 1.25 + 0.01)
        else:
            ax.text(0.5, 0.5, "no submitted pairs", ha="center", va="center")
            ax.set_xlim(0, 1.02)
            ax.set_ylim(0, 1.02)
        ax.set_xlabel("Recall")
        ax.set_ylabel("Precision")


class DetDisplay:
    """DET curve: miss against false-alarm probability on normal-deviate axes
    (``result.figure["det"]`` of the MATERIAL CLIR and E2E tasks).

    One point per distinct confidence (thinned evenly to ``max_points``); the
    system's actual decision point is marked. Probabilities are clipped to
    [1e-5, 1 - 1e-5] so that 0 and 1 stay on the chart.
    """

    def __init__(self, p_miss, p_fa, actual: tuple[float, float], title: str = "",
                 max_points: int = 5000):
        self.p_miss, self.p_fa, self.actual = p_miss, p_fa, actual
        self.title, self.max_points = title, max_points

    @classmethod
    def from_result(cls, result) -> "DetDisplay":
        d = result.figure["det"]
        return cls(d["p_miss"], d["p_fa"], d["actual"], result.figure.get("title", ""))

    def plot(self, ax) -> None:
        inv = _normal_deviate()
        p_miss, p_fa = _det_points(self.p_miss, self.p_fa, self.max_points)
        if p_miss.size:
            ax.plot(inv(p_fa), inv(p_miss), linewidth=1.5, label="Threshold sweep")
        am, af = _clip_point(self.actual)
        ax.scatter([inv(af)], [inv(am)], color="crimson", zorder=3, label="Actual decisions")
        _det_axes(ax, inv)
        ax.legend(loc="upper right", fontsize=8)


DET_LOW = 1e-5              # probabilities are clipped to [DET_LOW, 1 - DET_LOW]


def _normal_deviate():
    from statistics import NormalDist

    import numpy as np
    return np.vectorize(NormalDist().inv_cdf)


def thin_curve(p_miss, p_fa, max_points: int):
    """A DET curve's points thinned evenly to ``max_points`` (first and last kept):
    what the plots draw and what the server stores with a score."""
    import numpy as np
    p_miss, p_fa = np.asarray(p_miss, dtype=float), np.asarray(p_fa, dtype=float)
    if p_miss.size > max_points:
        idx = np.unique(np.linspace(0, p_miss.size - 1, max_points).round().astype(int))
        p_miss, p_fa = p_miss[idx], p_fa[idx]
    return p_miss, p_fa


def _det_points(p_miss, p_fa, max_points: int):
    """Clipped probabilities, thinned evenly to ``max_points``."""
    import numpy as np
    return thin_curve(np.clip(np.asarray(p_miss, dtype=float), DET_LOW, 1 - DET_LOW),
                      np.clip(np.asarray(p_fa, dtype=float), DET_LOW, 1 - DET_LOW), max_points)


def _clip_point(point) -> tuple[float, float]:
    """An actual (P_miss, P_FA) on the chart; an undefined value (NaN) at the middle."""
    return tuple(min(max(v, DET_LOW), 1 - DET_LOW) if v == v else 0.5 for v in point)


def _det_axes(ax, inv) -> None:
    """Normal-deviate axes with probability ticks, as NIST's DETUtil draws them."""
    ticks = [1e-4, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99]
    ax.set_xticks(inv(ticks), [f"{t:g}" for t in ticks], fontsize=7)
    ax.set_yticks(inv(ticks), [f"{t:g}" for t in ticks], fontsize=7)
    # the labelled range and a margin: curves leave the chart at its border (clipped
    # probabilities of 0 and 1 lie far out), as DETUtil's plots do
    lo, hi = float(inv(5e-5)), float(inv(0.995))
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("False-alarm probability (normal deviate scale)")
    ax.set_ylabel("Miss probability (normal deviate scale)")


def plot_det_curves(curves, title: str = "", max_points: int = 5000):
    """Every system's DET curve on one plot (the official tables' figure): ``curves`` is
    a list of (label, p_miss array, p_fa array, actual (p_miss, p_fa) or None), e.g.
    from each primary run's ``result.figure["det"]``. One line per system, its actual
    decision point marked in the line's colour. Returns the matplotlib Figure
    (``save_figure`` writes it as PNG or PDF)."""
    fig, ax = _axes()
    fig.set_size_inches(7, 6)
    inv = _normal_deviate()
    for label, p_miss, p_fa, actual in curves:
        pm, pf = _det_points(p_miss, p_fa, max_points)
        line, = ax.plot(inv(pf), inv(pm), linewidth=1.5, label=label)
        if actual is not None:
            am, af = _clip_point(actual)
            ax.scatter([inv(af)], [inv(am)], color=line.get_color(), zorder=3, s=25)
    _det_axes(ax, inv)
    if curves:
        ax.legend(loc="upper right", fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


# the display of each kind of figure a result can carry
DISPLAYS = {"pr_curve": PrCurveDisplay, "det": DetDisplay}


def save_figure(result, path: str | Path) -> Path | None:
    """Draw the figure a scorer's result carries (``Result.figure``) to a file, or
    write a matplotlib Figure (``plot_det_curves``); the format follows the name's
    suffix (.png, .pdf). None when the result has none. The command line's ``--plot``
    and the server's scoring both draw here."""
    if hasattr(result, "savefig"):
        import matplotlib.pyplot as plt
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        result.savefig(path)
        plt.close(result)
        return path
    for key, display in DISPLAYS.items():
        if key in result.figure:
            d = display.from_result(result)
            fig, ax = _axes()
            d.plot(ax)
            return _save(fig, ax, path, d.title)
    return None


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


def plot_pr_points(points, title: str = "", xlabel: str = "recall", ylabel: str = "precision",
                   iso_f1: bool = True):
    """Every system as one point (recall, precision), labelled, with iso-F1 lines: the
    overview's comparison of all teams at once. ``points``: [(label, precision, recall)].
    ``iso_f1``: grey lines of equal F1 (not for macro averages: a macro F1 is no
    harmonic mean of macro precision and recall). Returns the matplotlib Figure."""
    import numpy as np
    fig, ax = _axes()
    fig.set_size_inches(8, 5.5)
    for f in (0.2, 0.4, 0.6, 0.8) if iso_f1 else ():
        r = np.linspace(f / (2 - f) + 1e-9, 1, 200)
        ax.plot(r, f * r / (2 * r - f), color="0.8", linewidth=0.8, zorder=0)
        ax.annotate(f"F1={f}", (1.0, f / (2 - f)), fontsize=7, color="0.5",
                    ha="right", va="bottom")
    markers = "osD^vP*Xh<>p"
    for i, (label, p, r) in enumerate(points):       # a legend: labels never overlap
        ax.scatter([r], [p], s=40, zorder=3, color=f"C{i % 10}", marker=markers[i % 12],
                   label=label, edgecolors="white", linewidths=0.5)
    if points:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel.replace("_", " "))
    ax.set_ylabel(ylabel.replace("_", " "))
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_grouped_bars(groups: list[str], series: dict, title: str = "", ylabel: str = ""):
    """One group of bars per key (a language), one bar per system, each with its
    interval as an error bar when known. ``series``: {system: [(value, low, high)]}
    in the order of ``groups``; a None value draws no bar. Returns the Figure."""
    import numpy as np
    fig, ax = _axes()
    n = max(1, len(series))
    fig.set_size_inches(max(6.0, 1.2 + len(groups) * (0.3 * n + 0.6)), 4.5)
    width = 0.8 / n
    x = np.arange(len(groups))
    for i, (label, vals) in enumerate(series.items()):
        v = [np.nan if t[0] is None else t[0] for t in vals]
        # no interval: no error bar at all (NaN), never a zero-length one
        lo = [np.nan if t[0] is None or t[1] is None else max(0.0, t[0] - t[1]) for t in vals]
        hi = [np.nan if t[0] is None or t[2] is None else max(0.0, t[2] - t[0]) for t in vals]
        ax.bar(x + (i - (n - 1) / 2) * width, v, width, yerr=[lo, hi], capsize=2,
               label=label, color=f"C{i % 10}", error_kw={"linewidth": 0.8})
    ax.set_xticks(x, groups)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))
    ax.legend(fontsize=7, ncol=max(1, min(4, n // 6 + 1)), loc="upper left",
              bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
