"""Does this benchmark's interval hold at this benchmark's shape? Its own coverage check.

The bootstrap intervals (:mod:`curation.measure._bootstrap`) were calibrated on simulated
worlds of the bundled shapes. At other shapes they can fail badly (issue 29: 12 models ×
1,319 items at one trial per cell, DDM covered 0.66; with a truth clustered at the score
levels Max Gap and Top-3 covered 0.00–0.37). So every benchmark checks its own:

1. simulate ``worlds`` data sets from the fit on the benchmark's own design (same cells,
   same trials) for each of two truths the bootstrap does not draw from — ``lattice``
   (the fit itself: single-trial difficulties tied at the score levels) and ``smooth``
   (the fit with every θ and b moved by its own standard error) — and refit each
   (:func:`curation.irt.parametric_bootstrap` with ``truth="plugin"`` / ``"jitter"``);
2. carry the interval to each world: the world's plug-in T(ẑ_w) with the interval's
   offsets from the plug-in (the bias correction included), and count the worlds whose
   truth T(z_w) it holds — the self-check coverage, per truth;
3. print both beside the interval. One whose lower coverage is outside [low, high] has
   each side rescaled about its estimate by the smallest factor that leaves few enough of
   either truth's worlds beyond it for a new world to fall outside with probability at
   most (1 − level)/2 (widened, or narrowed when it over-covers), or is withheld — with
   the reason — when a side needs more than ``max_widening``. The coverage printed for a
   rescaled interval is held out: each world judged by the factors fitted on the others.

Step 2 re-uses the interval's offsets rather than bootstrapping each world again (which
would cost worlds × replicates refits): the interval's width is what is checked, not the
bootstrap's run-to-run noise. ``benchmarks/bench_intervals.py`` measures how close the
printed figure is to the coverage achieved in worlds the check does not simulate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from curation.irt import BootstrapReplicates, Cells, FitSettings, fit_map, parametric_bootstrap
from curation.measure._bootstrap import monte_carlo_se, summarize_bootstrap
from curation.measure._posterior import (
    METRIC_NAMES,
    Interval,
    MetricIntervals,
    MetricName,
    _per_draw,
)
from curation.measure._targets import TargetLike

CHECK_TRUTHS: tuple[str, ...] = ("smooth", "lattice")
"""The self-check's truths, as printed; :data:`_BOOTSTRAP_TRUTH` maps them to the bootstrap's."""
_BOOTSTRAP_TRUTH = {"smooth": "jitter", "lattice": "lattice"}

Status = Literal["ok", "widened", "narrowed", "withheld"]


@dataclass(frozen=True)
class SelfCheck:
    """One interval's self-check: coverage per truth at the printed width, and what was done.

    ``raw_coverage`` is the lower coverage at the bootstrap's own width; ``scale_low`` /
    ``scale_high`` the factors applied to the interval's two sides about its estimate
    (1: as bootstrapped).
    A ``withheld`` interval is not printed; ``reason`` says why.
    """

    coverage_smooth: float
    coverage_lattice: float
    raw_coverage: float
    scale_low: float
    scale_high: float
    status: Status
    worlds: int
    reason: str | None = None

    @property
    def coverage(self) -> float:
        """The figure printed beside the interval: the lower of the two truths'."""
        return min(self.coverage_smooth, self.coverage_lattice)

    @property
    def printed(self) -> bool:
        return self.status != "withheld"

    def to_metrics(self) -> dict[str, object]:
        return {
            "coverage": self.coverage,
            "coverage_smooth": self.coverage_smooth,
            "coverage_lattice": self.coverage_lattice,
            "raw_coverage": self.raw_coverage,
            "scale_low": self.scale_low if math.isfinite(self.scale_low) else None,
            "scale_high": self.scale_high if math.isfinite(self.scale_high) else None,
            "status": self.status,
            "worlds": self.worlds,
            "reason": self.reason,
        }


def _needed_scale(
    estimate: float, low: float, high: float, t: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per world, the smallest factor on the half-widths that puts ``t`` inside."""
    d_low, d_high = estimate - low, high - estimate
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.where(d_low > 0, (estimate - t) / d_low, np.inf)
        above = np.where(d_high > 0, (t - estimate) / d_high, np.inf)
    out = np.where(t < estimate, below, np.where(t > estimate, above, 0.0))
    return np.asarray(out, dtype=np.float64)


def _side_factors(
    need: Mapping[str, NDArray[np.float64]],
    targets: Mapping[str, NDArray[np.float64]],
    est: float,
    level: float,
    skip: tuple[str, int] | None = None,
) -> tuple[float, float]:
    """Equal tails, as the bootstrap interval: each side's smallest factor that leaves at
    most ``a`` worlds of every truth beyond it, ``a`` the largest with (a + 1)/(W + 1) ≤
    (1 − level)/2 — so a *new* world of either truth falls beyond a side with probability
    at most (1 − level)/2 (exchangeability), not just the W worlds it was fitted on.
    ``skip`` = (truth, world): leave that world out (for the held-out coverage)."""
    out = []
    for below in (True, False):
        factor = 0.0
        for t, v in need.items():
            side_mask = (targets[t] < est) if below else (targets[t] > est)
            if skip is not None and skip[0] == t:
                side_mask = side_mask.copy()
                side_mask[skip[1]] = False
                size = v.size - 1
            else:
                size = v.size
            side = np.sort(v[side_mask])[::-1]
            allowed = max(math.floor(0.5 * (1.0 - level) * (size + 1) + 1e-9) - 1, 0)
            factor = max(factor, float(side[allowed]) if allowed < side.size else 0.0)
        out.append(factor)
    return out[0], out[1]


def _held_out_coverage(
    need: Mapping[str, NDArray[np.float64]],
    targets: Mapping[str, NDArray[np.float64]],
    est: float,
    level: float,
) -> dict[str, float]:
    """Per truth, the share of worlds the interval rescaled on the *other* worlds holds:
    a rescaled interval's coverage of the worlds it was rescaled on would flatter it."""
    out = {}
    for t, v in need.items():
        held = 0
        for w in range(v.size):
            s_low, s_high = _side_factors(need, targets, est, level, skip=(t, w))
            held += bool(v[w] <= (s_low if targets[t][w] < est else s_high) + 1e-9)
        out[t] = held / v.size
    return out


def check_interval(
    plugin: float,
    interval: Interval,
    errors: Mapping[str, NDArray[np.float64]],
    *,
    low: float = 0.80,
    high: float = 0.97,
    max_widening: float = 8.0,
) -> tuple[Interval, SelfCheck]:
    """Self-check one metric's interval and rescale it if its coverage is out of band.

    ``plugin`` is T(ẑ); ``errors[truth]`` the self-check worlds' T(ẑ_w) − T(z_w) for each
    of :data:`CHECK_TRUTHS`. World w's interval is the printed one moved by its plug-in's
    difference, so it holds the truth iff ``plugin − error`` lies in the printed interval.
    """
    level = interval.level
    est = interval.point
    targets = {t: plugin - e for t, e in errors.items()}
    need = {t: _needed_scale(est, interval.low, interval.high, v) for t, v in targets.items()}
    n_worlds = min(v.size for v in need.values())
    tol = 1e-9

    def coverage(s_low: float, s_high: float) -> dict[str, float]:
        out = {}
        for t, v in need.items():
            scale = np.where(targets[t] < est, s_low, s_high)
            out[t] = float(np.mean(v <= scale + tol))
        return out

    raw = coverage(1.0, 1.0)
    raw_min = min(raw.values())
    if low <= raw_min <= high:
        check = SelfCheck(raw["smooth"], raw["lattice"], raw_min, 1.0, 1.0, "ok", n_worlds)
        return interval, check
    s_low, s_high = _side_factors(need, targets, est, level)
    sides = (s_low, s_high)
    if not (math.isfinite(s_low) and math.isfinite(s_high)) or max(sides) > max_widening:
        widest = min(coverage(max_widening, max_widening).values())
        reason = (
            f"self-check coverage {raw_min:.2f} at this shape, "
            f"{widest:.2f} even {max_widening:g}× wider"
        )
        check = SelfCheck(
            raw["smooth"], raw["lattice"], raw_min, s_low, s_high, "withheld", n_worlds, reason
        )
        return interval, check
    after = _held_out_coverage(need, targets, est, level)
    lo = float(min(max(est - s_low * (est - interval.low), 0.0), 1.0))
    hi = float(min(max(est + s_high * (interval.high - est), 0.0), 1.0))
    status: Status = "widened" if max(sides) > 1.0 else "narrowed"
    check = SelfCheck(after["smooth"], after["lattice"], raw_min, s_low, s_high, status, n_worlds)
    return replace(interval, low=lo, high=hi), check


def _metric_errors(
    reps: BootstrapReplicates, name: MetricName, target: TargetLike
) -> NDArray[np.float64]:
    zt = np.sort(reps.z_true, axis=1)
    zr = np.sort(reps.z_refit, axis=1)
    refit: NDArray[np.float64] = _per_draw(zr, name, target)
    true: NDArray[np.float64] = _per_draw(zt, name, target)
    return np.asarray(refit - true, dtype=np.float64)


def checked_bootstrap(
    cells: Cells,
    *,
    model: str = "1pl",
    settings: FitSettings | None = None,
    scale: str = "panel",
    floor: NDArray[np.float64] | None = None,
    target: TargetLike = "uniform",
    level: float = 0.9,
    replicates: int = 200,
    worlds: int = 50,
    seed: int = 0,
    low: float = 0.80,
    high: float = 0.97,
    max_widening: float = 8.0,
    requested: int | None = None,
) -> tuple[MetricIntervals, NDArray[np.float64], BootstrapReplicates]:
    """Bootstrap intervals (:func:`summarize_bootstrap`) self-checked at ``cells``' shape.

    ``worlds`` per truth (0: no self-check). Returns the intervals (with ``self_check``),
    the fit's z and the bootstrap replicates. ``requested`` above ``replicates``: the run
    was cut by ``max_refit_cells`` and the intervals carry their Monte Carlo error.
    """
    s = settings if settings is not None else FitSettings()
    mp = fit_map(cells, model, s, floor)
    common = dict(model=model, settings=s, scale=scale, start=mp, floor=floor)
    reps = parametric_bootstrap(cells, replicates=replicates, seed=seed, **common)  # type: ignore[arg-type]
    out = summarize_bootstrap(reps.z_hat, reps.z_true, reps.z_refit, target=target, level=level)
    if requested is not None and requested > replicates:
        mc = monte_carlo_se(
            reps.z_hat, reps.z_true, reps.z_refit, target=target, level=level, seed=seed
        )
        out = replace(out, replicates_requested=int(requested), monte_carlo_se=mc)
    if worlds < 2:
        return out, reps.z_hat, reps
    checks = {
        truth: parametric_bootstrap(
            cells,
            replicates=worlds,
            seed=seed + 1 + i,  # other worlds than the bootstrap's own
            truth=_BOOTSTRAP_TRUTH[truth],  # type: ignore[arg-type]
            **common,  # type: ignore[arg-type]
        )
        for i, truth in enumerate(CHECK_TRUTHS)
    }
    zh = np.sort(reps.z_hat)[None, :]
    parts: dict[str, Interval] = {}
    found: dict[str, SelfCheck] = {}
    for name in METRIC_NAMES:
        plugin = float(_per_draw(zh, name, target)[0])
        errors = {t: _metric_errors(r, name, target) for t, r in checks.items()}
        parts[name], found[name] = check_interval(
            plugin, getattr(out, name), errors, low=low, high=high, max_widening=max_widening
        )
    out = replace(out, **parts, self_check=found)  # type: ignore[arg-type]
    return out, reps.z_hat, reps
