"""Settings of full-score estimation from a subset (issue 28): one frozen model.

Meant to hang under ``subsets.estimation`` in params.yaml; every random step (the
Monte Carlo interval, the designs, the folds, the random baseline) takes ``seed``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, NonNegativeInt, PositiveInt, field_validator

from curation.settings import Section

DesignName = Literal["random", "anchor", "stratified", "information", "quantile", "adaptive"]
DESIGNS: tuple[str, ...] = (
    "random",
    "anchor",
    "stratified",
    "information",
    "quantile",
    "adaptive",
)
EstimatorName = Literal["irt", "weighted", "raw"]
ESTIMATORS: tuple[str, ...] = ("irt", "weighted", "raw")
Embedding = Literal["correctness", "irt"]


class EstimationSettings(Section):
    """How a full-benchmark score is estimated from a subset, and how that is validated."""

    level: Annotated[float, Field(gt=0, lt=1)] = 0.9
    """Level of every interval (score, theta, z, rank): 0.9 is the 5th to 95th percentile."""
    draws: Annotated[int, Field(ge=100, le=1_000_000)] = 2000
    """Monte Carlo draws of the full score (theta from its posterior, then the unseen
    items' outcomes)."""
    grid: Annotated[int, Field(ge=51, le=100_000)] = 401
    """Points of the theta grid the posterior is evaluated on (exact in 1-D)."""
    seed: NonNegativeInt = 0
    """Seed of the Monte Carlo draws, the designs, the folds and the random baseline."""
    design: DesignName = "stratified"
    """The design of the estimation subset: random | anchor (medoids of m clusters of
    items, weight = cluster size / N) | stratified (strata on b, proportional
    allocation) | information (greedy: Fisher information where the score moves, over
    the panel's theta range). stratified is the default because it held up over
    repeated fold splits and seeds (``benchmarks/bench_subsets.py --repeats 5``: below
    random-100 in 14 of 15 splits on the bundled benchmarks, intervals covering 91-97%);
    anchor and information won single seeds but covered 81% on GSM8K. Not ``adaptive``:
    an adaptive test is no fixed subset (``subsets.estimation.adaptive`` makes them)."""
    embedding: Embedding = "correctness"
    """anchor: cluster items on the panel's correctness (each item's success rates over
    the panel's models) or on the IRT prediction of them (matrix of p_i(theta_j))."""
    strata: PositiveInt | None = None
    """stratified: number of strata on b (unset: m, i.e. one item per stratum)."""
    folds: Annotated[int, Field(ge=2, le=1000)] = 5
    """Leave-models-out validation: folds over the panel's models."""
    random_draws: PositiveInt = 20
    """Validation: random subsets of the same size per fold (the baseline is the median
    over them)."""
    adaptive_start: PositiveInt = 20
    """Adaptive tests (design ``adaptive``): items every model answers first, stratified
    on b (the ``adaptive-<m>`` config's rows); the rest of the m are chosen for it."""
    adaptive_block: PositiveInt = 10
    """Adaptive tests: items chosen per step (``curate estimate --next``). Smaller blocks
    adapt more often; on the bundled benchmarks 10 did as well as 5, 40 worse."""

    max_test_models: PositiveInt = 150
    """Validation: at most this many held-out models are scored, a seeded sample spread
    over the folds in proportion (every fold is still calibrated without its whole
    group). Each scored model is one posterior per subset and random draw, so a
    leaderboard's thousands of models would be ~10^5 of them; the figures then carry
    the sample's standard error (``mae_se_pp``). The bundled panels (< 50 models) are
    scored whole."""

    @field_validator("design")
    @classmethod
    def _design_is_a_subset(cls, value: str) -> str:
        if value == "adaptive":
            raise ValueError(
                "an adaptive test is not a fixed subset: set subsets.estimation.adaptive "
                "(adaptive-<m> configs) and a fixed design here"
            )
        return value
