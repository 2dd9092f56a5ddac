"""The default intervals cover: 90% bootstrap intervals hold the truth 85–95% of the time.

Estimand. For each simulated benchmark, the metric (Max Gap, Top-3 Sum, DDM to uniform) of
the *true* difficulties on the *true* scale anchors: z_i = clip((b_i − θ_min) / (θ_max −
θ_min), 0, 1), with θ_min and θ_max the weakest and strongest true abilities of the panel.
That is what the fitted z estimates — the fit re-derives both anchors from its own
abilities — so it is the value a 90% interval must contain in ~90% of benchmarks.

Worlds (:class:`curation.measure.World`): the truth is not the fit's model of it. Twelve
abilities spread evenly over [−3, 1.5] logits with N(0, 0.25²) jitter (so the extremes
that anchor the scale sometimes nearly tie), and 150 difficulties from a mixture: 30% in
a block below the weakest model (they clip to z = 0, like most of GSM8K) and 70% in a
bulk inside the panel — neither the fit's N(0, 3²) prior nor the bootstrap's smooth
prior family. Responses: 1 or 8 binomial trials per cell, all cells observed.

Per world: one data set, one 1PL MAP fit (the default annotate fit), 39 bootstrap
replicates (the stage uses 200; with the i/(R + 1) plotting position 39 replicates put
the 90% limits exactly on order statistics 2 and 38, so fewer replicates widen the
intervals' noise but not their coverage), one interval per metric. 250 worlds per trial
count: the coverage estimate's binomial SD is 0.019 at 0.90, so the 85–95% band is
±2.6 SD around a calibrated method (at seed 0 the six checked values are 0.876–0.928).
Deterministic (seed 0). CPU time ≈ 22 s per trial count on one core. With one trial per
cell the plug-in Max Gap is ~2.3× the truth here; Laplace draws and the textbook
(plug-in truth) bootstrap cover far less: ``benchmarks/bench_intervals.py``.
"""

from __future__ import annotations

import pytest

from curation.measure import World, coverage_experiment

N_WORLDS = 250
REPLICATES = 39


@pytest.mark.long(seconds=80)
@pytest.mark.parametrize("n_trials", [1, 8])
def test_bootstrap_intervals_cover_the_true_metrics(n_trials: int) -> None:
    world = World(n_models=12, n_items=150, n_trials=n_trials)
    result = coverage_experiment(
        world, n_worlds=N_WORLDS, replicates=REPLICATES, methods=("bootstrap",), seed=0
    )
    table = {r["metric"]: r for r in result.rows}
    for metric in ("max_gap", "top_3_sum", "ddm"):
        cov = table[metric]["coverage"]
        assert 0.85 <= cov <= 0.95, f"{metric} at {n_trials} trial(s): coverage {cov:.3f}"
    if n_trials == 1:
        # The plug-in is badly biased by the score lattice; the bootstrap point is not.
        gap = table["max_gap"]
        assert gap["plugin_bias"] > 0.5 * gap["truth_mean"]
        assert abs(gap["point_bias"]) < 0.25 * abs(gap["plugin_bias"])
