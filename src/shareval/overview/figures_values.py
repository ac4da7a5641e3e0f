"""The value distributions of several teams side by side (RCC research fields and
methods): one row per value, one bar per team, the share of the team's records."""
from __future__ import annotations

import textwrap

LABEL_WIDTH = 28             # characters per label line
LABEL_LINES = 2              # a longer label is cut, its end shown as "…"


def value_label(value: str, width: int = LABEL_WIDTH, lines: int = LABEL_LINES) -> str:
    """``value`` wrapped at ``width`` characters on at most ``lines`` lines; what does
    not fit is cut and ends in "…" (a single word longer than ``width`` is broken)."""
    text = " ".join(str(value).split()) or "(empty)"
    wrapped = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=True,
                            max_lines=lines, placeholder=" …")
    if not wrapped:
        return text[:width]
    return "\n".join(wrapped)


def top_values(dists: dict[str, dict[str, float]], top: int) -> list[str]:
    """The ``top`` values with the largest mean share over the teams (a value a team
    lacks counts 0 for it), largest first, equal means by value."""
    teams = list(dists)
    mean = {}
    for d in dists.values():
        for v in d:
            mean[v] = 0.0
    for v in mean:
        mean[v] = sum(dists[t].get(v, 0.0) for t in teams) / len(teams)
    return sorted(mean, key=lambda v: (-mean[v], v))[:max(top, 0)]


def plot_value_distributions(dists: dict[str, dict[str, float]], title: str,
                             top: int = 15):
    """A horizontal grouped bar chart: the ``top`` values with the largest mean share
    (most frequent at the top), each with one bar per team (legend order = ``dists``
    order), the share of the team's records with that value. Long values are wrapped
    on two lines and cut with "…". Returns a matplotlib Figure (Agg; save it as PNG or
    PDF with ``fig.savefig``)."""
    import matplotlib
    matplotlib.use("Agg")            # files only: no display on servers
    from matplotlib.figure import Figure

    teams = list(dists)
    values = top_values(dists, top) if teams else []
    fig = Figure(figsize=(8, max(2.5, 1.2 + 0.22 * max(len(teams), 1) * len(values)
                                 + 0.1 * len(values))), dpi=100)
    ax = fig.subplots()
    if not values:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        ax.set_title(title, fontsize=10)
        fig.tight_layout()
        return fig
    group = 0.8
    height = group / len(teams)
    for i, team in enumerate(teams):
        offsets = [k - group / 2 + height * (i + 0.5) for k in range(len(values))]
        ax.barh(offsets, [dists[team].get(v, 0.0) for v in values], height=height,
                label=str(team))
    ax.set_yticks(range(len(values)))
    ax.set_yticklabels([value_label(v) for v in values], fontsize=8)
    ax.invert_yaxis()                # the most frequent value first
    ax.set_xlabel("share of the team's records")
    ax.set_xlim(0, max(max(d.get(v, 0.0) for d in dists.values() for v in values) * 1.1,
                       0.01))
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="best", fontsize=8, title="team" if len(teams) > 1 else None)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
