"""Every system's DET curve on one plot (the official tables' figure): one line per
system on normal-deviate axes, the actual decision point in the line's colour, written as
PNG and PDF by save_figure."""
from statistics import NormalDist

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from shareval.plots import plot_det_curves, save_figure

CURVES = [("TEAMX.Sys1", [1.0, 0.5, 0.2, 0.0], [0.0, 0.01, 0.1, 1.0], (0.5, 0.01)),
          ("TEAMY.Sys2", [0.9, 0.4, 0.0], [0.0, 0.05, 1.0], (0.4, 0.05)),
          ("TEAMZ.Sys3", [0.8, 0.3], [0.02, 0.3], None)]


def test_one_line_per_system_on_normal_deviate_axes():
    fig = plot_det_curves(CURVES, "CLIR primaries")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == [c[0] for c in CURVES]
    inv = NormalDist().inv_cdf
    # Sys2's second point (P_FA 0.05, P_miss 0.4) on the normal-deviate scale; 0 and 1
    # are clipped to 1e-5 and 1 - 1e-5 so that they stay on the chart
    x, y = ax.lines[1].get_data()
    assert (x[1], y[1]) == pytest.approx((inv(0.05), inv(0.4)))
    assert x[0] == pytest.approx(inv(1e-5)) and y[2] == pytest.approx(inv(1e-5))
    # two actual points (Sys3 has none), each in its line's colour
    points = [c for c in ax.collections]
    assert len(points) == 2
    assert [tuple(p.get_facecolor()[0][:3]) for p in points] == [
        pytest.approx(to_rgb(ax.lines[k].get_color())) for k in (0, 1)]
    assert np.allclose(points[0].get_offsets()[0], (inv(0.01), inv(0.5)))
    assert ax.get_title() == "CLIR primaries"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [c[0] for c in CURVES]
    assert "normal deviate" in ax.get_xlabel()


def test_save_figure_writes_png_and_pdf(tmp_path):
    png = save_figure(plot_det_curves(CURVES, "t"), tmp_path / "det.png")
    pdf = save_figure(plot_det_curves(CURVES, "t"), tmp_path / "sub" / "det.pdf")
    assert png.read_bytes()[:4] == b"\x89PNG" and pdf.read_bytes()[:5] == b"%PDF-"


def test_no_system_is_an_empty_plot_not_an_error():
    ax = plot_det_curves([], "nothing").axes[0]
    assert len(ax.lines) == 0 and ax.get_legend() is None


def test_the_chart_stops_at_its_labelled_range():
    """Clipped probabilities (0 and 1 drawn at 1e-5 and 1 - 1e-5) lie far outside the
    ticks; the axes end just past the outermost labels instead of following them."""
    from statistics import NormalDist

    from shareval.plots import plot_det_curves
    fig = plot_det_curves([("sys", [0.0, 0.3, 1.0], [1.0, 0.01, 0.0], None)])
    ax = fig.axes[0]
    inv = NormalDist().inv_cdf
    for lo, hi in (ax.get_xlim(), ax.get_ylim()):
        assert inv(1e-4) > lo > inv(1e-5) and inv(0.99) < hi < inv(1 - 1e-5)
