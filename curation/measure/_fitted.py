"""A stored fit, reloaded: the glue between the annotate outputs and the measures.

The gaps stage and the dataset card both need more than the items' z: the responses
(their design — which cells, how many trials), the calibration (abilities, scale, fit
settings) and the items' b (and a). This module loads them into one checked record and
derives what needs all three: the axis :class:`Resolution` and the bootstrap intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from curation.irt import (
    Calibration,
    Cells,
    FitSettings,
    encode,
    leave_one_model_out_z,
    panel_bootstrap,
)
from curation.measure._panel import PanelUncertainty, panel_uncertainty
from curation.measure._posterior import METRIC_NAMES, MetricIntervals, _per_draw
from curation.measure._resolution import Resolution, resolution_of_fit
from curation.measure._selfcheck import checked_bootstrap
from curation.measure._targets import TargetLike

_Z_TOL = 1e-6
"""How closely a refit must reproduce the stored z (MAP fits are deterministic)."""


@dataclass(frozen=True)
class FittedBenchmark:
    """Encoded responses, the calibration and the items' estimates, in ``cells.items`` order."""

    cells: Cells
    calibration: Calibration
    items: tuple[str, ...]
    b: np.ndarray
    a: np.ndarray | None
    z: np.ndarray
    c: np.ndarray | None = None
    """3PL: the floors the fit used (``b`` is then the axis location)."""
    b_curve: np.ndarray | None = None
    """3PL: the item curves' own locations."""

    @classmethod
    def load(
        cls, responses: pl.DataFrame, calibration: Calibration, difficulty: pl.DataFrame
    ) -> FittedBenchmark:
        """Align the difficulty table (item, b, a, z; c and b_curve for 3PL) with the
        encoded responses.

        Raises ValueError if they name different items: the card or report would
        otherwise describe a different benchmark than the one measured.
        """
        cells = encode(responses)
        index = {item: i for i, item in enumerate(difficulty["item"].to_list())}
        if set(index) != set(cells.items):
            missing = sorted(set(cells.items) ^ set(index))[:5]
            raise ValueError(
                f"difficulty table and responses name different items (e.g. {missing}); "
                "re-run annotate"
            )
        order = np.array([index[i] for i in cells.items], dtype=np.int64)

        def column(name: str) -> np.ndarray | None:
            if name not in difficulty.columns or difficulty[name].null_count():
                return None
            return difficulty[name].to_numpy()[order].astype(np.float64)

        a = column("a") if calibration.model != "1pl" else None
        three = calibration.model == "3pl"
        c, b_curve = (column("c"), column("b_curve")) if three else (None, None)
        if three and (a is None or c is None or b_curve is None):
            raise ValueError("a 3PL difficulty table needs a, c and b_curve; re-run annotate")
        return cls(
            cells=cells,
            calibration=calibration,
            items=cells.items,
            b=difficulty["b"].to_numpy()[order].astype(np.float64),
            a=a,
            z=difficulty["z"].to_numpy()[order].astype(np.float64),
            c=c,
            b_curve=b_curve,
        )

    @property
    def settings(self) -> FitSettings:
        """The fit settings stored with the calibration (priors, solver)."""
        stored = self.calibration.settings.items()
        return FitSettings.of(**{k: v for k, v in stored if k in FitSettings.model_fields})

    @property
    def method(self) -> str:
        return str(self.calibration.settings.get("method", "map"))

    def resolution(self) -> Resolution:
        return resolution_of_fit(self.cells, self.calibration, self.b, self.a, self.c, self.b_curve)

    def bootstrap(
        self,
        *,
        target: TargetLike = "uniform",
        level: float = 0.9,
        replicates: int = 200,
        seed: int = 0,
        requested: int | None = None,
        worlds: int = 0,
        band: tuple[float, float] = (0.80, 0.97),
        max_widening: float = 8.0,
    ) -> tuple[MetricIntervals, np.ndarray]:
        """Bootstrap intervals of the metrics, and the z they are about (``items`` order).

        Only for MAP fits: the bootstrap refits by MAP, so its point must be the MAP z.
        The refit must reproduce the stored z, or the stored fit came from other
        settings or data and the intervals would describe something else. ``requested``
        above ``replicates``: the run was cut short (``gaps.intervals.max_refit_cells``),
        and the intervals carry both counts and their Monte Carlo error. ``worlds`` > 0:
        each interval self-checked at this shape (:mod:`curation.measure._selfcheck`).
        """
        if self.method != "map":
            raise ValueError(
                f"the parametric bootstrap repeats a MAP fit; this calibration used {self.method}"
            )
        out, z_hat, _ = checked_bootstrap(
            self.cells,
            model=self.calibration.model,
            settings=self.settings,
            scale=self.calibration.scale["method"],
            floor=self.c,
            target=target,
            level=level,
            replicates=replicates,
            worlds=worlds,
            seed=seed,
            low=band[0],
            high=band[1],
            max_widening=max_widening,
            requested=requested,
        )
        worst = float(np.max(np.abs(z_hat - self.z)))
        if worst > _Z_TOL:
            raise ValueError(
                f"refitting the responses gives z up to {worst:.2g} away from the stored "
                "difficulties; re-run annotate"
            )
        return out, z_hat

    def panel(
        self,
        *,
        target: TargetLike = "uniform",
        level: float = 0.9,
        replicates: int = 50,
        loo: bool = True,
        seed: int = 0,
        skipped: str | None = None,
        within: MetricIntervals | None = None,
    ) -> PanelUncertainty:
        """What another panel of as many similar models would give (:mod:`._panel`):
        ``replicates`` resampled panels (0: none) and, with ``loo``, each model left out.
        ``within``: the within-panel intervals, whose bias correction (estimate minus
        plug-in) every resampled panel's figure gets too."""
        shifts: dict[str, float] | None = None
        if within is not None:
            zh = np.sort(self.z)[None, :]
            shifts = {
                str(name): float(getattr(within, name).point)
                - float(_per_draw(zh, name, target)[0])
                for name in METRIC_NAMES
            }
        common = dict(
            model=self.calibration.model,
            settings=self.settings,
            scale=self.calibration.scale["method"],
            floor=self.c,
        )
        resampled = (
            panel_bootstrap(self.cells, replicates=replicates, seed=seed, **common)
            if replicates >= 2
            else None
        )
        out_loo = leave_one_model_out_z(self.cells, **common) if loo else None
        return panel_uncertainty(
            self.z,
            self.cells.models,
            resampled=resampled,
            loo=out_loo,
            target=target,
            level=level,
            skipped=skipped,
            shifts=shifts,
        )
