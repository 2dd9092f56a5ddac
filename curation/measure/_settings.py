"""params.yaml ``gaps``: DDM, gaps, certificates, blind intervals and their intervals.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import (
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from curation.settings import Section, TargetSpec, Unit, default_targets

BENCHMARK_PREFIX = "benchmark:"
"""A gaps target ``benchmark:<name>`` is another benchmark's z (a sample target)."""


class ThresholdSettings(Section):
    """``gaps.thresholds``: when a benchmark is flagged (SPEC §2)."""

    ddm: Unit = 0.10
    """A benchmark whose DDM to the primary target exceeds this is flagged."""
    max_gap: Unit = 0.10
    """A benchmark whose widest gap (ends of [0, 1] included) exceeds this is flagged."""
    top_5_sum: Annotated[float, Field(ge=0, le=5)] = 0.30
    """A benchmark whose five widest gaps together exceed this is flagged."""


MIN_REPLICATES = 10
"""The fewest bootstrap replicates ``gaps.intervals.max_refit_cells`` leaves a benchmark:
a 90% interval from fewer is the range of a handful of errors."""


MIN_CHECK_WORLDS = 10
"""The fewest self-check worlds per truth (and panel refits) worth running: fewer leave
a coverage figure whose own binomial error is wider than the band it is judged by."""


class SelfCheckSettings(Section):
    """``gaps.intervals.self_check``: each benchmark checks its own bootstrap intervals.

    The stage simulates ``worlds`` data sets from its fit on its own design (models,
    items, trials, missing cells) for each of two truths the bootstrap does not assume — a
    lattice truth (the fit itself: on single-trial data its difficulties sit at the score
    levels) and a smooth one (the fit jittered by its standard errors) — refits each,
    and counts how often the interval, carried to that world, holds the world's truth
    (:mod:`curation.measure._selfcheck`). The lower of the two coverages is printed
    beside the interval; one outside [``low``, ``high``] is rescaled until both reach the
    nominal level, or withheld when that needs more than ``max_widening``."""

    worlds: NonNegativeInt = 50
    """Simulated data sets per truth (each one refit); 0 turns the self-check off."""
    low: Unit = 0.80
    """An interval whose self-check coverage is below this is widened (or withheld)."""
    high: Unit = 0.97
    """An interval whose self-check coverage is above this is narrowed to the nominal level."""
    max_widening: Annotated[float, Field(ge=1)] = 8.0
    """Largest factor either side of an interval may be scaled by; beyond it the interval
    is withheld and the report says why."""

    @model_validator(mode="after")
    def _band(self) -> SelfCheckSettings:
        if not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        return self


class PanelUncertaintySettings(Section):
    """``gaps.intervals.panel``: what another panel of as many similar models would give."""

    replicates: NonNegativeInt = 50
    """Panels of the benchmark's models drawn with replacement, each refitted (0: off)."""
    loo_max_models: NonNegativeInt = 60
    """Leave each model out in turn (one refit per model) when the panel has at most this
    many models (the leave-one-out range of each metric and its most influential model)."""


class IntervalSettings(Section):
    """``gaps.intervals``: where the intervals of DDM and the gap metrics come from."""

    method: Literal["bootstrap", "draws", "none"] = "bootstrap"
    """bootstrap: parametric bootstrap of the MAP fit (calibrated on simulation); draws: the
    annotate stage's draws (NUTS posterior, or Laplace draws for MAP, which do not cover);
    none: no intervals. A NUTS fit always uses its posterior draws."""
    replicates: Annotated[int, Field(ge=2)] = 200
    """Bootstrap replicates per benchmark (each is one refit of the whole matrix)."""
    seed: NonNegativeInt = 0
    """Seed of the bootstrap's simulated responses."""
    max_refit_cells: PositiveInt = 20_000_000
    """Cap on one benchmark's bootstrap work: replicates × observed cells (every replicate
    refits the whole matrix; a 4,000 × 250 leaderboard takes ~1 s a refit). A benchmark
    over it gets ``max_refit_cells // cells`` replicates (at least
    :data:`MIN_REPLICATES`), and the report states how many and the Monte Carlo error of
    the interval ends. The bundled benchmarks (~50,000 cells) keep every replicate."""

    self_check: SelfCheckSettings = SelfCheckSettings()
    """The interval's own coverage at the benchmark's shape; keys left out keep defaults."""
    panel: PanelUncertaintySettings = PanelUncertaintySettings()
    """Panel uncertainty (resampled and leave-one-out panels); keys left out keep defaults."""

    def replicates_for(self, n_cells: int) -> int:
        """The replicates a benchmark of ``n_cells`` observed cells gets (see
        ``max_refit_cells``)."""
        budget = self.max_refit_cells // max(n_cells, 1)
        return min(self.replicates, max(MIN_REPLICATES, budget))

    def budget_for(self, n_cells: int, n_models: int) -> RefitBudget:
        """How many refits each part of a benchmark's interval work gets within
        ``max_refit_cells``: the bootstrap first (:meth:`replicates_for`), then the
        self-check and the panel bootstrap from what is left; a part the rest cannot pay
        :data:`MIN_CHECK_WORLDS` refits for is skipped (0). Leave-one-out is bounded by
        ``panel.loo_max_models`` instead (at most that many refits of a panel that small)."""
        cells = max(n_cells, 1)
        main = self.replicates_for(cells)
        left = max(self.max_refit_cells // cells - main, 0)
        worlds = min(self.self_check.worlds, left // 2)
        worlds = worlds if worlds >= MIN_CHECK_WORLDS else 0
        left -= 2 * worlds
        panel = min(self.panel.replicates, left)
        panel = panel if panel >= MIN_CHECK_WORLDS else 0
        loo = 3 <= n_models <= self.panel.loo_max_models
        return RefitBudget(main, worlds, panel, loo)


@dataclass(frozen=True)
class RefitBudget:
    """Refits per part of one benchmark's interval work (:meth:`IntervalSettings.budget_for`)."""

    replicates: int
    worlds: int
    """Self-check worlds per truth (0: skipped)."""
    panel: int
    """Panel-bootstrap refits (0: skipped)."""
    loo: bool
    """Leave-one-model-out refits run."""


class GapsSettings(Section):
    """params.yaml ``gaps``: DDM, gaps, certificates and blind intervals."""

    targets: list[TargetSpec] = Field(default_factory=default_targets, min_length=1)
    """The first is primary (flags, certificates); also "benchmark:<name>"."""
    lipschitz: PositiveFloat = 1.0
    """L, the assumed Lipschitz constant in z of two models' score difference: a rank
    certificate holds when the benchmark's gap between them exceeds L x DDM (SPEC §2)."""
    blind_width: Annotated[float, Field(gt=0, le=1)] = 0.10
    """Width w of the progress whose blind intervals are reported (Theorem 2.3)."""
    k_gaps: PositiveInt = 5
    """How many of the widest gaps are listed (report, strip plot)."""
    n_pairs: NonNegativeInt = 5
    """Certificates for the leaderboard neighbours among the top ``n_pairs + 1`` models."""
    level: Annotated[float, Field(gt=0, lt=1)] = 0.9
    """Credible level of the intervals from the draws of z."""
    thresholds: ThresholdSettings = ThresholdSettings()
    """When a benchmark is flagged; keys left out keep their defaults."""
    intervals: IntervalSettings = IntervalSettings()
    """Where the intervals come from; keys left out keep their defaults."""
    resolution_floor: bool = True
    """Gaps no wider than one score step are not flagged; false treats z as continuous."""

    @field_validator("targets")
    @classmethod
    def _targets_parse(cls, value: list[TargetSpec]) -> list[TargetSpec]:
        """Each target is one the stage can build (``curation.measure.parse_target``, the
        one reader of target specs), or ``benchmark:<name>``."""
        from curation.measure._targets import parse_target

        for i, spec in enumerate(value):
            if isinstance(spec, str) and spec.startswith(BENCHMARK_PREFIX):
                if not spec.removeprefix(BENCHMARK_PREFIX):
                    raise ValueError(f"[{i}]: name the benchmark: benchmark:<name>")
                continue
            try:
                parse_target(spec)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"[{i}]: {exc}") from None
        return value

    def target_benchmarks(self) -> list[str]:
        """The benchmarks named by ``benchmark:<name>`` targets (their z is the target)."""
        return [
            spec.removeprefix(BENCHMARK_PREFIX)
            for spec in self.targets
            if isinstance(spec, str) and spec.startswith(BENCHMARK_PREFIX)
        ]

    def unknown_benchmarks(self, configured: Collection[str]) -> str | None:
        """``.targets: why`` when a ``benchmark:<name>`` target names no configured
        benchmark (ParamsFile runs this, so ``curate validate`` refuses what the stage
        would)."""
        missing = [b for b in self.target_benchmarks() if b not in configured]
        if missing:
            return f".targets: no benchmark {missing[0]!r} (configured: {', '.join(configured)})"
        return None
