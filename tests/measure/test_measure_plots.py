"""Figures are written (atomically) as non-empty PNGs; plot data are plain rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curation.measure import Beta, Histogram, Sample, power_curve
from curation.plots.measure import (
    ecdf_plot_rows,
    ecdf_points,
    gap_rows,
    item_rows,
    plot_ecdf,
    plot_gap_strip,
    plot_power_curves,
    power_rows,
    target_cdf_points,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
rng = np.random.default_rng(5)
Z = np.concatenate([rng.uniform(0, 0.4, 30), rng.uniform(0.6, 1, 20)])


def _is_png(path: Path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_MAGIC)


@pytest.mark.parametrize(
    "target",
    ["uniform", Beta(2, 5), Histogram((0.0, 0.5, 1.0), (1.0, 3.0)), Sample((0.1, 0.7), "X")],
    ids=["uniform", "beta", "histogram", "sample"],
)
def test_plot_ecdf(tmp_path: Path, target) -> None:
    out = tmp_path / "sub" / "ecdf.png"
    plot_ecdf(Z, out, target=target, name="bench")
    assert _is_png(out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["ecdf.png", "ecdf.svg"]  # no temp left


def test_plot_gap_strip_and_power(tmp_path: Path) -> None:
    plot_gap_strip(Z, tmp_path / "strip.png", k=5, name="bench")
    plot_gap_strip([0.5, 0.5], tmp_path / "strip2.png")
    frame = power_curve(Z, width=[0.05, 0.4], repeats=(1, 2, 4), n_sims=20, seed=0)
    plot_power_curves(frame, tmp_path / "power.png")
    for name in ("strip.png", "strip2.png", "power.png"):
        assert _is_png(tmp_path / name)
    with pytest.raises(ValueError, match="missing columns"):
        plot_power_curves(frame.drop("alpha"), tmp_path / "bad.png")
    assert len(power_rows(frame)) == frame.height


def test_plot_data_rows() -> None:
    pts = ecdf_points([0.2, 0.2, 0.7])
    assert pts[0] == {"z": 0.0, "cdf": 0.0} and pts[-1] == {"z": 1.0, "cdf": 1.0}
    assert {"z": 0.2, "cdf": 0.0} in pts and {"z": 0.2, "cdf": 2 / 3} in pts
    cdfs = [p["cdf"] for p in pts]
    assert cdfs == sorted(cdfs)
    assert target_cdf_points("uniform") == [{"z": 0.0, "cdf": 0.0}, {"z": 1.0, "cdf": 1.0}]
    beta = target_cdf_points(Beta(2, 2), n_points=11)
    assert len(beta) == 11 and beta[5]["cdf"] == pytest.approx(0.5)
    rows = ecdf_plot_rows(Z, Beta(2, 2), benchmark="b")
    assert {r["series"] for r in rows} == {"benchmark", "target: Beta(2, 2)"}
    assert all(r["benchmark"] == "b" for r in rows)
    g = gap_rows(Z, k=3)
    assert [r["rank"] for r in g] == [1, 2, 3] and g[0]["width"] >= g[1]["width"]
    assert len(item_rows(Z)) == Z.size
