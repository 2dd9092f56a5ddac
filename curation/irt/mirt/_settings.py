"""params.yaml ``mirt``: the joint multidimensional fit over several benchmarks.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from curation.settings import Section


class MirtPriorSettings(Section):
    """``mirt.priors``: theta ~ N(0, theta_sd^2 I), a ~ N(0, a_sd^2 I), b ~ N(0, b_sd^2).

    theta and a enter the likelihood only through theta a^T, and at the optimum the two
    penalties balance, so together they act as a nuclear-norm penalty of weight
    1 / (theta_sd * a_sd) on the models x items logit matrix (their ratio only sets the
    raw scale, which ``standardise`` removes). The default weight 4 shrinks noise
    dimensions (a pure-noise 40 x 600 binary matrix has a top singular value of the
    residual gradient of roughly 0.45 (sqrt(40) + sqrt(600)) = 14) but barely touches real
    ones; on simulated data and on the bundled benchmarks it is close to the held-out
    optimum.
    """

    theta_sd: PositiveFloat = 1.0
    """Prior sd of each ability coordinate."""
    a_sd: PositiveFloat = 0.25
    """Prior sd of each loading."""
    b_sd: PositiveFloat = 3.0
    """Prior sd of the item intercepts."""


class MirtSettings(Section):
    """params.yaml ``mirt``: the joint multidimensional fit over several benchmarks."""

    benchmarks: list[str] | None = None
    """Benchmarks to pool, fitted as listed (at least two, each one of ``benchmarks``);
    unset: every benchmark with responses, those sharing no models left out."""
    d_max: PositiveInt = 4
    """Fit d = 1..d_max dimensions."""
    holdout: Annotated[float, Field(gt=0, lt=1)] = 0.1
    """Share of observed cells held out to choose d."""
    selection_max_cells: PositiveInt = 500_000
    """Budget of the choice of d (2 × d_max fits): a pool with more observed cells
    chooses d on a seeded sample of its models holding about this many cells, then fits
    only the chosen d (and d = 2) on every model; the report states the sample. The
    bundled pool (~130,000 cells) is chosen on whole."""
    seed: NonNegativeInt = 0
    """Seed of the held-out split."""
    select: Literal["heldout", "bic"] = "heldout"
    """How d is chosen: held-out log-likelihood, or BIC."""
    se_rule: NonNegativeFloat = 1.0
    """The smallest d within this many paired SEs of the best held-out fit."""
    rotation: Literal["varimax", "oblimin", "none"] = "varimax"
    """Rotation of the loadings: varimax (orthogonal), oblimin (oblique) or none."""
    common_models: bool = True
    """True: only models that answered every benchmark; false: all models, missing
    blocks allowed (abilities extrapolated)."""
    min_models_per_item: PositiveInt = 5
    """Items answered by fewer models are dropped (they say nothing about dimensions)."""
    drop_constant_items: bool = True
    """Drop items every model solved or every model failed."""
    priors: MirtPriorSettings = MirtPriorSettings()
    """Weak Gaussian priors of the fit (they also shrink noise dimensions)."""
    loading_share: Annotated[float, Field(ge=0, lt=1)] = 0.2
    """A benchmark loads on a dimension holding at least this share of its squared mean
    loading."""
    n_flips: NonNegativeInt = 3
    """At most this many rank flips (model pairs ordered differently by two benchmarks)
    in the report."""
    n_flip_items: PositiveInt = 10
    """Items shown per flip."""

    @field_validator("benchmarks")
    @classmethod
    def _a_pool_of_two(cls, value: list[str] | None) -> list[str] | None:
        # a pool the user listed must be fittable; the default pool of a one-benchmark
        # project is skipped by the stage (with its reason) instead of failing `dvc repro`
        if value and len(value) < 2:
            raise ValueError(f"a joint fit needs at least two benchmarks, got {value}")
        return value

    def pool(self, configured: Collection[str]) -> list[str]:
        """The benchmarks to pool: those listed, else every ``configured`` one."""
        return list(self.benchmarks or configured)

    def check_pool(self, configured: Collection[str]) -> None:
        """A listed benchmark that is not ``configured`` is an error naming it (ParamsFile
        runs this, so ``curate validate`` refuses what the stage would)."""
        missing = [b for b in self.pool(configured) if b not in configured]
        if missing:
            raise ValueError(f"mirt.benchmarks: not configured in `benchmarks`: {missing}")
