"""params.yaml ``mirt``: the joint multidimensional fit over several benchmarks.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

from curation.settings import Section


class MirtPriorSettings(Section):
    """``mirt.priors``: weak Gaussian priors of the joint fit (all > 0)."""

    theta_sd: PositiveFloat = 1.0
    a_sd: PositiveFloat = 0.25
    b_sd: PositiveFloat = 3.0


class MirtSettings(Section):
    """params.yaml ``mirt``: the joint multidimensional fit over several benchmarks."""

    benchmarks: list[str] | None = None
    """Benchmarks to pool (default: every benchmark in ``benchmarks``; at least two)."""
    d_max: PositiveInt = 4
    holdout: Annotated[float, Field(gt=0, lt=1)] = 0.1
    seed: NonNegativeInt = 0
    select: Literal["heldout", "bic"] = "heldout"
    se_rule: NonNegativeFloat = 1.0
    rotation: Literal["varimax", "oblimin", "none"] = "varimax"
    common_models: bool = True
    min_models_per_item: PositiveInt = 5
    drop_constant_items: bool = True
    priors: MirtPriorSettings = MirtPriorSettings()
    loading_share: Annotated[float, Field(ge=0, lt=1)] = 0.2
    n_flips: NonNegativeInt = 3
    n_flip_items: PositiveInt = 10
