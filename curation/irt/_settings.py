"""Fit settings and priors: one frozen model, validated once, stored with every calibration.

``FitSettings`` is both the ``annotate.settings`` section of params.yaml and what the
fitting code reads; ``curation.irt.fit(..., **settings)`` builds one from its keywords.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from curation.settings import Section

ModelType = Literal["1pl", "2pl", "3pl"]
Method = Literal["map", "nuts"]
ScaleMethod = Literal["panel", "items", "logistic"]

MODELS: tuple[str, ...] = ("1pl", "2pl", "3pl")
METHODS: tuple[str, ...] = ("map", "nuts")
SCALES: tuple[str, ...] = ("panel", "items", "logistic")
IDENTIFICATION = "mean ability 0 (sum-to-zero abilities)"
Z90 = 1.6448536269514722  # standard-normal 95th percentile: half-width of a 90% interval


class FitSettings(Section):
    """``annotate.settings``: everything that changes a fit's numbers (priors, solvers).

    Priors (weak, so they only matter where the data say nothing, e.g. an item every
    model solves, which would otherwise drift to -inf): theta ~ N(0, theta_sd^2) on the
    sum-to-zero subspace, b ~ N(0, b_sd^2), log a ~ N(0, log_a_sd^2) (2PL/3PL). The
    2PL/3PL scale (a and theta trade off) is identified by mean log a = 0, so no prior
    can shrink the abilities against the discriminations however many models there are
    (:func:`curation.irt._map.identify_scale`). A 3PL floor the item records do not give
    (unknown number of options) is one shared c ~ Beta with mean ``c_mean`` and
    ``c_strength`` pseudo-observations. A calibration records the ones that mattered
    for its method (:meth:`to_dict`).
    """

    theta_sd: PositiveFloat = 3.0
    """Prior sd of the abilities theta."""
    b_sd: PositiveFloat = 3.0
    """Prior sd of the difficulties b."""
    log_a_sd: PositiveFloat = 0.5
    """Prior sd of log discrimination around the items' geometric mean of 1 (2PL/3PL)."""
    c_mean: Annotated[float, Field(gt=0, lt=1)] = 0.2
    """3PL: prior mean of the shared guessing floor of items whose options are unknown."""
    c_strength: PositiveFloat = 10.0
    """3PL: that Beta prior's alpha + beta (pseudo-observations); both shapes must be >= 1
    (a log-concave prior: the floor's search then has one mode)."""
    max_iter: PositiveInt = 200
    """MAP (block Newton): iteration cap."""
    tol: PositiveFloat = 1e-8
    """MAP: convergence tolerance (largest Newton step)."""
    layout: Literal["auto", "dense", "sparse", "chunked"] = "auto"
    """MAP: how the matrix is held (chunked: matrix-free, for leaderboard sizes)."""
    chains: PositiveInt = 4
    """NUTS: chains."""
    warmup: PositiveInt = 400
    """NUTS: warmup steps per chain (chains start near the MAP point, so short suffices)."""
    draws: PositiveInt = 1000
    """NUTS: draws per chain (max R-hat over hundreds of items needs ~1000 to sit below 1.01)."""
    target_accept: Annotated[float, Field(gt=0, lt=1)] = 0.8
    """NUTS: target acceptance probability."""
    max_tree_depth: PositiveInt = 10
    """NUTS: maximum tree depth."""
    chain_method: Literal["auto", "parallel", "vectorized", "sequential"] = "auto"
    """NUTS: how chains run (auto: parallel when there is a device per chain, else
    vectorized)."""
    nuts_max_cells: PositiveInt = 200_000
    """Above this many cells NUTS is impractical: MAP + Laplace stands in (and says so)."""

    @field_validator("c_strength")
    @classmethod
    def _log_concave(cls, value: float, info: ValidationInfo) -> float:
        mean = info.data.get("c_mean")
        if mean is not None and min(mean, 1.0 - mean) * value < 1.0:
            raise ValueError(
                f"c_strength {value} with c_mean {mean} gives a Beta shape below 1 "
                f"(need c_strength >= {1.0 / min(mean, 1.0 - mean):.6g})"
            )
        return value

    @classmethod
    def of(cls, settings: FitSettings | None = None, **overrides: Any) -> FitSettings:
        """``settings`` (default: the defaults) with keyword ``overrides``: the keyword form
        of :func:`curation.irt.fit`. A name that is not a setting, or a value out of
        range, is a ValueError naming it."""
        unknown = sorted(set(overrides) - set(cls.model_fields))
        if unknown:
            raise ValueError(f"unknown fit setting(s) {unknown}; valid: {sorted(cls.model_fields)}")
        if settings is not None and not overrides:
            return settings
        values = {**(settings.model_dump() if settings is not None else {}), **overrides}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = ".".join(map(str, error["loc"]))
            message = str(error["msg"]).removeprefix("Value error, ")
            raise ValueError(f"fit setting {name}: {message} (got {error['input']!r})") from None

    def priors(self) -> dict[str, float]:
        """The prior sds (theta, b, log a)."""
        return {"theta_sd": self.theta_sd, "b_sd": self.b_sd, "log_a_sd": self.log_a_sd}

    def to_dict(self, method: str, model: str = "1pl") -> dict[str, Any]:
        """The settings that matter for ``method`` and ``model`` (what a calibration records)."""
        keys = ["theta_sd", "b_sd", "log_a_sd"]
        if model == "3pl":
            keys += ["c_mean", "c_strength"]
        if method == "map":
            keys += ["max_iter", "tol"]
        else:
            keys += ["chains", "warmup", "draws", "target_accept", "max_tree_depth"]
        return {k: getattr(self, k) for k in keys}


class ModelChoiceSettings(Section):
    """``annotate.choice``: how ``model: auto`` chooses between 1PL, 2PL and 3PL.

    Every observed cell is held out once (cell-wise K-fold, seeded by ``annotate.seed``),
    each candidate is fitted on the rest and scored by the mean log likelihood of the
    cells it never saw; the simplest within ``se_rule`` paired standard errors of the
    best is chosen (BIC is reported beside it). A candidate whose full fit is degenerate
    (the checks below) is set aside and the choice is made among the others, with the
    reason in the metrics and the stage's output.
    """

    folds: Annotated[int, Field(ge=2, le=20)] = 5
    """Folds of the cell-wise K-fold."""
    max_cells: PositiveInt = 2_000_000
    """Above this many cells the held-out comparison uses a seeded random subset of the
    models (all their cells, up to this many): the folds cost 5 fits per candidate, and
    a leaderboard's thousands of models tell the candidates apart long before the last.
    The full fits (BIC, the checks, the chosen model) use every cell up to
    ``full_fits_max_cells``."""
    full_fits_max_cells: PositiveInt = 10_000_000
    """Above this many cells the candidates' fits for BIC and the checks are made on the
    held-out comparison's model subset too (``max_cells``), and only the chosen model is
    fitted on every cell: at 2,000 x 20,000 a 3PL's full fit costs several 2PL fits,
    and the choice and the checks are settled long before the last model. The metrics'
    ``choice`` record then says ``fits_on`` (models and cells the BIC and checks saw)."""
    se_rule: NonNegativeFloat = 1.0
    """The simplest candidate within this many paired standard errors of the best (the
    errors cluster-robust over items and models: their cells share fitted parameters)."""
    min_rank_corr: Annotated[float, Field(ge=-1, le=1)] = 0.9
    """Degenerate if the abilities' Spearman correlation with the 1PL's is below this (the
    1PL ability orders models as their accuracy does on a complete matrix, and as their
    difficulty-adjusted accuracy with missing cells)."""
    max_a: PositiveFloat = 10.0
    """Degenerate if a discrimination exceeds this: the bound no chosen model's a passes
    (the scale is that of an average item, mean log a = 0)."""
    min_span_ratio: Annotated[float, Field(gt=0, le=1)] = 0.5
    """Degenerate (abilities squeezed) if the central 90% range of the abilities is below
    this share of the 1PL's."""
    min_floor: Annotated[float, Field(ge=0, lt=1)] = 0.01
    """A 3PL whose every floor is below this (e.g. a shared floor estimated near 0 on a
    matrix with no guessing) is the 2PL, not a guessing model: it is set aside."""


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


class AnnotateSettings(Section):
    """params.yaml ``annotate``: which IRT model, how it is fitted, how z is anchored."""

    model: Literal["1pl", "2pl", "3pl", "auto"] = "auto"
    """1pl | 2pl | 3pl (a guessing floor: 1/options from the item records, one shared
    floor estimated where they do not say) | auto (chosen per benchmark by held-out
    likelihood, see ``choice``; 3PL is a candidate when some item can be guessed)."""
    choice: ModelChoiceSettings = ModelChoiceSettings()
    """How ``auto`` chooses the model (``curation.irt.ModelChoiceSettings``)."""
    method: Literal["map", "nuts"] = "map"
    """map: posterior mode, Laplace intervals; nuts: the full posterior (numpyro; MAP
    stands in above ``settings.nuts_max_cells``)."""
    scale: Literal["panel", "items", "logistic"] = "panel"
    """The logit -> z map: panel (0 = the weakest model's ability, 1 = the strongest's),
    items (min-max over the unbounded items), logistic (never clips)."""
    seed: NonNegativeInt = 0
    """Seed of the NUTS chains and of the Laplace draws."""
    loo: bool = True
    """Leave-one-model-out stability of z."""
    loo_exact_max_models: PositiveInt = 200
    """Up to this many models every leave-one-out fit is an exact (warm-started) refit;
    above it each is approximated from the full fit and only the ``loo_exact_top`` most
    influential are refitted (the mode and the measured error go into the metrics)."""
    loo_exact_top: NonNegativeInt = 20
    """Models refitted exactly in the approximate mode: those whose removal moves z most."""
    loo_exact_max_cells: PositiveInt = 30_000_000
    """Budget of those exact refits, in cells refitted: at most ``loo_exact_max_cells //
    cells`` of them (all 20 at 4,000 x 250; none at 2,000 x 20,000, where one cold refit
    costs as much as the whole fit and the approximation's error is the tested 0.02)."""
    loo_approx_max_work: PositiveInt = 5_000_000_000
    """Budget of the approximate mode, in dropped models x models x items (its cost):
    above it a seeded random sample of models is dropped (all 4,000 at 4,000 x 250; 125
    at 2,000 x 20,000) and the metrics say ``sampled`` with ``n_dropped``."""
    laplace_draws: PositiveInt = 1000
    """Draws of b written beside a MAP fit (the gap intervals use them)."""
    settings: FitSettings = FitSettings()
    """Priors and solver settings of the fit (``curation.irt.FitSettings``)."""
