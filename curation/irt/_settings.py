"""Fit settings and priors: one frozen record, validated once, stored with every calibration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, PositiveInt

from curation.settings import Section

ModelType = Literal["1pl", "2pl"]
Method = Literal["map", "nuts"]
ScaleMethod = Literal["panel", "items", "logistic"]

MODELS: tuple[str, ...] = ("1pl", "2pl")
METHODS: tuple[str, ...] = ("map", "nuts")
SCALES: tuple[str, ...] = ("panel", "items", "logistic")
IDENTIFICATION = "mean ability 0 (sum-to-zero abilities)"
Z90 = 1.6448536269514722  # standard-normal 95th percentile: half-width of a 90% interval


@dataclass(frozen=True)
class Settings:
    """Everything that changes a fit's numbers.

    Priors (weak, so they only matter where the data say nothing, e.g. an item every
    model solves, which would otherwise drift to -inf): theta ~ N(0, theta_sd^2) on the
    sum-to-zero subspace, b ~ N(0, b_sd^2), log a ~ N(0, log_a_sd^2) (2PL; this prior
    also fixes the 2PL scale, since a and theta trade off).
    """

    theta_sd: float = 3.0
    b_sd: float = 3.0
    log_a_sd: float = 0.5
    # MAP (block Newton)
    max_iter: int = 200
    tol: float = 1e-8
    layout: Literal["auto", "dense", "sparse", "chunked"] = "auto"  # chunked: matrix-free
    # NUTS
    chains: int = 4
    warmup: int = 400  # chains start near the MAP point, so a short warmup suffices
    draws: int = 1000  # per chain; max R-hat over hundreds of items needs ~1000 to sit below 1.01
    target_accept: float = 0.8
    max_tree_depth: int = 10
    chain_method: Literal["auto", "parallel", "vectorized", "sequential"] = "auto"
    nuts_max_cells: int = 200_000  # above this NUTS is impractical: MAP + Laplace stands in

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Settings:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise ValueError(f"unknown fit setting(s) {unknown}; valid: {sorted(names)}")
        s = cls(**kwargs)
        for name in ("theta_sd", "b_sd", "log_a_sd", "tol", "target_accept"):
            if not float(getattr(s, name)) > 0:
                raise ValueError(f"setting {name} must be > 0, got {getattr(s, name)!r}")
        for name in ("max_iter", "chains", "warmup", "draws", "max_tree_depth", "nuts_max_cells"):
            if int(getattr(s, name)) < 1:
                raise ValueError(f"setting {name} must be >= 1, got {getattr(s, name)!r}")
        if not s.target_accept < 1:
            raise ValueError(f"setting target_accept must be < 1, got {s.target_accept!r}")
        if s.chain_method not in ("auto", "parallel", "vectorized", "sequential"):
            raise ValueError(f"unknown chain_method {s.chain_method!r}")
        return s

    def priors(self) -> dict[str, float]:
        return {"theta_sd": self.theta_sd, "b_sd": self.b_sd, "log_a_sd": self.log_a_sd}

    def to_dict(self, method: str) -> dict[str, Any]:
        """The settings that matter for ``method`` (what a calibration records)."""
        keys = ["theta_sd", "b_sd", "log_a_sd"]
        if method == "map":
            keys += ["max_iter", "tol"]
        else:
            keys += ["chains", "warmup", "draws", "target_accept", "max_tree_depth"]
        return {k: getattr(self, k) for k in keys}


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


class AnnotateSettings(Section):
    """params.yaml ``annotate``: which IRT model, how it is fitted, how z is anchored."""

    model: Literal["1pl", "2pl", "auto"] = "auto"
    """1pl | 2pl | auto (choose by BIC per benchmark)."""
    method: Literal["map", "nuts"] = "map"
    scale: Literal["panel", "items", "logistic"] = "panel"
    seed: NonNegativeInt = 0
    loo: bool = True
    """Leave-one-model-out stability of z."""
    laplace_draws: PositiveInt = 1000
    """Draws of b written beside a MAP fit (the gap intervals use them)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Priors and solver settings passed to the fit (see ``curation.irt`` Settings)."""
