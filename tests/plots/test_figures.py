"""Every figure renders in the house style on a small and a large (60-model) panel:
PNG at 300 dpi with an SVG beside it, no title, label, tick label, legend or annotation
outside the canvas (each artist's window extent is checked after layout), and no text or
legend on another text, a bar, a curve, an arrow or a leader line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from PIL import Image

from curation.errors import ConfigError
from curation.irt import fit, simulate_responses
from curation.irt.mirt import build_report, select_dimension, simulate_mirt
from curation.measure import power_curve
from curation.plots import DEFAULT_FORMATS, PlotSettings
from curation.plots._style import (
    DPI,
    SavedFigure,
    clipped_artists,
    new_figure,
    save_figure,
)
from curation.plots.check import plot_check_overview
from curation.plots.fill import plot_fill
from curation.plots.irt import plot_difficulty_vs_ability, plot_item_curves
from curation.plots.measure import plot_ecdf, plot_gap_strip, plot_power_curves
from curation.plots.mirt import plot_mirt_loadings, plot_mirt_models, plot_mirt_selection
from curation.plots.publish import (
    ecdf_panels,
    plot_ddm_gaps,
    plot_difficulty_ecdf,
    plot_difficulty_histogram,
)
from curation.responses._checks import check_matrix

SIZES = {"small": 6, "large": 60}
NAME = "a-benchmark-with-a-long-name"


def _plots(section: object) -> PlotSettings:
    """``plots:`` as the stages read it: the validated params file's section."""
    from curation.params_model import validate_params
    from tests.conftest import minimal_benchmark

    raw: dict[str, object] = {"benchmarks": {"t": minimal_benchmark("t")}}
    if section is not None:
        raw["plots"] = section
    return validate_params(raw).plots


def _long_name(j: int) -> str:
    """Model names as long as real ones (the labels that used to overflow)."""
    return f"Meta-Llama-3.1-{8 * (j + 1)}B-Instruct-Turbo-{j:02d}"


@pytest.fixture(scope="module", params=sorted(SIZES))
def case(request):
    n_models = SIZES[request.param]
    df, _ = simulate_responses(n_models=n_models, n_items=150, n_trials=1, seed=3)
    names = {f"model-{j:02d}": _long_name(j) for j in range(n_models)}
    df = df.with_columns(pl.col("model").replace_strict(names))
    result = fit(df, model="1pl", benchmark="a-benchmark-with-a-long-name")
    benchmarks = ("gsm8k", "math-l5", "crux")
    sim = simulate_mirt(n_models, 90, 2, seed=5, n_trials=2, benchmarks=benchmarks)
    data = dataclasses.replace(sim.data, models=tuple(_long_name(j) for j in range(n_models)))
    mirt = build_report(data, select_dimension(data, d_max=2, holdout=0.1, seed=0))
    return request.param, df, result, mirt


def _figures(
    df: pl.DataFrame, result, mirt, fmt: tuple[str, ...]
) -> dict[str, Callable[[Path], SavedFigure]]:
    z = result.items["z"].to_numpy()
    report = check_matrix(df, benchmark="a-benchmark-with-a-long-name")
    inserted = {
        m: [{"z": t + 0.01, "target_z": t} for t in (0.2, 0.5, 0.8)]
        for m in ("benchfill", "baseline", "oracle")
    }
    frame = power_curve(z, width=[0.02, 0.3], repeats=[1, 4], n_sims=20, seed=0)
    sub_u, sub_b = np.sort(z)[::3], np.sort(z)[1::3]
    panels = ecdf_panels(
        {"original": z, "filled": np.concatenate([z, [0.5]])},
        [
            ("calibrated-uniform-50", "uniform", sub_u, None),
            ("calibrated-uniform-100", "uniform", sub_u[::2], None),
            ("calibrated-beta_2_2-50", "Beta(2, 2)", sub_b, None),
            ("calibrated-beta_2_2-100", "Beta(2, 2)", sub_b[::2], None),
        ],
    )
    return {
        "check": lambda p: plot_check_overview(report, p, formats=fmt),
        "icc": lambda p: plot_item_curves(result, p, formats=fmt),
        "wright": lambda p: plot_difficulty_vs_ability(result, p, formats=fmt),
        "ecdf": lambda p: plot_ecdf(z, p, target="beta(2, 2)", name=NAME, formats=fmt),
        "strip": lambda p: plot_gap_strip(z, p, name=NAME, formats=fmt),
        "power": lambda p: plot_power_curves(frame, p, title=f"{NAME}: power", formats=fmt),
        "fill": lambda p: plot_fill(
            z,
            inserted,
            p,
            name=NAME,
            reductions={  # the longest titles: estimate and interval beside the plug-in
                "benchfill": {"estimate": 29.8556, "low": 17.8122, "high": 39.3543},
                "baseline": {"estimate": 0.0, "low": 0.0, "high": 0.0},
            },
            formats=fmt,
        ),
        "mirt-loadings": lambda p: plot_mirt_loadings(mirt, p, formats=fmt),
        "mirt-models": lambda p: plot_mirt_models(mirt, p, formats=fmt),
        "mirt-selection": lambda p: plot_mirt_selection(mirt, p, formats=fmt),
        "card-histogram": lambda p: plot_difficulty_histogram(
            {"original": z, "filled": z}, p, title="a-benchmark: difficulty histogram", formats=fmt
        ),
        "card-ecdf": lambda p: plot_difficulty_ecdf(panels, p, title=f"{NAME}: ECDF", formats=fmt),
        "card-ddm-gaps": lambda p: plot_ddm_gaps(z, np.concatenate([z, [0.5]]), p, formats=fmt),
    }


@pytest.mark.long(seconds=90)
def test_every_figure_fits_its_canvas(case, tmp_path):
    """The clipping check runs after layout, before any file is written, so it is the same
    for every format: SVG only here (a 300 dpi PNG of every figure would double the time)."""
    size, df, result, mirt = case
    for name, draw in _figures(df, result, mirt, ("svg",)).items():
        saved = draw(tmp_path / f"{name}.png")
        assert saved.clipped == (), f"{size} {name}: clipped {saved.clipped}"
        assert saved.collisions == (), f"{size} {name}: {saved.collisions}"
        (svg,) = saved.files
        assert svg.suffix == ".svg"
        assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_figures_are_300_dpi_png_with_svg_beside(case, tmp_path):
    size, df, result, mirt = case
    draw = _figures(df, result, mirt, ("png", "svg"))["check"]
    png, svg = draw(tmp_path / "check.png").files
    assert (png.name, svg.name) == ("check.png", "check.svg")
    with Image.open(png) as im:
        assert round(im.info["dpi"][0]) == DPI
        assert min(im.size) >= 3 * DPI  # at least 3 inches on its short side
    assert "<text" in svg.read_text(encoding="utf-8")  # labels stay text: editable, searchable


def test_card_ecdf_draws_every_config_against_its_own_target():
    z = np.linspace(0.01, 0.99, 99)
    panels = ecdf_panels(
        {"original": z},
        [
            ("calibrated-uniform-50", "uniform", z[::2], None),
            ("calibrated-beta_2_2-50", "Beta(2, 2)", z[1::2], 0.01),
            ("calibrated-beta_2_2-100", "Beta(2, 2)", z, 0.02),
            ("calibrated-other-50", "benchmark:other", z[::3], 0.3),
        ],
    )
    assert [p.label for p in panels] == ["uniform", "Beta(2, 2)", "benchmark:other"]
    beta = ["original", "calibrated-beta_2_2-50", "calibrated-beta_2_2-100"]
    assert list(panels[1].series) == beta
    # a target it cannot draw keeps the subsets stage's DDM
    assert panels[2].target is None and panels[2].ddm == {"calibrated-other-50": 0.3}
    every = {name for p in panels for name in p.series}
    assert every == {"original", "calibrated-uniform-50", "calibrated-beta_2_2-50",
                     "calibrated-beta_2_2-100", "calibrated-other-50"}  # fmt: skip


def test_clipping_is_detected_and_formats_are_validated(tmp_path):
    fig, ax = new_figure(width=3.0, height=2.0)
    long = "a title far too long to fit a three inch wide figure at ten points size"
    ax.set_title(long)
    assert any(long in c for c in clipped_artists(fig))
    saved = save_figure(fig, tmp_path / "t.png")
    assert saved.clipped == ()  # the title was rewrapped to the room it has

    fig, ax = new_figure(width=3.0, height=2.0)
    ax.text(1.4, 0.5, "placed off the canvas", transform=ax.transAxes)
    saved = save_figure(fig, tmp_path / "x.png", formats=("png", "svg", "pdf"))
    assert any("placed off the canvas" in c for c in saved.clipped)
    assert [p.suffix for p in saved.files] == [".png", ".svg", ".pdf"]
    assert (tmp_path / "x.pdf").read_bytes()[:5] == b"%PDF-"

    assert _plots(None).format == ["png", "svg"] == list(DEFAULT_FORMATS)
    assert _plots({"format": ["png", "svg", "pdf", "svg"]}).format == ["png", "svg", "pdf"]
    with pytest.raises(ConfigError, match="plots.format: .*must include png"):
        _plots({"format": ["svg"]})
    with pytest.raises(ConfigError, match="plots.format: .*must include svg"):
        _plots({"format": ["png", "pdf"]})
    with pytest.raises(ConfigError, match="plots.format"):
        _plots({"format": ["png", "jpeg"]})
    with pytest.raises(ConfigError, match="unknown setting"):
        _plots({"formats": ["png"]})


def test_collisions_are_detected():
    """What the figures did: a count on the bars, a legend on a curve, a name on another
    name and on an arrow; and what they may do: a name inside a translucent band."""
    from curation.plots._collisions import text_collisions

    fig, axes = new_figure(1, 5, width=12.0, height=3.0)
    bars, legend, names, arrow, band = axes
    bars.bar([0, 1, 2], [5, 9, 4])
    bars.text(0.8, 4.0, "18 none-solved")  # on the middle bar
    legend.plot([0, 1], [0, 1], label="a curve under its legend")
    legend.legend(loc="center")
    names.text(0.1, 0.5, "model-a")
    names.text(0.15, 0.52, "model-b")  # on model-a
    arrow.annotate("", xy=(0.9, 0.5), xytext=(0.1, 0.5), arrowprops={"arrowstyle": "->"})
    arrow.text(0.4, 0.48, "on it")
    band.axvspan(0.3, 0.7, alpha=0.25)
    band.text(0.45, 0.5, "#1")  # names its band: fine
    found = "\n".join(text_collisions(fig))
    assert "axes 0: '18 none-solved' covers rectangle" in found
    assert "axes 1: legend covers line2d" in found
    assert "axes 2: 'model-a' overlaps 'model-b'" in found
    assert "axes 3: 'on it' covers an arrow" in found
    assert "axes 4" not in found
